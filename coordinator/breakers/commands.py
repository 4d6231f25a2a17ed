"""What a shell command is, for the breakers: a verify run, a git call, a cleanup command.

Every answer comes from parsing the command into simple commands, never from
searching its text: ``echo "git commit"`` runs ``echo``, and a heredoc body is data.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from seawall.shell import ShellParseError, SimpleCommand, placed, simple_commands
from seawall.shell.gitargv import read_git

__all__ = [
    "CLEANUP_COMMANDS",
    "GitInvocation",
    "cleanup_refusal",
    "command_key",
    "git_invocations",
    "is_verify_command",
    "is_wait_command",
    "may_have_key",
    "parse_commands",
    "reads_only",
    "verify_passed",
    "verify_run",
]

CLEANUP_COMMANDS = (
    "git status",
    "git diff",
    "git log",
    "git show",
)  # examples: every git read the agents' git rule allows (``seawall.scope.gitpolicy``)

_TEST_TOOLS = frozenset(
    {"pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec", "ctest", "tsc",
     "phpunit", "nextest", "ava", "karma", "playwright"}
)  # fmt: skip
_SUBCOMMAND_TOOLS: dict[str, frozenset[str]] = {
    "cargo": frozenset({"test", "build", "check", "nextest", "t", "b"}),
    "go": frozenset({"test", "build", "vet"}),
    "mvn": frozenset({"test", "verify", "package", "compile", "install"}),
    "gradle": frozenset({"test", "build", "check", "assemble"}),
    "gradlew": frozenset({"test", "build", "check", "assemble"}),
    "mix": frozenset({"test", "compile"}),
    "dotnet": frozenset({"test", "build"}),
    "bazel": frozenset({"test", "build"}),
    "deno": frozenset({"test", "check"}),
    "swift": frozenset({"test", "build"}),
    "zig": frozenset({"test", "build"}),
    "bun": frozenset({"test"}),
}
_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_RUNNERS = frozenset({"uv", "poetry", "pdm", "hatch", "pipenv", "npx", "pnpx", "bunx", "rye"})
_MAKES = frozenset({"make", "gmake", "ninja", "just"})
_MAKE_TARGETS = frozenset({"test", "tests", "check", "build", "all", "ci", "verify"})
_PYTHON_MODULES = frozenset({"pytest", "unittest", "tox", "nox", "compileall"})
_FAILURE_MARKERS = re.compile(
    r"\b[1-9]\d* (?:failed|errors?|failures?)\b|\bFAILED\b|\bFAILURES\b|npm ERR!|"
    r"\berror(?:\[E\d+\])?:|BUILD FAILED|\bTraceback\b",
)
_VERIFY_HINT = re.compile(
    r"test|build|check|make|ninja|just|pytest|tox|nox|jest|vitest|mocha|rspec|tsc|"
    r"compile|verify|\bci\b|\ball\b|unittest|nextest|vet|package|install|assemble"
)


@lru_cache(maxsize=1024)
def parse_commands(command: str) -> tuple[SimpleCommand, ...] | None:
    """Every simple command ``command`` runs, or None when it cannot be parsed (cached:
    the breakers and detectors ask about the same command several times)."""
    try:
        return tuple(simple_commands(command))
    except ShellParseError:
        return None


def _plain_argv(command: str) -> tuple[str, ...] | None:
    """The argv of ``command`` when it is exactly one plain simple command, else None.

    None for chains, pipes, redirections, substitutions, unresolved expansions,
    assignments and wrappers: anything that could make one visible command do more.
    """
    commands = parse_commands(command)
    if commands is None or len(commands) != 1:
        return None
    only = commands[0]
    if (
        only.redirects
        or only.assignments
        or only.wrappers
        or only.opaque
        or only.subshell  # a background job, a pipeline or a ( ) group
        or any(only.dynamic)
    ):
        return None
    return only.argv if only.argv else None


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


# options that ask a tool about itself (or plan a run) instead of running checks
_INFO_OPTIONS = frozenset(
    {"--version", "-V", "--help", "-h", "--collect-only", "--co", "--list", "--listTests",
     "--showConfig", "--dry-run", "--fixtures", "--markers"}
)  # fmt: skip
_NO_CHECKS_RAN = re.compile(
    r"\bno tests ran\b|\bcollected 0 items\b|\bno tests? (?:were |was )?found\b|\bran 0 tests\b"
    r"|\bno test files found\b|\b0 tests? (?:passed|run|executed)\b|\bno test suite found\b",
    re.IGNORECASE,
)
# what may stand next to the one verify of a verify run: a ``cd`` before it, or a
# filter of its output (``pytest -q 2>&1 | tail -5``)
_BESIDE_VERIFY = frozenset({"cd", "pushd", "tail", "head", "grep", "cat", "wc", "sort", "uniq"})


def _argv_verifies(argv: Sequence[str]) -> bool:
    if not argv or not _INFO_OPTIONS.isdisjoint(argv):
        return False
    head = _base(argv[0])
    rest = [arg for arg in argv[1:] if not arg.startswith("-")]
    if head in _TEST_TOOLS:
        return True
    if head.startswith("python") and "-m" in argv:
        index = list(argv).index("-m")
        return index + 1 < len(argv) and argv[index + 1] in _PYTHON_MODULES
    if head in _RUNNERS:
        tail = list(argv[1:])
        if tail and tail[0] in {"run", "exec", "x"}:
            tail = tail[1:]
        while tail and tail[0].startswith("-"):
            tail = tail[1:]
        return _argv_verifies(tail)
    if head in _MAKES:
        if not {"-n", "--just-print", "--recon", "-q", "--question"}.isdisjoint(argv):
            return False  # make plans the run and builds nothing
        return not rest or any(target in _MAKE_TARGETS for target in rest)
    if head in _PACKAGE_MANAGERS and rest:
        if rest[0] in {"test", "t", "build"}:
            return True
        return rest[0] == "run" and len(rest) > 1 and bool(re.match(r"(test|build)", rest[1]))
    subcommands = _SUBCOMMAND_TOOLS.get(head)
    return subcommands is not None and bool(rest) and rest[0] in subcommands


@lru_cache(maxsize=4096)
def is_verify_command(command: str) -> bool:
    """True when one of the command's simple commands runs tests or a build."""
    if not _VERIFY_HINT.search(command):
        return False
    commands = parse_commands(command)
    return commands is not None and any(_argv_verifies(cmd.argv) for cmd in commands)


_WAITS = frozenset({"sleep", "wait", "true", ":"})


@lru_cache(maxsize=4096)
def is_wait_command(command: str) -> bool:
    """True when the command only waits (``sleep 30``, ``wait``): nothing else runs.

    ``sleep 2 && pnpm test`` is a test run that starts late, not a wait: the
    list of waits is narrow, and a wrapper around a real command never exempts it.
    """
    if "sleep" not in command and "wait" not in command:
        return False
    commands = parse_commands(command)
    if not commands:
        return False
    return all(cmd.name in _WAITS and not cmd.redirects for cmd in commands)


@lru_cache(maxsize=4096)
def verify_run(command: str) -> bool:
    """True when ``command`` is one verify command alone: a test or build run, with at
    most a ``cd`` before it and a filter of its output after it. ``pytest -q; sed -i …``
    is not (a second command does other work); ``pytest --version`` runs no check."""
    if not _VERIFY_HINT.search(command):
        return False
    commands = parse_commands(command)
    if not commands:
        return False
    verifies = 0
    for cmd in commands:
        if cmd.wrappers:
            continue  # run by a command of the line (``uv run pytest``), judged there
        if cmd.written_files or cmd.opaque or cmd.dynamic_name:
            return False
        if _argv_verifies(cmd.argv):
            verifies += 1
        elif cmd.name not in _BESIDE_VERIFY or (cmd.name in ("cd", "pushd") and cmd.subshell):
            return False
    return verifies == 1


_READ_PROGRAMS = frozenset(
    {"cat", "head", "tail", "less", "more", "wc", "ls", "pwd", "echo", "printf", "grep",
     "egrep", "fgrep", "rg", "ag", "stat", "file", "tree", "du", "df", "which", "type",
     "date", "whoami", "uname", "id", "sort", "uniq", "cut", "tr", "diff", "cmp", "jq",
     "nl", "basename", "dirname", "realpath", "readlink", "test", "[", "true", "false",
     "sleep", "cd", "pushd", "popd", "column", "fd", "sha256sum", "md5sum", "hexdump", "od"}
)  # fmt: skip
_GIT_READS = frozenset(
    {"status", "diff", "log", "show", "blame", "rev-parse", "ls-files", "grep", "shortlog",
     "describe", "rev-list", "cat-file", "ls-tree", "whatchanged", "reflog"}
)  # fmt: skip
_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fls",
                           "-fprintf", "-fprint0"})  # fmt: skip


def _reads_only(cmd: SimpleCommand) -> bool:
    name = cmd.name
    if name == "git":
        return len(cmd.argv) > 1 and cmd.argv[1] in _GIT_READS and "--output" not in cmd.argv
    if name == "sed":
        return not any(arg.startswith(("-i", "--in-place")) for arg in cmd.argv[1:])
    if name == "find":
        return _FIND_ACTIONS.isdisjoint(cmd.argv)
    return name in _READ_PROGRAMS


@lru_cache(maxsize=4096)
def reads_only(command: str) -> bool:
    """True when every program ``command`` runs only reads (``cat``, ``grep``,
    ``git diff``, ``sed -n``, ``find`` without actions) and nothing is redirected into
    a file. Unknown programs, substitutions the reader cannot see and wrappers are not."""
    commands = parse_commands(command)
    if not commands:
        return False
    return all(
        not cmd.written_files
        and not cmd.opaque
        and not cmd.dynamic_name
        and not cmd.assignments
        and _reads_only(cmd)
        for cmd in commands
    )


@lru_cache(maxsize=4096)
def command_key(command: str) -> str:
    """What "the same command" means: the programs and their arguments as the shell
    passes them (quoting and blank space gone), operands in order and options after
    them, sorted (flag order does not make another attempt). Unparsable text is
    compared blank-collapsed."""
    commands = parse_commands(command)
    if not commands:
        return " ".join(command.split())
    parts: list[str] = []
    for cmd in commands:
        options = sorted(word for word in cmd.argv[1:] if word.startswith("-"))
        operands = [word for word in cmd.argv[1:] if not word.startswith("-")]
        parts.append(" ".join((cmd.name, *operands, *options)))
    return " ; ".join(parts)


_NOT_PLAIN = re.compile(r"[\"'`$\\(){}~]")  # quoting, escapes, expansions: words change
_KEYS_SCANNED = 16


def may_have_key(command: str, keys: Collection[str]) -> bool:
    """Whether ``command_key(command)`` may be one of ``keys``, told without parsing
    when it can: in plain text (no quoting, escape or expansion) every word the shell
    passes is a piece of the text, so a key with a word the text lacks is not its key."""
    if len(keys) > _KEYS_SCANNED or _NOT_PLAIN.search(command) is not None:
        return True
    for key in keys:
        for word in _key_words(key):
            if word not in command:
                break
        else:
            return True
    return False


@lru_cache(maxsize=1024)
def _key_words(key: str) -> tuple[str, ...]:
    """The words of a command key, longest (the likeliest to be missing) first."""
    return tuple(sorted({word for word in key.split(" ") if word != ";"}, key=len, reverse=True))


def verify_passed(command: str, *, exit_ok: bool, output: str) -> bool:
    """Whether a verify command passed and ran checks: exit status 0, no word that no
    test ran, and, when a pipe can hide the status (``pytest | tail``), no failure
    summary in its output."""
    if not exit_ok or _NO_CHECKS_RAN.search(output) is not None:
        return False
    return "|" not in command or _FAILURE_MARKERS.search(output) is None


@dataclass(frozen=True, slots=True, kw_only=True)
class GitInvocation:
    """One ``git`` simple command: its subcommand, arguments and where it points.

    ``directory`` is the last ``-C`` value; ``git_dir``/``work_tree`` the values of
    ``--git-dir``/``--work-tree``; ``cwd`` the directory the line's ``cd``, ``pushd``
    and ``popd`` leave the call in (``seawall.shell.cwd``; None where the line started,
    ``"$"`` when not known); ``global_options`` tells
    whether any option came before the subcommand.
    """

    subcommand: str
    args: tuple[str, ...]
    directory: str | None = None
    git_dir: str | None = None
    work_tree: str | None = None
    cwd: str | None = None
    global_options: bool = False
    after_init: bool = False


def _git_invocation(argv: Sequence[str], cwd: str | None, after_init: bool) -> GitInvocation | None:
    read = read_git(argv)
    if read.subcommand is None or read.missing_value:
        return None
    return GitInvocation(
        subcommand=read.subcommand,
        args=read.args,
        directory=read.directory,
        git_dir=read.git_dir,
        work_tree=read.work_tree,
        cwd=cwd,
        global_options=bool(read.global_options) or read.unknown_global is not None,
        after_init=after_init,
    )


def git_invocations(command: str) -> list[GitInvocation] | None:
    """Every ``git`` call in ``command`` with the ``cd`` in force before it.

    None when the command cannot be parsed. ``after_init`` is set on calls that follow
    a ``git init``/``git clone`` in the same command line (a scratch repository).
    """
    if "git" not in command:
        return []
    commands = parse_commands(command)
    if commands is None:
        return None
    found: list[GitInvocation] = []
    after_init = False
    for cmd, places in placed(commands, _START):
        if cmd.name == "git" and not cmd.dynamic_name:
            invocation = _git_invocation(cmd.argv, _relative(places[-1]), after_init)
            if invocation is not None:
                found.append(invocation)
                after_init = after_init or invocation.subcommand in ("init", "clone")
    return found


_START = PurePosixPath(".")  # the call's own directory: places are relative to it


def _relative(place: PurePosixPath | None) -> str | None:
    """A git call's directory as ``GitInvocation.cwd`` gives it: None where the line
    started, ``"$"`` when not known, else the path (relative to the start, or absolute).
    Of the places a call may run in, the one most recently entered is taken."""
    if place is None:
        return "$"
    return None if place == _START else str(place)


def cleanup_refusal(command: str) -> str | None:
    """Why ``command`` is not a cleanup command, or None.

    A cleanup command is a single plain git command that the agents' git rule
    (``seawall.scope.gitpolicy``, the one place that says what an agent may do with git)
    allows: a read (``git status``, ``git diff``, ``git log``, ``git show`` ...). git
    writes (``add``, ``commit``, ``restore``, ``checkout -- <path>``) are refused to
    agents there, and so here: seawall records an agent's work itself. Compound
    commands, redirections, substitutions and git global options are refused.
    """
    from seawall.scope.gitpolicy import git_refusal
    from seawall.shell import SimpleCommand

    argv = _plain_argv(command)
    if argv is None:
        return (
            "only a single plain git command is allowed after a trip "
            "(no chains, pipes, redirections or substitutions)"
        )
    if argv[0] != "git" or len(argv) < 2:
        return "only the cleanup git commands (git reads) are allowed after a trip"
    refusal = git_refusal(SimpleCommand(argv=tuple(argv)))
    if refusal is not None:
        return f"{refusal[1]}; after a trip only git reads are cleanup commands"
    bad = [arg for arg in argv[2:] if arg.startswith(("--output", "--ext-diff"))]
    return f"git {argv[1]} {bad[0]} is not allowed after a trip" if bad else None
