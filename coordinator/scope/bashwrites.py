"""Where the writes of a Bash line land: each path to judge, from each directory it may
run in, or the reason it cannot be known.

The directories come from the shell reader's one model of ``cd``, ``pushd`` and
``popd`` (``seawall.shell.cwd``): a move into an existing directory moves the working
directory; a move to a directory that may not exist, or with ``CDPATH`` set, only adds
a place the following writes may land, and each place must be in scope; a move whose
target is not known makes the directory unknown, and a relative write there is not
judged. A move inside a subshell, a pipeline or a background job ends with it. A
command a wrapper runs elsewhere (``env -C``) writes in a directory that is not known. Unquoted
glob patterns are expanded against the file system the way the shell will (a pattern
that matches nothing stays as written); a link the command makes is judged by its
target (``seawall.scope.linkwrites``): a symbolic link's text from the link's
directory, as the kernel will read it.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from seawall.sandbox.policy import SCRATCH_PREFIX
from seawall.scope.linkwrites import LINKERS, links_made
from seawall.shell import ShellParseError, SimpleCommand, placed, read_line
from seawall.shell.writes import Write, writes

__all__ = ["PathTarget", "UnknownTarget", "line_writes", "write_targets"]

MAX_GLOB_MATCHES = 4096


@dataclass(frozen=True, slots=True)
class PathTarget:
    """A path a command writes, and the directory it is read from."""

    path: str
    cwd: Path
    link: bool = False  # the target of a link the command makes (judged like a write)


@dataclass(frozen=True, slots=True)
class UnknownTarget:
    """A write whose target cannot be known before the command runs."""

    problem: str


Target = PathTarget | UnknownTarget


def write_targets(
    commands: Iterable[SimpleCommand],
    *,
    cwd: Path,
    assignments: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
) -> list[Target]:
    """Every target the commands write (see the module docstring)."""
    cdpath = bool((env or {}).get("CDPATH")) or any(a.startswith("CDPATH=") for a in assignments)

    def target(cmd: SimpleCommand, index: int, here: Path) -> Path | None:
        return _cd_target(cmd, index, here, cdpath=cdpath or _sets_cdpath(cmd))

    out: list[Target] = []
    for cmd, where in placed(commands, cwd, target=target, definite=Path.is_dir):
        places = list(where)  # every directory it may run in: each is checked
        if cmd.name in LINKERS:
            out.extend(_link_targets(cmd, places))
        for write in writes(cmd):
            out.extend(_targets(cmd, _in_scratch(write, env), places, root=cwd))
    return out


def line_writes(line: str, *, cwd: Path) -> tuple[Path, ...]:
    """The files a whole command line visibly writes, as absolute paths (normalised, not
    resolved); nothing for a line the reader cannot parse or a target it cannot know. What
    an agent's shell command names as a write is one way seawall sees the agent write."""
    try:
        parsed = read_line(line)
    except ShellParseError:
        return ()
    found: list[Path] = []
    for target in write_targets(parsed.commands, cwd=cwd, assignments=parsed.assignments):
        if isinstance(target, PathTarget) and not target.link:  # a link's target is not written
            found.append(Path(os.path.normpath(target.cwd / target.path)))
    return tuple(found)


_TMPDIR_WORD = re.compile(r"\$(?:TMPDIR|\{TMPDIR\})((?:/[^$`\\*?\[]*)?)")


def _in_scratch(write: Write, env: Mapping[str, str] | None) -> Write:
    """``$TMPDIR/...`` read as the agent's own temporary directory when seawall's runner
    made it (the only expansion the hook knows before the command runs)."""
    scratch = (env or {}).get("TMPDIR", "")
    if not write.dynamic or not Path(scratch).name.startswith(SCRATCH_PREFIX):
        return write
    found = _TMPDIR_WORD.fullmatch(write.path)
    if found is None:
        return write
    return dataclasses.replace(write, path=scratch + found.group(1), dynamic=False)


def _sets_cdpath(cmd: SimpleCommand) -> bool:
    return any(a.startswith("CDPATH=") for a in cmd.assignments)


def _targets(
    cmd: SimpleCommand, write: Write, places: list[Path | None], *, root: Path
) -> list[Target]:
    shown = shlex.join(cmd.argv) or "the redirection"
    if write.dynamic:
        return [UnknownTarget(f"`{shown}` writes to {write.path!r}, not known before it runs")]
    absolute = write.path.startswith(("/", "~"))
    if not absolute and any(place is None for place in places):
        return [UnknownTarget(f"`{shown}` writes {write.path!r} in a directory not known")]
    out: list[Target] = []
    for place in dict.fromkeys(places):
        base = root if absolute or place is None else place
        paths = _expand(write.path, base) if write.glob else [write.path]
        if paths is None:
            problem = f"`{shown}` writes {write.path!r}, a pattern matching too many files"
            return [UnknownTarget(problem)]
        out.extend(PathTarget(path, base) for path in paths)
    return out


def _expand(pattern: str, cwd: Path) -> list[str] | None:
    """The paths an unquoted ``pattern`` names, as the shell expands it from ``cwd``."""
    if pattern.startswith("~"):
        pattern = str(Path.home()) + pattern[1:]
    found = sorted(glob.glob(pattern, root_dir=cwd))  # noqa: PTH207 (the shell's own rules)
    if len(found) > MAX_GLOB_MATCHES:
        return None
    return found or [pattern]


def _link_targets(cmd: SimpleCommand, places: list[Path | None]) -> list[Target]:
    """Each link the command makes, judged by its target (``seawall.scope.linkwrites``)."""
    out: list[Target] = []
    for place in dict.fromkeys(places):
        if place is None:
            return [UnknownTarget("a link is made in a directory not known")]
        for made in links_made(cmd, place):
            if made.unknown:
                out.append(UnknownTarget(made.unknown))
            else:
                out.append(PathTarget(made.target, made.base, link=True))
    return out


def _cd_target(cmd: SimpleCommand, index: int, cwd: Path, *, cdpath: bool) -> Path | None:
    """Where ``cd argv[index]`` goes from ``cwd``, a glob expanded as the shell will;
    None when the shell would refuse or the reader cannot tell."""
    target = cmd.argv[index]
    if cmd.is_glob(index):
        found = [p for p in _expand(target, cwd) or [] if (cwd / p).is_dir()]
        if len(found) != 1:
            return None  # the shell would refuse, or go where the reader cannot tell
        target = found[0]
    if cdpath and not target.startswith(("/", "./", "../")) and target not in (".", ".."):
        return None  # CDPATH may send it anywhere
    return cwd / target
