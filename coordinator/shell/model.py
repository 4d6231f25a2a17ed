"""The shell reader's results: simple commands, their redirections, and its error."""

from __future__ import annotations

import re
from dataclasses import dataclass

from seawall.errors import ConfigurationError

__all__ = [
    "ASSIGNMENT",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "SHELLS",
    "Redirect",
    "ShellLine",
    "ShellParseError",
    "SimpleCommand",
    "is_device",
    "new_command",
    "new_line",
    "new_redirect",
]

MAX_DEPTH = 16  # nesting of substitutions and ``sh -c``; deeper input is refused
MAX_LENGTH = 100_000  # characters; a longer command line is refused
ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)", re.DOTALL)
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_DEVICES = re.compile(r"/dev/(null|stdout|stderr|stdin|tty|zero|fd/\d+)")


class ShellParseError(ConfigurationError):
    """A command line the reader cannot parse; what it would run is unknown."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Redirect:
    """One redirection: its operator (``>``, ``>>``, ``<``, ``<<``, ...) and its target."""

    op: str
    target: str
    fd: int | None = None
    dynamic: bool = False  # the target contains an expansion the reader could not resolve
    glob: bool = False  # the target holds an unquoted glob pattern

    @property
    def writes_file(self) -> bool:
        """True when the redirection opens a file for writing (not a device, not an fd dup)."""
        if self.op not in _WRITE_OPS:
            return False
        if self.op == ">&" and (self.target.isdigit() or self.target == "-"):
            return False
        return not is_device(self.target)


def is_device(path: str) -> bool:
    """Whether ``path`` names a device a command may write without touching a file
    (``/dev/null``, ``/dev/stdout``, an fd)."""
    return _DEVICES.fullmatch(path) is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleCommand:
    """One command the shell would run, with its arguments as the shell would pass them.

    ``wrappers`` names the commands that run this one (``("sudo", "bash -c")``);
    ``depth`` counts substitution and ``-c`` nesting; ``dynamic`` marks, per argv word,
    whether it holds an expansion the reader could not resolve; ``globs``, whether it
    is an unquoted glob pattern; ``opaque`` says why what the command runs cannot be
    seen (empty when it can); ``subshell`` is true inside ``( )``, a substitution, a
    pipeline, a background job or a nested shell.
    """

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    assignments: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    depth: int = 0
    dynamic: tuple[bool, ...] = ()
    opaque: str = ""
    globs: tuple[bool, ...] = ()  # per argv word: an unquoted glob pattern the shell expands
    found_in: tuple[str, ...] = ()  # run by ``find -exec``: ``{}`` names a file below these
    elsewhere: bool = False  # a wrapper moved it to a directory not known (``env -C``)
    subshell: bool = False  # runs apart from the main shell: a cd in it changes nothing after
    function: bool = False  # calls a function this line defined (its body is judged there)
    fed_from: tuple[tuple[str, bool], ...] = ()  # piped from a lister: (path, glob) of its files

    @property
    def name(self) -> str:
        """The program's base name (``/usr/bin/git`` -> ``git``); empty for no program."""
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    @property
    def dynamic_name(self) -> bool:
        """True when the program itself comes from an unresolved expansion."""
        return bool(self.dynamic) and self.dynamic[0]

    def is_glob(self, index: int) -> bool:
        """Whether argv word ``index`` is an unquoted glob pattern."""
        return bool(self.globs) and self.globs[index]

    @property
    def written_files(self) -> tuple[str, ...]:
        """Files the redirections of this command open for writing."""
        return tuple(r.target for r in self.redirects if r.writes_file)


@dataclass(frozen=True, slots=True)
class ShellLine:
    """A command line read whole: its simple commands, and the variable assignments
    that run no command (``GIT_DIR=x; git status``: a variable the shell may export)."""

    commands: list[SimpleCommand]
    assignments: tuple[str, ...]


def new_redirect(op: str, target: str, fd: int | None) -> Redirect:
    """A redirection the reader read, with no expansion or glob in its target."""
    return Redirect(op=op, target=target, fd=fd)


def new_command(
    argv: tuple[str, ...],
    redirects: tuple[Redirect, ...],
    assignments: tuple[str, ...],
    dynamic: tuple[bool, ...],
    subshell: bool,
) -> SimpleCommand:
    """A command as the reader first reads it: run directly (no wrapper, no nesting)."""
    return SimpleCommand(
        argv=argv,
        redirects=redirects,
        assignments=assignments,
        dynamic=dynamic,
        subshell=subshell,
    )


def new_line(commands: list[SimpleCommand], assignments: tuple[str, ...]) -> ShellLine:
    """A command line read whole."""
    return ShellLine(commands=commands, assignments=assignments)
