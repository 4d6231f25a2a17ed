"""Where each command of a line runs: the one model of ``cd``, ``pushd`` and ``popd``.

``placed(commands, start)`` yields every simple command of a line (as the reader gives
them, in order) with each directory it may run in; ``cwd_after`` is where the line's
own shell is left. Both the scope's write check and the git-write detector read the
working directory through this, so they agree on it.

The rules:

- ``cd DIR`` moves to ``DIR`` (relative to where the shell is); ``..`` is taken off
  the path by its words, as ``cd`` does by default (``cd -L``), except for ``cd -P``,
  whose path is left for the caller to resolve. ``cd -`` goes back to where the last
  move started (``OLDPWD``; not known before the line's first move). ``pushd DIR``
  moves and remembers where it came from, ``pushd`` alone swaps the two, ``popd`` goes
  back; a rotation (``pushd +1``) or ``-n`` leaves a directory not known.
- ``cd`` alone goes home, a directory the reader does not know (nor does it know
  ``~``): the shell is then somewhere not known, or where it was if ``HOME`` is unset.
  An unknown directory is never taken for a known one: the write check refuses to
  judge a relative write there, the git-write detector does not count the call.
- A move counts for certain only in the shell that reads it, to a target the caller
  accepts (``definite``; the scope's check asks the file system whether the directory
  exists, since a failed ``cd`` leaves the shell where it was). Any other move *may or
  may not* apply to what follows (``cd $D``, a target the caller does not accept), so
  its target is added to the places later commands may run in, never substituted.
- ``( )``, a pipeline's parts and a background job run in a subshell, as bash runs
  them: a move there ends with it, and the next command of the shell that started it
  runs where that shell is. Commands in a row that run in subshells are read together,
  since the reader's commands do not say where one ``( )`` ends and the next begins
  (``(cd x; y)`` and ``(cd x) && (y)`` read the same): there, a move is a possibility.
- A nested shell (``bash -c '...'``, ``sudo sh -c ...``, a ``$( )``) starts where the
  shell that runs it is, keeps its moves, and ends at the next command of that shell
  (commands are told apart by their ``wrappers``); the reader marks every command in
  it as run in a subshell, so its moves are possibilities.
- A directory the reader cannot know (an expansion, ``~``, a wrapper that moves the
  command such as ``env -C``) is ``None``. Callers decide what an unknown directory
  means for them: the write check refuses to guess, the git-write detector prefers a
  false negative.

The reader does not know which commands of an ``&&``/``||`` list, an ``if`` or a loop
run, nor a function's body from the commands that call it: a move there is taken as
run. ``target`` computes ``cd DIR``'s destination from the command, the index of
``DIR`` in its argv and the directory the move starts from; the default joins the
word, and the scope's check passes one that also expands a glob and honours
``CDPATH``. Places are ``PurePath`` values (a ``Path`` start gives ``Path`` places);
nothing here touches the file system.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Generic, TypeVar

from seawall.shell.model import SimpleCommand

__all__ = ["MOVES", "cwd_after", "literal_target", "placed"]

P = TypeVar("P", bound=PurePath)

MOVES = frozenset({"cd", "pushd", "popd"})
"""The commands that move a shell's working directory."""

Target = Callable[[SimpleCommand, int, P], P | None]
Definite = Callable[[P], bool]


def literal_target(cmd: SimpleCommand, index: int, current: P) -> P | None:
    """``cd DIR``'s destination, ``DIR`` being ``cmd.argv[index]``: ``current / DIR``
    (an absolute ``DIR`` as it is); None for a glob pattern, which the shell expands."""
    return None if cmd.is_glob(index) else current / cmd.argv[index]


@dataclass(slots=True)
class _Shell(Generic[P]):
    """One shell's directory: where it may be, where it was, what ``pushd`` keeps."""

    here: list[P | None]
    previous: P | None = None  # OLDPWD; None when not known
    stack: list[P | None] = field(default_factory=list)  # what popd returns to, last first

    def copy(self) -> _Shell[P]:
        return _Shell(list(self.here), self.previous, list(self.stack))


class _Shells(Generic[P]):
    """The shells of one line: its own, each nested shell running now, and for each of
    them the subshells run since its last own command (one state for them all)."""

    __slots__ = ("own", "start", "sub")

    def __init__(self, start: P) -> None:
        self.start = start
        self.own: dict[tuple[str, ...], _Shell[P]] = {(): _Shell([start])}
        self.sub: dict[tuple[str, ...], _Shell[P]] = {}

    def of(self, cmd: SimpleCommand) -> _Shell[P]:
        """The state ``cmd`` runs in, and the one its move changes."""
        key = cmd.wrappers
        if len(self.own) > 1:
            self._end_nested(key)
        shell = self.own.get(key)
        if shell is None:
            shell = self.own[key] = self._running(key).copy()
        if not cmd.subshell:
            if self.sub:
                self.sub.pop(key, None)  # its subshells have ended
            return shell
        layer = self.sub.get(key)
        if layer is None:
            layer = self.sub[key] = shell.copy()
        return layer

    def _end_nested(self, key: tuple[str, ...]) -> None:
        """A command of the shell ``key`` runs: the shells nested in it have ended."""
        size = len(key)
        ended = [k for k in self.own if len(k) > size and k[:size] == key]
        for k in ended:
            del self.own[k]
            self.sub.pop(k, None)

    def _running(self, key: tuple[str, ...]) -> _Shell[P]:
        """Where a nested shell starts: the state of the nearest shell around it."""
        depth = len(key) - 1
        while key[:depth] not in self.own:
            depth -= 1
        outer = key[:depth]
        return self.sub.get(outer) or self.own[outer]


def placed(
    commands: Iterable[SimpleCommand],
    start: P,
    *,
    target: Target[P] = literal_target,
    definite: Definite[P] = lambda _: True,
) -> Iterator[tuple[SimpleCommand, tuple[P | None, ...]]]:
    """Each command with every directory it may run in (the most recently entered last;
    a move is given where it starts, which is where its redirections are opened); see
    the module's rules."""
    return _walk(commands, _Shells(start), target, definite)


def cwd_after(
    commands: Iterable[SimpleCommand],
    start: P,
    *,
    target: Target[P] = literal_target,
    definite: Definite[P] = lambda _: True,
) -> tuple[P | None, ...]:
    """Every directory the line's own shell may be in once the line has run."""
    shells = _Shells(start)
    for _ in _walk(commands, shells, target, definite):
        pass
    return tuple(dict.fromkeys(shells.own[()].here))


def _walk(
    commands: Iterable[SimpleCommand],
    shells: _Shells[P],
    target: Target[P],
    definite: Definite[P],
) -> Iterator[tuple[SimpleCommand, tuple[P | None, ...]]]:
    own, root = shells.own, shells.own[()]
    for cmd in commands:
        if cmd.wrappers or cmd.subshell or len(own) > 1:
            shell = shells.of(cmd)
        else:  # the common case: a command of the line's own shell, nothing nested
            shell = root
            if shells.sub:
                shells.sub.clear()  # its subshells have ended
        here = shell.here
        places: tuple[P | None, ...]
        if cmd.elsewhere:
            places = (None,)
        elif len(here) == 1:
            places = (here[0],)
        else:
            places = tuple(dict.fromkeys(here))
        yield cmd, places  # a move's own redirections are opened where it starts
        if cmd.name in MOVES and not cmd.dynamic_name:
            _move(shell, cmd, shells.start, target, definite)


def _operands(cmd: SimpleCommand) -> tuple[str, list[int]]:
    """The option letters of a move and the argv indices of its operands."""
    letters = ""
    index = 1
    argv = cmd.argv
    while index < len(argv) and argv[index][:1] == "-" and argv[index] != "-":
        word = argv[index]
        if cmd.name != "cd" and word[1:].isdigit():
            break  # ``pushd -1``: an operand (a rotation)
        index += 1
        if word == "--":
            break
        letters += word[1:]
    return letters, list(range(index, len(argv)))


def _move(
    shell: _Shell[P],
    cmd: SimpleCommand,
    start: P,
    target: Target[P],
    definite: Definite[P],
) -> None:
    current = shell.here[0] if len(shell.here) == 1 else None
    letters, operands = _operands(cmd)
    words = [cmd.argv[i] for i in operands]
    stack = list(shell.stack)
    new: P | None = None
    if cmd.name != "cd" and ("n" in letters or any(w[:1] in "+-" for w in words)):
        stack = []  # a rotation or -n: the stack is no longer known
    elif cmd.name == "popd":
        new = stack.pop() if stack and not words else None
    elif cmd.name == "pushd" and not words:
        new = stack.pop() if stack else None
        stack.append(current)
    elif words == ["-"]:
        new = shell.previous if cmd.name == "cd" else None
    elif len(words) == 1 and not cmd.elsewhere:
        new = _destination(cmd, operands[0], current, start, target)
        if new is not None and "P" not in letters:
            new = _logical(new)
        if cmd.name == "pushd":
            stack.append(current)
    certain = not cmd.subshell and not cmd.elsewhere and new is not None and definite(new)
    if certain:
        shell.previous, shell.here, shell.stack = current, [new], stack
    else:
        shell.here.append(new)  # it may or may not apply to what follows
        if cmd.name != "cd":
            shell.stack = []  # the stack may or may not have changed: not known


def _destination(
    cmd: SimpleCommand, index: int, current: P | None, start: P, target: Target[P]
) -> P | None:
    """Where ``cd argv[index]`` goes from ``current``; None when not known."""
    word = cmd.argv[index]
    if word.startswith("~") or (index < len(cmd.dynamic) and cmd.dynamic[index]):
        return None
    if current is None:
        if not word.startswith("/"):
            return None
        current = start  # an absolute target is the same from anywhere
    return target(cmd, index, current)


def _logical(path: P) -> P:
    """``path`` with each ``..`` taking off the name before it, as ``cd -L`` does."""
    if ".." not in path.parts:
        return path
    return type(path)(posixpath.normpath(os.fspath(path)))
