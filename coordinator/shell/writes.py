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
_FILE_WRITERS = frozenset(
    _ALL_OPERANDS
    | _MODE_FIRST
    | _DESTINATION
    | set(_COMPRESSORS)
    | {"sed", "perl", "awk", "gawk", "dd", "git", "patch", "sort", "tar", "unzip", "curl"}
    | {"wget", "uniq", "find", "chattr", "mktemp"}
)
# project tools: the options that name what they write (a file, or a directory and all
# below it), with ``=`` or as the next word; ``SUB`` limits an entry to a subcommand
_F, _T = False, True  # a file, a tree
_COMPILED: dict[tuple[str, ...], bool] = {("-o",): _F}
TOOL_OUTPUTS: dict[str, dict[tuple[str, ...], bool]] = {
    "pytest": {("--junitxml", "--junit-xml", "--html", "--report-log", "--resultlog"): _F,
               ("--basetemp",): _T},
    "coverage": {("--data-file",): _F, ("-d", "--directory"): _T, ("-o",): _F},
    "sphinx-build": {("-d",): _T},
    "pip": {("-t", "--target", "--prefix", "--root", "-d", "--dest", "-w", "--wheel-dir",
             "--src"): _T, ("--log", "--report"): _F},
    "npm": {("--prefix", "--cache"): _T}, "pnpm": {("--dir", "--store-dir"): _T},
    "yarn": {("--modules-folder", "--cache-folder"): _T}, "bun": {("--cwd",): _T},
    "uv": {("-t", "--target", "--prefix", "--cache-dir", "-o", "--output-file"): _T},
    "poetry": {("-o", "--output"): _F}, "pdm": {("-o", "--output"): _F},
    "mypy": {("--cache-dir", "--html-report", "--txt-report", "--xml-report",
              "--junit-xml", "--linecount-report", "--any-exprs-report"): _T},
    "ruff": {("-o", "--output-file", "--cache-dir"): _F},
    "eslint": {("-o", "--output-file", "--cache-location"): _F},
    "jest": {("--outputFile", "--coverageDirectory", "--cacheDirectory"): _T},
    "vitest": {("--outputFile", "--dir"): _T},
    "tsc": {("--outDir", "--declarationDir", "--tsBuildInfoFile"): _T, ("--outFile",): _F},
    "javac": {("-d", "-s", "-h"): _T}, "cargo": {("--target-dir",): _T},
    "go": {("-o",): _F}, "rustc": {("-o",): _F, ("--out-dir",): _T},
    "gcc": _COMPILED, "g++": _COMPILED, "cc": _COMPILED, "c++": _COMPILED,
    "clang": _COMPILED, "clang++": _COMPILED, "ld": _COMPILED,
    "tox": {("--workdir",): _T}, "nox": {("--envdir",): _T},
    "pre-commit": {}, "black": {("--cache-dir",): _T}, "isort": {},
    "prettier": {("--cache-location",): _F}, "gofmt": {}, "rustfmt": {}, "clang-format": {},
}  # fmt: skip
_PRE_COMMIT_HOOKS = frozenset({"install", "uninstall", "init-templatedir"})
_MODULES = {"pip": "pip", "pytest": "pytest", "coverage": "coverage", "mypy": "mypy",
            "ruff": "ruff", "black": "black", "sphinx": "sphinx-build", "venv": "venv"}  # fmt: skip
WRITERS = _FILE_WRITERS | frozenset(TOOL_OUTPUTS)


def writes(cmd: SimpleCommand) -> tuple[Write, ...]:
    """Every place ``cmd`` visibly writes (see the module docstring)."""
    out = [Write(r.target, dynamic=r.dynamic, glob=r.glob) for r in cmd.redirects if r.writes_file]
    name = "awk" if cmd.name in ("gawk", "mawk", "nawk") else cmd.name
    ops = _operands(cmd, _OPTS_WITH_ARG.get(name, frozenset()))
    # a device written as a file operand (``tee /dev/null``) is no file, as in a redirect
    found = [w for w in _program_writes(cmd, name, ops) if w.dynamic or not is_device(w.path)]
    if cmd.found_in:
        found = [_found(write, cmd.found_in) for write in found]
    elif "xargs" in cmd.wrappers and name in _FILE_WRITERS and name not in ("git", "find"):
        if cmd.fed_from:  # ``find DIR | xargs rm``: the files below what the lister names
            found = [_fed(w) for w in found if w.path != "{}"]
            found.extend(Write(path, glob=glob, tree=True) for path, glob in cmd.fed_from)
        else:
            found.append(Write(STDIN_FILES, dynamic=True))
    return (*out, *found)


def _fed(write: Write) -> Write:
    """A write of ``xargs -I{}`` that builds a path from an input (``{}.bak``,
    ``../{}``): where it lands is not known before the command runs."""
    return Write(write.path, dynamic=True) if "{}" in write.path else write


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
    return _tool_outputs(cmd)


def _tool_outputs(cmd: SimpleCommand) -> list[Write]:
    """What a project tool writes by the options that name it (``TOOL_OUTPUTS``), read
    through ``python -m TOOL``; ``pre-commit install`` writes the repository's hooks."""
    argv, dyn = cmd.argv, _dynamic(cmd)
    name = cmd.name
    if name.startswith("python") and len(argv) > 2 and argv[1] == "-m":
        name, argv, dyn = _MODULES.get(argv[2], argv[2]), argv[2:], dyn[2:]
    elif name in ("npx", "pnpx", "bunx"):  # ``npx tsc --outDir DIR``: the tool's own options
        at = next((i for i, w in enumerate(argv[1:], 1) if not w.startswith("-")), len(argv))
        name, argv, dyn = argv[at] if at < len(argv) else "", argv[at:], dyn[at:]
    if name == "py.test":
        name = "pytest"
    if name == "venv":
        return [Write(w, d, tree=True) for w, d in zip(argv[1:], dyn[1:], strict=True)
                if not w.startswith("-")][:1]  # fmt: skip
    table = TOOL_OUTPUTS.get(name)
    if table is None:
        return []
    out: list[Write] = []
    for names, tree in table.items():
        for value, dynamic in _option_values(argv, dyn, names):
            out.append(Write(value, dynamic, tree=tree))
    if name == "pytest":
        out.extend(_cov_reports(argv, dyn))
    if name == "sphinx-build":
        operands = [w for w in _operands(SimpleCommand(argv=argv), frozenset({"-b", "-d", "-c",
                    "-D", "-A", "-t", "-j", "-w", "-M"}))]  # fmt: skip
        out.extend(Write(w.path, w.dynamic, tree=True) for w in operands[1:2])
    out.extend(_formatted(name, argv, dyn))
    if name == "pre-commit" and len(argv) > 1 and argv[1] in _PRE_COMMIT_HOOKS:
        out.append(Write(".git/hooks", tree=True))
    return out


# formatters that rewrite their operands (all below the working directory when none):
# (the words that make it write, or () when it always does; the words that make it read)
_FORMATTERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "black": (frozenset(), frozenset({"--check", "--diff"})),
    "isort": (frozenset(), frozenset({"--check", "--check-only", "-c", "--diff"})),
    "ruff": (frozenset({"format", "--fix"}), frozenset({"--check", "--diff", "--no-fix"})),
    "prettier": (frozenset({"--write", "-w"}), frozenset()),
    "eslint": (frozenset({"--fix"}), frozenset({"--fix-dry-run"})),
    "gofmt": (frozenset({"-w"}), frozenset()),
    "rustfmt": (frozenset(), frozenset({"--check"})),
    "clang-format": (frozenset({"-i"}), frozenset()),
}


def _formatted(name: str, argv: Sequence[str], dyn: Sequence[bool]) -> list[Write]:
    """The files a formatter rewrites: its path operands (``.`` when it names none)."""
    rule = _FORMATTERS.get(name)
    words = set(argv[1:])
    if rule is None or (rule[0] and not rule[0] & words) or rule[1] & words:
        return []
    skip = {"format", "check"} if name == "ruff" else set()
    paths: list[Write] = []
    value = False
    for word, dynamic in zip(argv[1:], dyn[1:], strict=True):
        if value or word.startswith("-"):
            value = word in _FORMAT_ARGS
        elif word not in skip:
            paths.append(Write(word, dynamic, tree=True))
    return paths or [Write(".", tree=True)]


_FORMAT_ARGS = frozenset(
    {"--select", "--ignore", "--extend-select", "--extend-ignore", "--config", "-c",
     "--target-version", "-t", "--line-length", "-l", "--exclude", "--extend-exclude",
     "--fixable", "--unfixable", "--output-format", "--profile", "--settings-path",
     "--ext", "--rule", "--parser", "--stdin-filename", "--include", "--force-exclude",
     "--cache-dir", "--cache-location", "-o", "--output-file", "--plugin", "--env"}
)  # fmt: skip


def _option_values(
    argv: Sequence[str], dyn: Sequence[bool], names: tuple[str, ...]
) -> list[tuple[str, bool]]:
    """Every value of the options ``names`` (``--opt X``, ``--opt=X``, ``-oX``)."""
    found: list[tuple[str, bool]] = []
    for i, word in enumerate(argv[1:], start=1):
        for option in names:
            if word == option and i + 1 < len(argv):
                found.append((argv[i + 1], dyn[i + 1]))
            elif option.startswith("--") and word.startswith(option + "="):
                found.append((word[len(option) + 1 :], dyn[i]))
            elif len(option) == 2 and word.startswith(option) and len(word) > 2:
                found.append((word[2:], dyn[i]))
    return found


def _cov_reports(argv: Sequence[str], dyn: Sequence[bool]) -> list[Write]:
    """``--cov-report=html:DIR`` (a tree), ``xml:FILE``, ``json:FILE``, ``lcov:FILE``."""
    out: list[Write] = []
    for spec, dynamic in _option_values(argv, dyn, ("--cov-report",)):
        kind, _, where = spec.partition(":")
        if where:
            out.append(Write(where, dynamic, tree=kind.split("-")[0] in ("html", "annotate")))
    return out


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
