"""Where each command of a line runs: the one model of ``cd``, ``pushd`` and ``popd``.

``placed(commands, start)`` yields every simple command of a line (as the reader gives
them, in order) with each directory it may run in; ``cwd_after`` is where the line's
own shell is left. Both the scope's write check and the git-write detector read the
working directory through this, so they agree on it.

The rules:

- ``cd DIR`` moves to ``DIR`` (relative to where the shell is); ``cd -`` goes back to
  the directory the last move left (``OLDPWD``; not known before the line's first
  move); ``pushd DIR`` moves and remembers where it came from, ``pushd`` alone swaps
  the two, ``popd`` goes back. ``cd`` alone goes home, which the reader does not model:
  the directory is then not known.
- A move counts for certain only in the line's own shell (not inside ``( )``, a
  substitution, a pipeline, a background job or a nested shell), from a single known
  directory, to a target the caller accepts (``definite``; the scope's check asks the
  file system whether the directory exists, since a failed ``cd`` leaves the shell
  where it was). Any other move *may or may not* apply to what follows — a subshell
  ends somewhere the reader does not track, and ``a && cd b || c`` depends on ``a`` —
  so its target is added to the places later commands may run in, never substituted.
- A nested shell (``bash -c '...'``, ``sudo sh -c ...``) starts where the shell that
  runs it is; its moves stay inside it (commands are told apart by their
  ``wrappers``).
- A directory the reader cannot know (an expansion, ``~``, a wrapper that moves the
  command such as ``env -C``) is ``None``. Callers decide what an unknown directory
  means for them: the write check refuses to guess, the git-write detector prefers a
  false negative.

``target`` computes a ``cd``'s destination from the command and the directory it runs
in; the default joins a single literal argument, and the scope's check passes one that
also expands a glob and honours ``CDPATH``. Places are ``PurePath`` values (a ``Path``
start gives ``Path`` places); nothing here touches the file system.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Generic, TypeVar

from seawall.shell.model import SimpleCommand

__all__ = ["MOVES", "cwd_after", "literal_target", "placed"]

P = TypeVar("P", bound=PurePath)

MOVES = frozenset({"cd", "pushd", "popd"})
"""The commands that move a shell's working directory."""


def literal_target(cmd: SimpleCommand, current: P | None) -> P | None:
    """``cd DIR``'s destination when ``DIR`` is one literal word: ``current / DIR`` (an
    absolute ``DIR`` as it is); None when it cannot be known here."""
    args = [a for a in cmd.argv[1:] if not a.startswith("-")]
    if current is None or len(args) != 1 or any(cmd.dynamic[1:]) or any(cmd.globs[1:]):
        return None
    if args[0].startswith("~"):
        return None
    return current / args[0]


@dataclass(slots=True)
class _Shell(Generic[P]):
    """One shell's directory: where it may be, where it was, what ``pushd`` keeps."""

    here: list[P | None]
    previous: P | None = None
    stack: list[P | None] = field(default_factory=list)

    def copy(self) -> _Shell[P]:
        return _Shell(list(self.here), self.previous, list(self.stack))


def placed(
    commands: Iterable[SimpleCommand],
    start: P,
    *,
    target: Callable[[SimpleCommand, P | None], P | None] = literal_target,
    definite: Callable[[P], bool] = lambda _: True,
) -> Iterator[tuple[SimpleCommand, tuple[P | None, ...]]]:
    """Each command with every directory it may run in (the most recently entered last;
    a move is given where it starts, which is where its redirections are opened); see
    the module's rules."""
    shells: dict[tuple[str, ...], _Shell[P]] = {(): _Shell([start])}
    for cmd in commands:
        shell = _shell_of(shells, cmd.wrappers)
        places: tuple[P | None, ...] = (
            (None,) if cmd.elsewhere else tuple(dict.fromkeys(shell.here))
        )
        yield cmd, places  # a move's own redirections are opened where it starts
        if cmd.name in MOVES and not cmd.dynamic_name:
            _move(shell, cmd, target, definite)


def cwd_after(
    commands: Iterable[SimpleCommand],
    start: P,
    *,
    target: Callable[[SimpleCommand, P | None], P | None] = literal_target,
    definite: Callable[[P], bool] = lambda _: True,
) -> tuple[P | None, ...]:
    """Every directory the line's own shell may be in once the line has run."""
    shells: dict[tuple[str, ...], _Shell[P]] = {(): _Shell([start])}
    for cmd in commands:
        if cmd.name in MOVES and not cmd.dynamic_name:
            _move(_shell_of(shells, cmd.wrappers), cmd, target, definite)
    return tuple(dict.fromkeys(shells[()].here))


def _shell_of(shells: dict[tuple[str, ...], _Shell[P]], wrappers: tuple[str, ...]) -> _Shell[P]:
    """The shell that runs a command nested in ``wrappers``: a nested shell starts as a
    copy of the nearest enclosing one."""
    shell = shells.get(wrappers)
    if shell is None:
        depth = len(wrappers) - 1
        while wrappers[:depth] not in shells:
            depth -= 1
        shell = shells[wrappers] = shells[wrappers[:depth]].copy()
    return shell


def _move(
    shell: _Shell[P],
    cmd: SimpleCommand,
    target: Callable[[SimpleCommand, P | None], P | None],
    definite: Callable[[P], bool],
) -> None:
    current = shell.here[0] if len(shell.here) == 1 else None
    args = [a for a in cmd.argv[1:] if a == "-" or not a.startswith("-")]
    stack = list(shell.stack)
    if cmd.name == "popd":
        new = stack.pop() if stack else None
    elif cmd.name == "pushd" and not args:
        new = stack.pop() if stack else None
        stack.append(current)
    elif args == ["-"]:
        new = shell.previous if cmd.name == "cd" else None
    elif not args:
        new = None  # `cd` alone: home, not modelled
    else:
        new = target(cmd, current) if not cmd.elsewhere else None
        if cmd.name == "pushd":
            stack.append(current)
    certain = (
        not cmd.subshell
        and not cmd.elsewhere
        and current is not None
        and new is not None
        and definite(new)
    )
    if certain:
        shell.previous, shell.here, shell.stack = current, [new], stack
    else:
        shell.here.append(new)  # it may or may not apply to what follows
