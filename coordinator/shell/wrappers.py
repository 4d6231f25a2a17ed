"""Wrappers: commands that run another command (``env``, ``sudo``, ``xargs``,
``find -exec``, ``eval``, ``bash -c``, ``uv run``, ...), and what they run in turn."""

from __future__ import annotations

from dataclasses import replace

from seawall.shell.model import ASSIGNMENT, SHELLS, ShellParseError, SimpleCommand

__all__ = ["WRAPPER_NAMES", "feed", "find_roots", "unwrap"]

_Inner = tuple[str, "SimpleCommand | str"]  # (label, a command or a script to parse)

# options that take a separate argument, per wrapper
_OPTION_ARGS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R"}),
    "doas": frozenset({"-u", "-C"}),
    "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "xargs": frozenset(
        {
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--max-chars",
            "--replace",
        }
    ),
    "watch": frozenset({"-n", "--interval", "-d", "--differences"}),
    "flock": frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}),
    "taskset": frozenset(),
    "chrt": frozenset(),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-O", "-S", "-P", "-I", "-b"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u", "-n", "-a"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "nohup": frozenset(),
    "setsid": frozenset(),
    "chronic": frozenset(),
    "busybox": frozenset(),
    "unbuffer": frozenset(),
}
# ``TOOL run|exec [options] COMMAND``: options that take a separate argument
_RUNNERS: dict[str, frozenset[str]] = {
    "uv": frozenset({"--with", "--python", "-p", "--project", "--directory", "--package",
                     "--extra", "--group", "--env-file", "--index", "--from", "-w"}),
    "poetry": frozenset({"-C", "--directory", "-P", "--project"}),
    "pipenv": frozenset(),
    "pdm": frozenset({"-p", "--project"}),
    "hatch": frozenset({"-e", "--env"}),
    "rye": frozenset(),
    "conda": frozenset({"-n", "--name", "-p", "--prefix"}),
    "bundle": frozenset(),
    "pnpm": frozenset(),
}  # fmt: skip
_CHDIR = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir")}  # run the command elsewhere
_SHELL_OPTION_ARGS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_SCRIPT_OPTION = frozenset({"su", "script", "flock"})  # ``NAME ... -c SCRIPT``
WRAPPER_NAMES = frozenset(
    SHELLS | _SCRIPT_OPTION | {"eval", "find"} | _RUNNERS.keys() | _OPTION_ARGS.keys()
)
"""Every program name ``unwrap`` looks into: for any other, it finds nothing inside."""


def unwrap(cmd: SimpleCommand, stdin_script: str | None) -> tuple[str, list[_Inner]]:
    """What ``cmd`` runs in turn: (why that is opaque or ``""``, inner commands/scripts)."""
    name = cmd.name
    if name not in WRAPPER_NAMES:
        return "", []
    if name in SHELLS and name != "busybox":
        return _shell(cmd, stdin_script)
    if name == "eval":
        return "", [("eval", " ".join(cmd.argv[1:]))]
    if name == "find":
        return "", _find_exec(cmd)
    if name in _SCRIPT_OPTION:
        script = _option_value(cmd, ("-c", "--command"))
        if script is not None:
            return "", [(f"{name} -c", script)]
    if name in _RUNNERS and len(cmd.argv) > 2 and cmd.argv[1] in ("run", "exec"):
        rest = _skip_options(cmd, list(range(2, len(cmd.argv))), _RUNNERS[name])
        return "", [(f"{name} {cmd.argv[1]}", _slice(cmd, rest))] if rest else []
    if name not in _OPTION_ARGS:
        return "", []
    rest = _skip_options(cmd, list(range(1, len(cmd.argv))), _OPTION_ARGS[name])
    assignments: list[str] = []
    if name == "env":
        split = _option_value(cmd, ("-S", "--split-string"))
        if split is not None:
            return "", [("env -S", split)]
    if name in ("env", "sudo"):
        while rest and ASSIGNMENT.fullmatch(cmd.argv[rest[0]]):
            assignments.append(cmd.argv[rest.pop(0)])
    if name in ("timeout", "flock", "taskset", "chrt") and rest:
        rest.pop(0)  # the duration, lock file, CPU mask or priority
    if name == "watch":
        return "", [("watch", " ".join(cmd.argv[i] for i in rest))] if rest else []
    if not rest:
        return "", []
    inner = replace(_slice(cmd, rest), assignments=tuple(assignments))
    if _option_value(cmd, _CHDIR.get(name, ())) is not None:
        inner = replace(inner, elsewhere=True)
    return "", [(name, replace(inner, elsewhere=inner.elsewhere or cmd.elsewhere))]


def _skip_options(cmd: SimpleCommand, args: list[int], with_arg: frozenset[str]) -> list[int]:
    """Indices of ``args`` left after the leading options (and ``--``)."""
    rest = list(args)
    while rest:
        word = cmd.argv[rest[0]]
        if word == "--":
            rest.pop(0)
            break
        if not word.startswith("-") or word == "-":
            break
        rest.pop(0)
        if word in with_arg and rest:
            rest.pop(0)
    return rest


def _option_value(cmd: SimpleCommand, names: tuple[str, ...]) -> str | None:
    short = {name[1] for name in names if len(name) == 2 and name[0] == "-"}
    for i, word in enumerate(cmd.argv[1:], start=1):
        clustered = word[:1] == "-" and word[1:2] != "-" and word[-1:] in short
        if (word in names or clustered) and i + 1 < len(cmd.argv):
            return cmd.argv[i + 1]
        for option in names:
            if option.startswith("--") and word.startswith(option + "="):
                return word[len(option) + 1 :]
    return None


def _slice(cmd: SimpleCommand, indices: list[int]) -> SimpleCommand:
    dynamic = cmd.dynamic or (False,) * len(cmd.argv)
    return SimpleCommand(
        argv=tuple(cmd.argv[i] for i in indices),
        dynamic=tuple(dynamic[i] for i in indices),
        globs=tuple(cmd.globs[i] for i in indices) if cmd.globs else (),
        depth=cmd.depth,
    )


def _shell(cmd: SimpleCommand, stdin_script: str | None) -> tuple[str, list[_Inner]]:
    """``bash [options] -c SCRIPT``, ``bash FILE``, or a shell reading standard input."""
    label = f"{cmd.name} -c"
    command_mode = False
    reads_stdin = False
    i = 1
    argv = cmd.argv
    while i < len(argv):
        word = argv[i]
        if word == "--" or word == "-":
            i += 1
            break
        if word in _SHELL_OPTION_ARGS:
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            command_mode = command_mode or "c" in word[1:]
            reads_stdin = reads_stdin or "s" in word[1:]
            i += 1
            continue
        break
    if command_mode:
        if i >= len(argv):
            raise ShellParseError(f"{cmd.name} -c has no script")
        return "", [(label, argv[i])]
    if i < len(argv) and not reads_stdin:
        return "", []  # runs a script file, like any other program
    if stdin_script is not None:
        return "", [(f"{cmd.name} <<", stdin_script)]
    return "a shell reading its script from standard input", []


def _find_exec(cmd: SimpleCommand) -> list[_Inner]:
    """The commands of ``find ... -exec CMD ... ;`` (and -execdir, -ok, -okdir)."""
    inners: list[_Inner] = []
    argv = cmd.argv
    roots = find_roots(cmd)
    i = 1
    while i < len(argv):
        if argv[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            start = i + 1
            end = start
            while end < len(argv) and argv[end] not in (";", "+"):
                end += 1
            if end > start:
                inner = replace(_slice(cmd, list(range(start, end))), found_in=roots)
                inners.append((f"find {argv[i]}", inner))
            i = end
        i += 1
    return inners


def find_roots(cmd: SimpleCommand) -> tuple[str, ...]:
    """The starting points of ``find [-H|-L|-P] [-D x] [-O n] PATH... EXPRESSION``."""
    argv = cmd.argv
    i = 1
    while i < len(argv) and (argv[i] in ("-H", "-L", "-P", "-D") or argv[i].startswith("-O")):
        i += 2 if argv[i] == "-D" else 1
    roots: list[str] = []
    while i < len(argv) and not argv[i].startswith(("-", "(", "!")) and argv[i] != ",":
        roots.append(argv[i])
        i += 1
    return tuple(roots) or (".",)


_FIND_PRINTS = frozenset(
    {"-printf", "-fprintf", "-ls", "-fls", "-exec", "-execdir", "-ok", "-okdir"}
)
_FILTERS = frozenset({"grep", "egrep", "fgrep", "sort", "uniq", "head", "tail", "tac", "rg"})
Feed = tuple[tuple[str, bool], ...]


def feed(out: list[SimpleCommand], start: int, before: Feed | None) -> Feed | None:
    """The files a pipeline element lists on its output when they are known: below the
    starting points of ``find`` (printing names only), the files ``grep -l``/``rg -l``
    search, or the input of a filter that passes lines through (``grep -v``, ``sort``)
    when that input was known. The commands ``into`` that ``xargs`` runs are marked
    ``fed_from`` the files the element before listed (``before``). The element's
    commands are ``out[start:]``."""
    for index in range(start, len(out)):
        if before and ("xargs" in out[index].wrappers or out[index].name == "xargs"):
            out[index] = replace(out[index], fed_from=before)
    if start >= len(out):
        return None
    cmd = out[start]
    if any(cmd.dynamic or ()) or cmd.redirects:
        return None
    if cmd.name == "find":
        if _FIND_PRINTS & set(cmd.argv):
            return None
        roots = find_roots(cmd)
        where = {word: i for i, word in enumerate(cmd.argv)}
        return tuple((root, cmd.is_glob(where.get(root, 0))) for root in roots)
    if cmd.name not in _FILTERS:
        return None
    letters = {c for a in cmd.argv[1:] if a[:1] == "-" and a[1:2] != "-" for c in a[1:]}
    longs = {a.split("=", 1)[0] for a in cmd.argv[1:] if a.startswith("--")}
    operands = [i for i, a in enumerate(cmd.argv) if i and not a.startswith("-")]
    lists = cmd.name in ("grep", "egrep", "fgrep", "rg") and (
        bool({"l", "L"} & letters) or bool({"--files-with-matches", "--files-without-match",
                                            "--files"} & longs)
    )  # fmt: skip
    if not lists:
        searcher = cmd.name in ("grep", "egrep", "fgrep", "rg")
        passes = not operands or (searcher and len(operands) == 1 and not {"e", "f"} & letters)
        return before if passes else None
    paths = operands if ({"e", "f"} & letters or "--files" in longs) else operands[1:]
    if not paths:
        recursive = bool({"r", "R"} & letters) or cmd.name == "rg"
        return ((".", False),) if recursive else None
    return tuple((cmd.argv[i], cmd.is_glob(i)) for i in paths)
