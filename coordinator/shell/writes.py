"""The files a simple command visibly writes: its redirections and the operands of the
programs whose writes are modelled here (``WRITERS``).

Each write is a ``Write``: a path as written (relative to the command's directory), or
a tree (a directory and anything below it: ``tar -x -C dir``, ``unzip -d dir``,
``find dir -delete``, ``chmod -R``), marked dynamic when it is not known before the
command runs (an unresolved expansion, the file list of ``xargs``, the files a patch
names) and glob when it is an unquoted pattern the shell expands. A program not named
in ``WRITERS`` writes nothing that can be seen here: the command policy decides what
that means.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from seawall.shell.gitargv import git_argv
from seawall.shell.model import SimpleCommand, is_device
from seawall.shell.wrappers import find_roots

__all__ = ["PATCHED", "STDIN_FILES", "WRITERS", "Write", "writes"]

PATCHED = "<the files a patch names>"  # a write target known only when the patch is read
STDIN_FILES = "<the files xargs reads from its input>"


@dataclass(frozen=True, slots=True)
class Write:
    """One place a command writes."""

    path: str
    dynamic: bool = False  # not known before the command runs
    glob: bool = False  # an unquoted pattern, expanded against the file system
    tree: bool = False  # the directory and anything below it


# programs whose every operand is a path they create, change or delete
_ALL_OPERANDS = frozenset(
    {"rm", "rmdir", "touch", "mkdir", "truncate", "shred", "unlink", "tee", "mkfifo"}
)
_MODE_FIRST = frozenset({"chmod", "chown", "chgrp"})  # first operand is the mode/owner
_DESTINATION = frozenset({"cp", "mv", "ln", "install", "rsync"})
_COMPRESSORS = {
    "gzip": ".gz", "gunzip": ".gz", "bzip2": ".bz2", "bunzip2": ".bz2", "xz": ".xz",
    "unxz": ".xz", "zstd": ".zst", "unzstd": ".zst", "lz4": ".lz4", "compress": ".Z",
}  # fmt: skip
_OPTS_WITH_ARG: dict[str, frozenset[str]] = {
    "truncate": frozenset({"-s", "--size", "-r", "--reference"}),
    "touch": frozenset({"-r", "-d", "-t", "--reference", "--date"}),
    "install": frozenset({"-m", "-o", "-g", "--mode", "--owner", "--group"}),
    "mkdir": frozenset({"-m", "--mode"}),
    "mkfifo": frozenset({"-m", "--mode"}),
    "shred": frozenset({"-n", "-s", "--iterations", "--size"}),
    "sed": frozenset({"-e", "-f", "-l", "--expression", "--file", "--line-length"}),
    "perl": frozenset({"-e", "-E", "-I", "-M", "-m"}),
    "awk": frozenset({"-f", "-v", "-F", "-i", "-l", "-e"}),
    "sort": frozenset({"-k", "-t", "-S", "-T", "-o", "--key", "--field-separator"}),
    "zstd": frozenset({"-o"}),
}
_SCRIPT_OPTIONS = frozenset({"-e", "-E", "-f", "--expression", "--file"})
WRITERS = frozenset(
    _ALL_OPERANDS
    | _MODE_FIRST
    | _DESTINATION
    | set(_COMPRESSORS)
    | {"sed", "perl", "awk", "gawk", "dd", "git", "patch", "sort", "tar", "unzip", "curl"}
    | {"wget", "uniq", "find", "chattr", "mktemp"}
)


def writes(cmd: SimpleCommand) -> tuple[Write, ...]:
    """Every place ``cmd`` visibly writes (see the module docstring)."""
    out = [Write(r.target, dynamic=r.dynamic, glob=r.glob) for r in cmd.redirects if r.writes_file]
    name = "awk" if cmd.name in ("gawk", "mawk", "nawk") else cmd.name
    ops = _operands(cmd, _OPTS_WITH_ARG.get(name, frozenset()))
    # a device written as a file operand (``tee /dev/null``) is no file, as in a redirect
    found = [w for w in _program_writes(cmd, name, ops) if w.dynamic or not is_device(w.path)]
    if cmd.found_in:
        found = [_found(write, cmd.found_in) for write in found]
    elif "xargs" in cmd.wrappers and name in WRITERS and name not in ("git", "find"):
        found.append(Write(STDIN_FILES, dynamic=True))
    return (*out, *found)


def _found(write: Write, roots: tuple[str, ...]) -> Write:
    """A write of ``{}`` by ``find -exec``: a file below find's starting points."""
    if "{}" not in write.path:
        return write
    if write.path != "{}" or len(roots) != 1:
        return Write(write.path, dynamic=True)
    return Write(roots[0], tree=True)


def _program_writes(cmd: SimpleCommand, name: str, ops: list[Write]) -> list[Write]:
    argv = cmd.argv
    if name in _ALL_OPERANDS:
        return ops
    if name in _MODE_FIRST or name == "chattr":
        tree = bool({"R"} & _short_flags(argv)) or "--recursive" in argv
        reference = any(a.startswith("--reference") for a in argv)
        targets = ops if reference else ops[1:]
        return [Write(w.path, w.dynamic, w.glob, tree) for w in targets]
    if name in _DESTINATION and ops:
        target = _option_value(argv, ("-t", "--target-directory"))
        found = [Write(target)] if target else [ops[-1]]
        moves = name == "mv" or (name == "rsync" and "--remove-source-files" in argv)
        return found + (ops[:-1] if moves else [])  # a move deletes its sources
    if name in _COMPRESSORS:
        return _compressed(name, argv, ops)
    if name in ("sed", "perl") and _in_place(argv):
        return ops if _SCRIPT_OPTIONS & set(argv) else ops[1:]
    if name == "awk" and _inplace_awk(argv):
        return ops if {"-f", "-e"} & set(argv) else ops[1:]
    if name == "dd":
        return [Write(a[3:], d) for a, d in zip(argv, _dynamic(cmd), strict=True) if a[:3] == "of="]
    if name == "sort":
        output = _option_value(argv, ("-o", "--output"))
        return [Write(output)] if output else []
    if name == "uniq":
        return ops[1:2]
    if name in ("tar", "unzip"):
        return _archive(name, argv)
    if name in ("curl", "wget"):
        return _download(name, argv)
    if name == "find":
        return _find(cmd)
    if name == "mktemp":
        return [Write(w.path, w.dynamic, w.glob) for w in ops if "/" in w.path]
    if name == "git":
        return _git_writes(git_argv(argv))
    if name == "patch" and not {"--dry-run", "-C", "--check"} & set(argv):
        return [Write(PATCHED, dynamic=True)]
    return []


def _dynamic(cmd: SimpleCommand) -> tuple[bool, ...]:
    return cmd.dynamic or (False,) * len(cmd.argv)


def _operands(cmd: SimpleCommand, with_arg: frozenset[str]) -> list[Write]:
    out: list[Write] = []
    skip = False
    after_dashes = False
    for index, (word, dyn) in enumerate(zip(cmd.argv, _dynamic(cmd), strict=True)):
        if index == 0:
            continue
        if skip:
            skip = False
            continue
        if not after_dashes and word == "--":
            after_dashes = True
            continue
        if not after_dashes and word.startswith("-") and word != "-":
            skip = word in with_arg
            continue
        out.append(Write(word, dynamic=dyn, glob=cmd.is_glob(index)))
    return out


def _short_flags(args: Sequence[str]) -> set[str]:
    flags: set[str] = set()
    for arg in args[1:]:
        if arg.startswith("-") and not arg.startswith("--"):
            flags.update(arg[1:])
    return flags


def _option_value(argv: Sequence[str], names: tuple[str, ...]) -> str | None:
    """The value of the first of ``names`` (``-o X``, ``-oX``, ``--output=X``), or None."""
    for i, word in enumerate(argv):
        if i == 0:
            continue
        if word in names and i + 1 < len(argv):
            return argv[i + 1]
        for name in names:
            if name.startswith("--") and word.startswith(name + "="):
                return word[len(name) + 1 :]
            if len(name) == 2 and word.startswith(name) and len(word) > 2 and word[1] != "-":
                return word[2:]
            if _cluster_ends_with(word, name) and i + 1 < len(argv):
                return argv[i + 1]  # ``-sSo FILE``: the last letter of a cluster takes a value
    return None


def _cluster_ends_with(word: str, name: str) -> bool:
    return (
        len(name) == 2
        and len(word) > 2
        and word[0] == "-"
        and word[1] != "-"
        and word.endswith(name[1])
        and word[1:].isalpha()
    )


def _in_place(argv: Sequence[str]) -> bool:
    """``sed -i``/``perl -pi`` (an ``i`` in a short option cluster) or ``--in-place``."""
    return any(
        a == "--in-place"
        or a.startswith("--in-place=")
        or (a[:1] == "-" and a[1:2] not in ("-", "M", "m", "I", "e", "E") and "i" in a[1:])
        for a in argv[1:]
    )


def _inplace_awk(argv: Sequence[str]) -> bool:
    """``gawk -i inplace`` (or ``-iinplace``, ``--include=inplace``)."""
    pairs = itertools.pairwise(argv)
    return any(a in ("-i", "--include") and b.startswith("inplace") for a, b in pairs) or any(
        a in ("-iinplace", "--include=inplace") for a in argv
    )


def _compressed(name: str, argv: Sequence[str], ops: list[Write]) -> list[Write]:
    """A compressor replaces each operand with its (de)compressed twin."""
    if {"c", "l", "t"} & _short_flags(argv) or {"--stdout", "--list", "--test"} & set(argv):
        return []
    suffix = _COMPRESSORS[name]
    out: list[Write] = []
    for write in ops:
        twin = write.path.removesuffix(suffix) if write.path.endswith(suffix) else write.path
        out.append(write)
        out.append(Write(twin if twin != write.path else write.path + suffix, write.dynamic))
    return out


def _archive(name: str, argv: Sequence[str]) -> list[Write]:
    """``tar -x`` and ``unzip`` extract below a directory; ``tar -c -f FILE`` writes FILE."""
    if name == "unzip":
        if {"l", "t", "v", "p", "Z"} & _short_flags(argv):
            return []
        return [Write(_option_value(argv, ("-d",)) or ".", tree=True)]
    first = argv[1] if len(argv) > 1 else ""
    flags = _short_flags(argv) | (set(first) if first and not first.startswith("-") else set())
    long = {a.split("=", 1)[0] for a in argv[1:] if a.startswith("--")}
    if "--to-command" in long or "--use-compress-program" in long:
        return [Write("<a command tar runs>", dynamic=True)]
    if "--remove-files" in long:
        return [Write("<the files tar --remove-files deletes>", dynamic=True)]
    if "x" in flags or {"--extract", "--get"} & long:
        return [Write(_option_value(argv, ("-C", "--directory")) or ".", tree=True)]
    if {"c", "r", "u", "A"} & flags or {"--create", "--append", "--update"} & long:
        archive = _option_value(argv, ("--file",)) or _tar_archive(argv)
        if archive is None and "f" in flags:
            return [Write("<the archive tar -f names>", dynamic=True)]
        return [Write(archive)] if archive and archive != "-" else []
    return []


def _tar_archive(argv: Sequence[str]) -> str | None:
    """The ``f`` value of tar's short options: ``-czf X``, ``-fX``, or old-style ``czf X``."""
    for index, word in enumerate(argv[1:], start=1):
        old_style = index == 1 and not word.startswith("-")
        if not (old_style or (word.startswith("-") and not word.startswith("--"))):
            continue
        letters = word if old_style else word[1:]
        if "f" not in letters:
            continue
        rest = letters[letters.index("f") + 1 :]
        if rest and not old_style:
            return rest
        return argv[index + 1] if index + 1 < len(argv) else None
    return None


def _download(name: str, argv: Sequence[str]) -> list[Write]:
    """Where ``curl``/``wget`` save what they fetch."""
    if any(a in ("-K", "--config", "-e", "--execute") or a.startswith("--config=") for a in argv):
        return [Write(f"<the files {name}'s configuration names>", dynamic=True)]
    if name == "curl":
        found = [
            value
            for option in (("-o", "--output"), ("-D", "--dump-header"), ("-c", "--cookie-jar"))
            if (value := _option_value(argv, option)) is not None and value != "-"
        ]
        out = [Write(path) for path in found]
        if {"O", "J"} & _short_flags(argv) or {"--remote-name", "--remote-name-all"} & set(argv):
            out.append(Write(_option_value(argv, ("--output-dir",)) or ".", tree=True))
        return out
    document = _option_value(argv, ("-O", "--output-document"))
    log = _option_value(argv, ("-o", "--output-file", "-a", "--append-output"))
    out = [Write(log)] if log else []
    if document == "-":
        return out
    if document is not None:
        return [*out, Write(document)]
    return [*out, Write(_option_value(argv, ("-P", "--directory-prefix")) or ".", tree=True)]


def _find(cmd: SimpleCommand) -> list[Write]:
    """``find -delete`` deletes below its starting points; ``-fprint FILE`` writes FILE."""
    argv = cmd.argv
    out: list[Write] = []
    if "-delete" in argv:
        out.extend(Write(root, tree=True) for root in find_roots(cmd))
    for option in ("-fprint", "-fprint0", "-fprintf", "-fls"):
        if option in argv and argv.index(option) + 1 < len(argv):
            out.append(Write(argv[argv.index(option) + 1]))
    return out


def _git_writes(argv: tuple[str, ...]) -> list[Write]:
    if len(argv) >= 2 and argv[1] == "apply":
        if {"--check", "--stat", "--numstat", "--summary"} & set(argv):
            return []
        return [Write(PATCHED, dynamic=True)]
    if len(argv) < 2 or argv[1] not in ("rm", "mv"):
        return []
    sliced = SimpleCommand(argv=argv[1:])
    return _operands(sliced, frozenset())
