"""What a shell command is, for the breakers: a verify run, a git call, a cleanup command.

Every answer comes from parsing the command into simple commands, never from
searching its text: ``echo "git commit"`` runs ``echo``, and a heredoc body is data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from coordinator.shell import ShellParseError, SimpleCommand, simple_commands
from coordinator.shell.gitargv import read_git

__all__ = [
    "CLEANUP_COMMANDS",
    "GitInvocation",
    "cleanup_refusal",
    "git_invocations",
    "is_verify_command",
    "is_wait_command",
    "parse_commands",
    "verify_passed",
]

CLEANUP_COMMANDS = (
    "git status",
    "git diff",
    "git checkout -- <path>",
    "git restore <path>",
    "git add <path>",
    "git commit",
)

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
    if only.redirects or only.assignments or only.wrappers or only.opaque or any(only.dynamic):
        return None
    return only.argv if only.argv else None


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _argv_verifies(argv: Sequence[str]) -> bool:
    if not argv:
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


_WAITS = frozenset({"sleep", "wait"})


@lru_cache(maxsize=4096)
def is_wait_command(command: str) -> bool:
    """True when the command waits on purpose (``sleep 30 && gh pr checks``): a poll."""
    if "sleep" not in command and "wait" not in command and "--watch" not in command:
        return False
    commands = parse_commands(command)
    return commands is not None and any(
        cmd.name in _WAITS or "--watch" in cmd.argv for cmd in commands
    )


def verify_passed(command: str, *, exit_ok: bool, output: str) -> bool:
    """Whether a verify command passed: exit status 0, and, when a pipe can hide the
    status (``pytest | tail``), no failure summary in its output."""
    if not exit_ok:
        return False
    return "|" not in command or _FAILURE_MARKERS.search(output) is None


@dataclass(frozen=True, slots=True, kw_only=True)
class GitInvocation:
    """One ``git`` simple command: its subcommand, arguments and where it points.

    ``directory`` is the last ``-C`` value; ``git_dir``/``work_tree`` the values of
    ``--git-dir``/``--work-tree``; ``cwd`` the directory of a preceding ``cd`` in the
    same command line (``"$"`` when it was not a literal path); ``global_options`` tells
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
    cwds: dict[tuple[str, ...], str] = {}  # the cd in force per nesting context
    after_init = False
    for cmd in commands:
        head = cmd.name
        if head in ("cd", "pushd"):
            literal = len(cmd.argv) > 1 and not cmd.dynamic[1] and cmd.argv[1] != "~"
            base = _cwd_for(cwds, cmd.wrappers)
            cwds[cmd.wrappers] = _join(base, cmd.argv[1]) if literal else "$"
        elif head == "git" and not cmd.dynamic_name:
            invocation = _git_invocation(cmd.argv, _cwd_for(cwds, cmd.wrappers), after_init)
            if invocation is not None:
                found.append(invocation)
                after_init = after_init or invocation.subcommand in ("init", "clone")
    return found


def _cwd_for(cwds: dict[tuple[str, ...], str], wrappers: tuple[str, ...]) -> str | None:
    """The cd in force for a command nested in ``wrappers`` (``bash -c`` inherits the
    directory of the shell that runs it)."""
    for depth in range(len(wrappers), -1, -1):
        cwd = cwds.get(wrappers[:depth])
        if cwd is not None:
            return cwd
    return None


def _join(base: str | None, target: str) -> str:
    if base is None or target.startswith("/") or base == "$":
        return target if base != "$" or target.startswith("/") else "$"
    return f"{base}/{target}"


def _is_amend(arg: str) -> bool:
    name = arg.partition("=")[0]
    return len(name) >= 4 and "--amend".startswith(name)


def cleanup_refusal(command: str) -> str | None:
    """Why ``command`` is not one of the six cleanup commands (spec 003), or None.

    Allowed: ``git status``, ``git diff``, ``git checkout -- <path>``,
    ``git restore <path>``, ``git add <path>``, ``git commit`` (never ``--amend``).
    Compound commands, redirections, substitutions and git global options are refused.
    """
    argv = _plain_argv(command)
    if argv is None:
        return (
            "only a single plain git command is allowed after a trip "
            "(no chains, pipes, redirections or substitutions)"
        )
    if argv[0] != "git" or len(argv) < 2:
        return "only the cleanup git commands are allowed after a trip"
    subcommand, args = argv[1], argv[2:]
    paths = [arg for arg in args if not arg.startswith("-")]
    options = [arg for arg in args if arg.startswith("-") and arg != "--"]
    if subcommand == "status":
        return None
    if subcommand == "diff":
        bad = [arg for arg in options if arg.startswith(("--output", "--ext-diff"))]
        return f"git diff {bad[0]} is not allowed after a trip" if bad else None
    if subcommand == "checkout":
        if args[:1] != ("--",) or len(args) < 2:
            return "only `git checkout -- <path>` is allowed after a trip"
        return None
    if subcommand == "restore":
        bad = [arg for arg in options if arg not in ("--staged", "-S", "--worktree", "-W")]
        if bad or not paths:
            return "only `git restore [--staged|--worktree] <path>` is allowed after a trip"
        return None
    if subcommand == "add":
        if options or not paths:
            return "only `git add <path>` is allowed after a trip"
        return None
    if subcommand == "commit":
        if any(_is_amend(arg) for arg in options):
            return "git commit --amend is refused: existing commits are the run's durable record"
        return None
    return f"git {subcommand} is not one of the cleanup commands"
