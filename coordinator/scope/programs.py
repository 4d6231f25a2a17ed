"""The allow-list of the command policy for dispatched agents.

A program is allowed when what it may write is known:

- ``READERS`` write nothing but their redirections (which the scope check judges);
- ``seawall.shell.writes.WRITERS`` write the operands that module models, each
  judged against the scope (``tar -x -C dir``, ``sort -o``, ``curl -o``, ...);
- wrappers (``env``, ``timeout``, ``xargs``, ``find -exec``, ``bash -c`` ...) are
  judged by the commands they run, which the shell reader unwraps;
- ``PROJECT_TOOLS`` run the project's own code (its tests, its build, its
  interpreters). What such code writes cannot be read from a command line: the OS
  sandbox confines it, and the post-wave check sees it. They are allowed so that an
  agent can do its work, and docs/scope.md says so.

Programs whose writes cannot be modelled at all (an interpreter given its program on
the command line: ``python -c``, ``perl -e``, ``node -e``, ``ruby -e``; ``inline_code``)
are the OS layer's job: the hook lets them run where one confines the agent, and in a
strict wave without any OS layer refuses them, saying so.

Anything else is *unknown*: a program not named here, a program that runs code from
where the reader cannot see it (``eval``, ``trap``, ``alias``, ``source <(...)``,
``. /dev/stdin``, ``parallel``, ``npx``, ``vim -es``, ``sudo``), a sed or awk program
that writes or runs commands, a read whose script is a file. Unknown is denied in
strict and warned in warn.
"""

from __future__ import annotations

import re

from seawall.shell import SimpleCommand
from seawall.shell.writes import WRITERS

__all__ = [
    "PROJECT_TOOLS",
    "READERS",
    "WRAPPERS",
    "asks_for_help",
    "inline_code",
    "unknown_reason",
    "variable_reason",
]

READERS = frozenset(
    {
        ":", "[", "[[", "basename", "break", "cat", "cd", "cksum", "cmp", "column", "comm",
        "command", "continue", "cut", "date", "declare", "df", "diff", "dirname", "dirs",
        "du", "echo", "egrep", "env", "exit", "expand", "export", "expr", "false", "fgrep",
        "file", "fmt", "fold", "free", "getconf", "grep", "hash", "head", "hexdump",
        "hostname", "id", "jq", "join", "less", "let", "local", "locale", "ls", "lsof",
        "md5sum", "more", "nl", "nproc", "numfmt", "od", "paste", "pgrep", "popd", "printenv",
        "printf", "ps", "pushd", "pwd", "read", "readlink", "readonly", "realpath", "return",
        "rev", "rg", "ag", "ack", "seq", "set", "sha1sum", "sha224sum", "sha256sum",
        "sha384sum", "sha512sum", "b2sum", "base64", "shift", "shopt", "sleep", "stat",
        "strings", "tac", "tail", "test", "tr", "tree", "true", "tty", "type", "typeset",
        "ulimit", "umask", "uname", "unexpand", "unset", "uptime", "wait", "wc", "whereis",
        "which", "whoami", "xxd", "yes", "zcat", "zgrep", "zless", "bzcat", "xzcat",
        "getopts", "times", "nohup", "time", "nice", "timeout", "stdbuf",
        "setsid", "chronic", "unbuffer", "flock", "ionice", "taskset", "chrt", "watch",
        "xargs", "builtin", "exec", "ss", "netstat", "bc", "dc", "lscpu", "lsblk", "vmstat",
        "iostat", "w", "who", "last", "groups", "tput", "sort", "uniq",
    }
)  # fmt: skip
WRAPPERS = frozenset(
    {"env", "command", "builtin", "exec", "nohup", "time", "nice", "timeout", "stdbuf",
     "setsid", "chronic", "unbuffer", "flock", "ionice", "taskset", "chrt", "watch", "xargs"}
)  # fmt: skip
PROJECT_TOOLS = frozenset(
    {
        "python", "python3", "pytest", "py.test", "tox", "nox", "coverage", "make", "gmake",
        "ninja", "meson", "cmake", "ctest", "cargo", "rustc", "rustfmt", "go", "gofmt",
        "gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "ar", "javac", "java", "mvn",
        "gradle", "node", "npm", "pnpm", "yarn", "bun", "deno", "tsc", "jest", "vitest",
        "mocha", "eslint", "prettier", "ruff", "black", "isort", "mypy", "pyright",
        "flake8", "pylint", "pre-commit", "uv", "poetry", "pip", "pip3", "hatch", "pdm",
        "pipenv", "ruby", "bundle", "rake", "rspec", "php", "composer", "dotnet", "swift",
        "perl", "shellcheck", "bats", "sh", "bash", "zsh", "dash", "ksh", "source", ".",
        "seawall",  # the lead's own steps (``seawall wave review``) during a live wave
    }
)  # fmt: skip
_PROJECT_PREFIXES = ("python3.", "pip3.", "pytest-")
# package runners: they fetch and run code that is not in the repository
_FETCH_AND_RUN = {
    "npm": ("exec", "x"), "pnpm": ("dlx", "exec"), "yarn": ("dlx",), "bun": ("x",),
    "uv": ("tool",), "pipx": (), "uvx": (), "npx": (), "bunx": (), "pnpx": (),
}  # fmt: skip
_SCRIPT_FILES = ("/dev/stdin", "/dev/fd/", "/proc/self/fd/", "/proc/")
# a sed ``w``/``W`` (write a file) or ``e`` (run a command), alone or as an ``s`` flag
_SED_WRITES = re.compile(r"(?:^|[;{}\n0-9$/])\s*[wWe](?=\s|$)|/[gpiImM0-9]*[we](?=[\s;}]|$)")
_AWK_WRITES = re.compile(r"system|getline|>|\||fflush|close|@load|@include")


# variables that choose which program runs, or load code into every program
_CODE_VARIABLES = frozenset(
    {"PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PS4", "IFS",
     "BASH_FUNC", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"}
)  # fmt: skip


def variable_reason(name: str) -> str | None:
    """Why assigning the variable ``name`` makes what later commands run unknown."""
    if name in _CODE_VARIABLES or name.startswith(("LD_", "DYLD_", "BASH_FUNC_")):
        return f"{name}= changes which program runs or loads code into it"
    return None


# programs of which only some subcommands are reads: those are allowed, nothing else
_READ_SUBCOMMANDS = {
    "docker": frozenset({"ps", "images", "logs", "inspect", "version", "info", "stats", "top",
                         "port", "diff", "history", "events"}),
    "podman": frozenset({"ps", "images", "logs", "inspect", "version", "info", "stats", "top",
                         "port", "diff", "history", "events"}),
    "kubectl": frozenset({"get", "describe", "logs", "version", "explain", "top"}),
    "gh": frozenset({"status"}),
}  # fmt: skip
_HELP = frozenset({"--help", "-h", "-help", "--version", "-V", "help"})


def asks_for_help(args: tuple[str, ...], *, known: bool = True) -> bool:
    """Whether a command only asks for its help or version: ``--help`` (or ``--version``)
    anywhere, or, for a ``known`` program, ``-h`` / ``help`` / ``-V`` as its only
    argument (which an unknown program may read otherwise). Such a call prints and
    exits; it writes nothing."""
    if "--help" in args or "--version" in args:
        return True
    return known and len(args) == 1 and args[0] in _HELP


def unknown_reason(cmd: SimpleCommand) -> str | None:
    """Why what ``cmd`` may write is not known, or None when the allow-list covers it."""
    name = cmd.name
    if not cmd.argv:
        return None
    known = name in READERS or name in WRITERS or name in PROJECT_TOOLS
    if not any(cmd.dynamic or ()) and asks_for_help(cmd.argv[1:], known=known):
        return None  # ``tool --help``: a read
    if name == "ss" and any(a in ("-K", "--kill") or a.startswith("-K") for a in cmd.argv[1:]):
        return "ss -K closes other programs' connections"
    reads = _READ_SUBCOMMANDS.get(name)
    if reads is not None:
        operands = [a for a in cmd.argv[1:] if not a.startswith("-")]
        if operands and operands[0] in reads:
            return None
        what = f"{name} {operands[0]}" if operands else name
        return f"{what} may change state outside the repository; only its reads are allowed"
    if name in ("kill", "pkill"):
        return _signal_reason(cmd)
    if name in _FETCH_AND_RUN:
        verbs = _FETCH_AND_RUN[name]
        if not verbs or (len(cmd.argv) > 1 and cmd.argv[1] in verbs):
            return (
                f"{name} fetches and runs code that is not in the repository (a tool "
                "installed in its node_modules/.bin runs as `npx TOOL`)"
            )
    if name in ("source", ".", "sh", "bash", "zsh", "dash", "ksh"):
        return _script_reason(cmd)
    if name in ("sed",):
        return _program_reason(cmd, _SED_WRITES, "a sed script that writes files or runs commands")
    if name in ("awk", "gawk", "mawk", "nawk"):
        return _program_reason(cmd, _AWK_WRITES, "an awk program that writes or runs commands")
    if name == "hash" and any(a.startswith("-p") for a in cmd.argv[1:]):
        return "hash -p names another file as a program"
    if name in ("make", "gmake") and any(a.startswith(("-C", "--directory")) for a in cmd.argv[1:]):
        return f"{name} -C runs in a directory other than the one the command starts in"
    if name in READERS or name in WRITERS or name in PROJECT_TOOLS:
        return None
    if any(name.startswith(prefix) for prefix in _PROJECT_PREFIXES):
        return None
    if _project_script(cmd):
        return None  # ``./run.sh`` is judged as ``bash run.sh``: the project's own code
    if cmd.function:
        return None  # ``f() { pytest -q; }; f``: the body's commands were judged
    return f"{name!r} is not a program whose writes seawall knows"


def _project_script(cmd: SimpleCommand) -> bool:
    """A script of the project run by its path (``./tests/run.sh``, ``scripts/build``):
    like ``bash tests/run.sh``, the project's own code, which the OS sandbox confines.
    A path outside the working tree (absolute, or climbing with ``..``) is not."""
    path = cmd.argv[0]
    if "/" not in path or path.startswith(("/", "~")) or (cmd.dynamic and cmd.dynamic[0]):
        return False
    return ".." not in path.split("/")


def _script_reason(cmd: SimpleCommand) -> str | None:
    """A shell or ``source`` running a script: fine from a file, unknown from elsewhere."""
    if cmd.opaque:
        return cmd.opaque
    if any(a[:1] == "-" and a[1:2] != "-" and "c" in a for a in cmd.argv[1:]):
        return None  # ``bash -c SCRIPT``: the reader judges the script's own commands
    operands = [i for i, a in enumerate(cmd.argv) if i and not a.startswith(("-", "+"))]
    if cmd.name in ("source", ".") and not operands:
        return f"{cmd.name} without a file"
    for index in operands[:1]:
        if cmd.dynamic and cmd.dynamic[index]:
            return f"{cmd.name} runs a script whose name is not known ({cmd.argv[index]!r})"
        if cmd.argv[index].startswith(_SCRIPT_FILES):
            return f"{cmd.name} runs a script from {cmd.argv[index]!r}, not from a file"
    return None


_VALUE_OPTIONS = frozenset({"-v", "-F", "-i", "-l", "-e", "-f", "-s", "--expression", "--file"})


def _first_operand(argv: tuple[str, ...]) -> list[str]:
    skip = False
    for word in argv[1:]:
        if skip:
            skip = False
        elif word == "--":
            continue
        elif word.startswith("-") and word != "-":
            skip = word in _VALUE_OPTIONS
        else:
            return [word]
    return []


def _program_reason(cmd: SimpleCommand, writes: re.Pattern[str], what: str) -> str | None:
    """sed/awk: the program text must be visible, and must not write or run commands."""
    argv = cmd.argv
    if any(a in ("-f", "--file") or a.startswith(("--file=", "-f")) for a in argv[1:]):
        return f"{cmd.name} reads its program from a file"
    scripts = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-e", "--expression")]
    if not scripts:
        scripts = _first_operand(argv)
    if cmd.dynamic and any(cmd.dynamic[1:]):
        return f"{cmd.name}'s arguments are not known before it runs"
    if any(writes.search(script) for script in scripts):
        return what
    return None


# interpreters given their program on the command line: (options, short letters)
_INLINE: dict[str, tuple[frozenset[str], str]] = {
    "python": (frozenset({"-c"}), "c"),
    "perl": (frozenset({"-e", "-E"}), "eE"),
    "node": (frozenset({"-e", "--eval", "-p", "--print"}), "ep"),
    "ruby": (frozenset({"-e"}), "e"),
    "php": (frozenset({"-r"}), "r"),
    "bun": (frozenset({"-e", "--eval"}), ""),
    "deno": (frozenset({"eval"}), ""),
}


def inline_code(cmd: SimpleCommand) -> str | None:
    """``python -c``, ``perl -e``, ``node -e`` ...: the interpreter and its option when
    ``cmd`` runs a program written on its command line, whose writes nothing models."""
    name = cmd.name
    if name.startswith("python") and name[6:].replace(".", "").isdigit():
        name = "python"
    rule = _INLINE.get(name)
    if rule is None:
        return None
    options, letters = rule
    for word in cmd.argv[1:]:
        if word == "--":
            return None
        if word in options:
            return f"{cmd.name} {word}"
        short = word[:1] == "-" and word[1:2] not in ("-", "I", "M", "m", "x", "")
        if short and letters and any(letter in word[1:] for letter in letters):
            return f"{cmd.name} {word}"
        if not word.startswith("-"):
            return None  # a script file: its arguments follow
    return None


_OWN = frozenset({"$!", "$$"})  # the last background job, the agent's own shell


def _signal_reason(cmd: SimpleCommand) -> str | None:
    """``kill``/``pkill`` of the agent's own processes only: a job (``kill %1``), the
    last background job (``kill $!``), the children of its own shell (``pkill -P $$``)."""
    argv = cmd.argv
    if cmd.name == "pkill":
        parents = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-P", "--parent")]
        parents += [a.split("=", 1)[1] for a in argv if a.startswith("--parent=")]
        if parents and all(p in _OWN for p in parents):
            return None
        return (
            "pkill may stop other programs' processes; only `pkill -P $$` (the children "
            "of your own shell) is allowed"
        )
    rest = list(argv[1:])
    if rest and rest[0] in ("-s", "-n"):
        rest = rest[2:]  # the signal, then the processes
    elif rest and rest[0].startswith("-") and rest[0] not in ("--",):
        rest = rest[1:]  # ``-9``, ``-TERM``, ``-l``: the signal; what follows is processes
    operands = [word for word in rest if word != "--"]
    if all(o.startswith("%") or o in _OWN for o in operands):
        return None
    return (
        "kill may stop processes that are not this agent's; only its own jobs are allowed "
        "(`kill %1`, `kill $!`)"
    )
