"""Files a shell command visibly writes: redirections and the usual file-changing programs.

This is a best effort on what can be seen in the command line (the scope check of Bash
calls); a program that writes files on its own (a build, a script) is not visible here,
which is what the post-wave verification of each agent's changes is for.
"""

from __future__ import annotations

from collections.abc import Sequence

from coordinator.scope.commands import git_argv
from coordinator.shell import SimpleCommand

__all__ = ["PATCHED", "written_paths"]

PATCHED = "<the files a patch names>"  # a write target known only when the patch is read

# programs whose every operand is a path they create, change or delete
_ALL_OPERANDS = frozenset({"rm", "rmdir", "touch", "mkdir", "truncate", "shred", "unlink", "tee"})
# programs whose last operand is the destination (or ``-t DIR``)
_DESTINATION = frozenset({"cp", "mv", "ln", "install", "rsync"})
_OPTS_WITH_ARG: dict[str, frozenset[str]] = {
    "truncate": frozenset({"-s", "--size", "-r", "--reference"}),
    "install": frozenset({"-m", "-o", "-g", "--mode", "--owner", "--group"}),
    "mkdir": frozenset({"-m", "--mode"}),
    "shred": frozenset({"-n", "-s", "--iterations", "--size"}),
    "sed": frozenset({"-e", "-f", "-l", "--expression", "--file", "--line-length"}),
    "perl": frozenset({"-e", "-E", "-I", "-M", "-m"}),
}
_SCRIPT_OPTIONS = frozenset({"-e", "-E", "-f", "--expression", "--file"})


def written_paths(cmd: SimpleCommand) -> tuple[tuple[str, bool], ...]:
    """``(path, dynamic)`` for each file ``cmd`` visibly writes; dynamic paths are unknown."""
    out: list[tuple[str, bool]] = [(r.target, r.dynamic) for r in cmd.redirects if r.writes_file]
    argv = cmd.argv
    dynamic = cmd.dynamic or (False,) * len(argv)
    name = cmd.name
    operands = _operands(argv, dynamic, _OPTS_WITH_ARG.get(name, frozenset()))
    if name in _ALL_OPERANDS:
        out.extend(operands)
    elif name in _DESTINATION and operands:
        target = _option_value(argv, ("-t", "--target-directory"))
        out.append((target, False) if target else operands[-1])
        if name == "mv":
            out.extend(operands[:-1])  # a move deletes its sources
    elif name in ("sed", "perl") and _in_place(argv):
        out.extend(operands if _SCRIPT_OPTIONS & set(argv) else operands[1:])
    elif name == "dd":
        out.extend((a[3:], d) for a, d in zip(argv, dynamic, strict=True) if a.startswith("of="))
    elif name == "git":
        out.extend(_git_writes(git_argv(argv)))
    elif name == "patch" and not {"--dry-run", "-C", "--check"} & set(argv):
        out.append((PATCHED, True))
    return tuple(out)


def _operands(
    argv: Sequence[str], dynamic: Sequence[bool], with_arg: frozenset[str]
) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    skip = False
    after_dashes = False
    for word, dyn in zip(argv[1:], dynamic[1:], strict=True):
        if skip:
            skip = False
            continue
        if not after_dashes and word == "--":
            after_dashes = True
            continue
        if not after_dashes and word.startswith("-") and word != "-":
            skip = word in with_arg
            continue
        out.append((word, dyn))
    return out


def _option_value(argv: Sequence[str], names: tuple[str, ...]) -> str | None:
    for i, word in enumerate(argv):
        if word in names and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith("--target-directory="):
            return word.split("=", 1)[1]
    return None


def _in_place(argv: Sequence[str]) -> bool:
    """``sed -i``/``perl -pi`` (an ``i`` in a short option cluster) or ``--in-place``."""
    return any(
        a == "--in-place"
        or a.startswith("--in-place=")
        or (a[:1] == "-" and a[1:2] not in ("-", "M", "m", "I", "e", "E") and "i" in a[1:])
        for a in argv[1:]
    )


def _git_writes(argv: tuple[str, ...]) -> list[tuple[str, bool]]:
    if len(argv) >= 2 and argv[1] == "apply":
        if {"--check", "--stat", "--numstat", "--summary"} & set(argv):
            return []
        return [(PATCHED, True)]
    if len(argv) < 2 or argv[1] not in ("rm", "mv"):
        return []
    return _operands(argv[1:], (False,) * (len(argv) - 1), frozenset())
