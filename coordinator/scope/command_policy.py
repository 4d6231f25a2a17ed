"""The command policy: a default deny list plus the plan's allow/deny overlays.

Every simple command a Bash line would run (``seawall.shell.simple_commands``: chains,
subshells, substitutions, wrappers, ``bash -c`` at any depth) is checked on its own. The
default list denies what destroys work that is not the agent's: force pushes and remote
deletes, ``git reset --hard``, ``git clean -f``, ``git stash`` and branch switches in a
shared tree, ``git checkout``/``git restore`` of paths outside the scope, ``rm -r`` of
the root, the home directory or the whole workspace, and a few machine-level commands.

For a dispatched agent (``CommandContext.agent``) the policy is an allow-list on top:
programs whose writes are known (``seawall.scope.programs``) and git that only
reads (``seawall.scope.gitpolicy``); ``GIT_*`` variables are refused.

Overlays (``CommandPolicyConfig``) are command prefixes in shell syntax whose tokens may
use ``*`` globs. ``allow`` lifts a default deny (or an allow-list refusal) for the
commands it matches; ``deny`` adds one, and wins over ``allow``. A line that cannot be
parsed, a program named by an unresolved expansion, a program off the allow-list or a
shell reading an invisible script is *unknown*: the enforcement level decides what
unknown means (denied in strict).
"""

from __future__ import annotations

import fnmatch
import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from seawall.errors import ConfigurationError
from seawall.model import CommandPolicyConfig
from seawall.scope.gitpolicy import git_refusal
from seawall.scope.matcher import ScopeMatcher
from seawall.scope.programs import unknown_reason, variable_reason
from seawall.shell import ShellParseError, SimpleCommand, simple_commands
from seawall.shell.gitargv import git_argv, read_git

__all__ = [
    "CommandContext",
    "CommandFinding",
    "CommandPolicy",
    "FindingKind",
    "git_argv",
]


_FORCE_PUSH_OPTIONS = frozenset(
    {"--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "--prune"}
)


class FindingKind(StrEnum):
    DENIED = "denied"  # a rule denies the command
    UNKNOWN = "unknown"  # what would run cannot be known


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandFinding:
    """One objection to a command line: the simple command, the rule, and why."""

    kind: FindingKind
    rule: str
    reason: str
    command: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandContext:
    """What the rules need to know about where the command runs."""

    cwd: Path
    shared_tree: bool = True
    matcher: ScopeMatcher | None = None
    home: str = ""
    agent: bool = False  # a dispatched agent: the allow-list and the git policy apply


_Rule = Callable[[SimpleCommand, tuple[str, ...], CommandContext], str | None]


class CommandPolicy:
    """Checks command lines against the default deny list and the plan's overlays."""

    def __init__(self, config: CommandPolicyConfig | None = None) -> None:
        config = config or CommandPolicyConfig()
        self.allow = tuple(_prefix(entry) for entry in config.allow)
        self.deny = tuple(_prefix(entry) for entry in config.deny)

    def check(self, command: str, context: CommandContext) -> list[CommandFinding]:
        """Every objection to ``command``; an empty list means it may run."""
        try:
            commands = simple_commands(command)
        except ShellParseError as exc:
            return [_unknown("unparseable", f"the command cannot be parsed ({exc})", command)]
        findings: list[CommandFinding] = []
        for cmd in commands:
            findings.extend(self.check_simple(cmd, context))
        return findings

    def check_simple(self, cmd: SimpleCommand, context: CommandContext) -> list[CommandFinding]:
        """The objections to one simple command."""
        shown = shlex.join(cmd.argv)
        if cmd.opaque:
            return [_unknown("opaque", cmd.opaque, shown)]
        if cmd.argv and cmd.dynamic_name:
            return [_unknown("dynamic-program", f"the program {cmd.argv[0]!r} is not known", shown)]
        if context.agent and _git_alias(cmd.argv) is not None:
            return _agent_findings(cmd, shown)  # ``git -c`` is refused to agents outright
        alias = _git_alias(cmd.argv)
        if alias is not None:
            return self._check_alias(cmd, alias, context)
        views = _views(cmd)
        for prefix in self.deny:
            if any(_prefix_matches(prefix, view) for view in views):
                return [_denied(f"plan deny {shlex.join(prefix)!r}", "the plan denies it", shown)]
        if any(_prefix_matches(prefix, view) for prefix in self.allow for view in views):
            return []
        if context.agent and (tool := _package_tool(cmd, context)) is not None:
            cmd = tool  # ``npx jest``: judged as ``node_modules/.bin/jest``
        findings = _agent_findings(cmd, shown) if context.agent else []
        for name, rule in _RULES:
            reason = rule(cmd, views[-1], context)
            if reason:
                findings.append(_denied(name, reason, shown))
        return findings

    def _check_alias(
        self, cmd: SimpleCommand, alias: str | tuple[str, ...], context: CommandContext
    ) -> list[CommandFinding]:
        """``git -c alias.x=... x``: check what the alias runs instead of the alias."""
        if isinstance(alias, str):
            return self.check(alias, context)
        inner = SimpleCommand(argv=alias, wrappers=(*cmd.wrappers, "git alias"), depth=cmd.depth)
        return self.check_simple(inner, context)


def _git_alias(argv: Sequence[str]) -> str | tuple[str, ...] | None:
    """What an inline ``git -c alias.NAME=VALUE NAME ...`` runs: a script or a git argv."""
    if not argv or argv[0].rsplit("/", 1)[-1] != "git":
        return None
    read = read_git(argv)
    if read.subcommand is None:
        return None
    aliases: dict[str, str] = {}
    options = argv[: len(argv) - len(read.args) - 1]  # the words before the subcommand
    for i, word in enumerate(options[:-1]):
        if word == "-c" and options[i + 1].startswith("alias."):
            name, _, value = options[i + 1].removeprefix("alias.").partition("=")
            aliases[name] = value
    alias = aliases.get(read.subcommand)
    if alias is None:
        return None
    if alias.startswith("!"):
        return " ".join([alias[1:], *(shlex.quote(a) for a in read.args)])
    try:
        return ("git", *shlex.split(alias), *read.args)
    except ValueError:
        return "'"  # an alias that does not even split: unparseable


def _agent_findings(cmd: SimpleCommand, shown: str) -> list[CommandFinding]:
    """The allow-list: what an agent may run is what seawall knows the writes of."""
    names = [a.split("=", 1)[0].removesuffix("+") for a in _exported(cmd)]
    variables = [name for name in names if name.startswith("GIT_")]
    if variables:
        reason = f"{variables[0]} points git at other state; agents may not set GIT_*"
        return [_denied("git-environment", reason, shown)]
    loaders = [why for name in names if (why := variable_reason(name))]
    if loaders:
        return [_unknown("code-variable", loaders[0], shown)]
    if cmd.name == "git":
        refusal = git_refusal(cmd)
        if refusal is None:
            return []
        unknown, reason = refusal
        finding = _unknown if unknown else _denied
        return [finding("git-unknown" if unknown else "git", reason, shown)]
    why = unknown_reason(cmd)
    return [_unknown("not-allow-listed", why, shown)] if why else []


_PACKAGE_RUNNERS = {"npx": 1, "pnpx": 1, "bunx": 1}  # the word where the tool is named
_NPX_FLAGS = frozenset({"--no-install", "--no", "-y", "--yes", "-q", "--quiet", "--offline"})


def _package_tool(cmd: SimpleCommand, context: CommandContext) -> SimpleCommand | None:
    """``npx TOOL ...`` (``npm exec TOOL``, ``pnpm exec TOOL``) as the repository's own
    ``node_modules/.bin/TOOL ...`` when the tool is installed there (found from the
    working directory up to the workspace); None otherwise (it would be fetched)."""
    argv = cmd.argv
    start = _PACKAGE_RUNNERS.get(cmd.name)
    if start is None and len(argv) > 2 and (cmd.name, argv[1]) in (
        ("npm", "exec"), ("npm", "x"), ("pnpm", "exec")
    ):  # fmt: skip
        start = 2
    if start is None:
        return None
    rest = list(argv[start:])
    while rest and (rest[0] in _NPX_FLAGS or rest[0] == "--"):
        rest.pop(0)
    if not rest or rest[0].startswith("-") or "@" in rest[0] or "/" in rest[0]:
        return None  # ``-p``/``-c``, a version or a path: fetched or not the repository's
    if cmd.dynamic and any(cmd.dynamic[: start + 1]):
        return None
    root = context.matcher.workspace if context.matcher is not None else context.cwd
    here = Path(os.path.realpath(context.cwd))
    for folder in (here, *here.parents):
        if (folder / "node_modules" / ".bin" / rest[0]).is_file():
            return SimpleCommand(
                argv=(f"node_modules/.bin/{rest[0]}", *rest[1:]),
                redirects=cmd.redirects,
                assignments=cmd.assignments,
                wrappers=(*cmd.wrappers, cmd.name),
                depth=cmd.depth,
                subshell=cmd.subshell,
            )
        if folder == root or root not in folder.parents:
            break
    return None


def _exported(cmd: SimpleCommand) -> list[str]:
    """Assignments ``cmd`` makes for the programs it runs (prefix, ``export``, ``env``)."""
    found = list(cmd.assignments)
    if cmd.name in ("export", "declare", "typeset", "local", "readonly", "env"):
        found.extend(a for a in cmd.argv[1:] if "=" in a and not a.startswith("-"))
    return found


def _unknown(rule: str, reason: str, shown: str) -> CommandFinding:
    return CommandFinding(kind=FindingKind.UNKNOWN, rule=rule, reason=reason, command=shown)


def _denied(rule: str, reason: str, shown: str) -> CommandFinding:
    return CommandFinding(kind=FindingKind.DENIED, rule=rule, reason=reason, command=shown)


def _views(cmd: SimpleCommand) -> tuple[tuple[str, ...], ...]:
    """The argv as written and, for git, without global options (last)."""
    argv = (cmd.name, *cmd.argv[1:]) if cmd.argv else ()
    if cmd.name == "git":
        return (argv, git_argv(argv))
    return (argv,)


def _prefix(entry: str) -> tuple[str, ...]:
    try:
        tokens = tuple(shlex.split(entry))
    except ValueError as exc:
        raise ConfigurationError(f"command policy entry {entry!r} does not parse: {exc}") from exc
    if not tokens:
        raise ConfigurationError(f"empty command policy entry {entry!r}")
    return tokens


def _prefix_matches(prefix: tuple[str, ...], argv: tuple[str, ...]) -> bool:
    if len(argv) < len(prefix):
        return False
    return all(fnmatch.fnmatchcase(word, token) for token, word in zip(prefix, argv, strict=False))


# ----- the default deny list ----------------------------------------------------------


def _short_flags(args: Sequence[str]) -> set[str]:
    flags: set[str] = set()
    for arg in args:
        if arg.startswith("-") and not arg.startswith("--"):
            flags.update(arg[1:])
    return flags


def _git_sub(argv: tuple[str, ...], name: str) -> tuple[str, ...] | None:
    if len(argv) >= 2 and argv[0] == "git" and argv[1] == name:
        return argv[2:]
    return None


def _force_push(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    args = _git_sub(argv, "push")
    if args is None:
        return None
    long = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    if long & _FORCE_PUSH_OPTIONS or {"f", "d"} & _short_flags(args):
        return "force pushes and remote deletes rewrite shared history"
    refspecs = [a for a in args if not a.startswith("-")][1:]
    if any(ref.startswith(("+", ":")) for ref in refspecs):
        return "force pushes and remote deletes rewrite shared history"
    return None


def _reset_hard(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    args = _git_sub(argv, "reset")
    if args is not None and ({"--hard", "--merge", "--keep"} & set(args)):
        return "git reset --hard discards uncommitted work, including other agents' work"
    return None


def _clean_force(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    args = _git_sub(argv, "clean")
    if args is not None and ("f" in _short_flags(args) or "--force" in args):
        return "git clean -f deletes untracked files, including other agents' new files"
    return None


def _stash(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    args = _git_sub(argv, "stash")
    if args is None or not ctx.shared_tree:
        return None
    if args and args[0] in ("list", "show"):
        return None
    return "git stash in a shared working tree takes other agents' changes with it"


def _history(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    if not ctx.shared_tree or len(argv) < 2 or argv[0] != "git":
        return None
    sub, args = argv[1], argv[2:]
    moves = sub in ("merge", "rebase", "pull", "cherry-pick", "revert", "am")
    if sub == "commit" and "--amend" in args:
        moves = True
    if sub == "reset" and "--" not in args:
        operands = [a for a in args if not a.startswith("-")]
        moves = any(not (ctx.cwd / operand).exists() for operand in operands)
    if moves:
        return f"git {sub} moves the branch every agent in this shared tree works on"
    return None


def _alias_config(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    if len(argv) >= 3 and argv[:2] == ("git", "config"):
        keys = [a for a in argv[2:] if not a.startswith("-")]
        if keys and keys[0].lower().startswith(("alias.", "core.hookspath", "core.sshcommand")):
            return "defining git aliases or hooks hides what later commands run"
    return None


def _switch(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    if not ctx.shared_tree or len(argv) < 2 or argv[0] != "git":
        return None
    if argv[1] == "switch" or (argv[1] == "checkout" and _checkout_switches(argv[2:], ctx)):
        return "switching branches in a shared working tree changes every agent's files"
    return None


def _checkout_switches(args: tuple[str, ...], ctx: CommandContext) -> bool:
    if "--" in args:
        return False
    if {"-b", "-B", "--orphan", "--detach"} & set(args):
        return True
    operands = [a for a in args if a == "-" or not a.startswith("-")]
    return len(operands) == 1 and not (ctx.cwd / operands[0]).exists()


def _checkout_paths(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    paths = _pathspecs(argv, ctx)
    if not paths or ctx.matcher is None:
        return None
    for spec in paths:
        if any(ch in spec for ch in "*?[") or spec.startswith(":"):
            return f"the pathspec {spec!r} may reach files outside this task's scope"
        verdict = ctx.matcher.check(spec, cwd=ctx.cwd)
        if not verdict.allowed:
            return f"it would discard changes to {verdict.path}, outside this task's scope"
    return None


_PATHSPEC_OPTION_ARGS = frozenset({"-s", "--source", "-b", "-B", "--orphan", "--conflict"})


def _pathspecs(argv: tuple[str, ...], ctx: CommandContext) -> list[str]:
    """The paths ``git checkout``/``git restore`` would overwrite.

    ``git checkout [TREE-ISH] [--] PATH...``: without ``--``, a first operand that is
    not an existing path is the tree-ish (``git checkout main src/app.py``), not a path.
    """
    if len(argv) < 3 or argv[0] != "git" or argv[1] not in ("checkout", "restore"):
        return []
    args = argv[2:]
    if "--" in args:
        return list(args[args.index("--") + 1 :])
    operands: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-") and arg != "-":
            skip = arg in _PATHSPEC_OPTION_ARGS
        else:
            operands.append(arg)
    if argv[1] == "restore":
        return operands
    if operands and not (ctx.cwd / operands[0]).exists():
        operands = operands[1:]  # the tree-ish (a branch, a commit, ``-``)
    return operands


def _rm_root(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    if cmd.name not in ("rm", "rmdir") or len(argv) < 2:
        return None
    args = argv[1:]
    recursive = bool({"r", "R"} & _short_flags(args)) or "--recursive" in args
    if "--no-preserve-root" in args:
        return "rm --no-preserve-root is never needed for a task"
    if not recursive:
        return None
    home = ctx.home or str(Path.home())
    for target in (a for a in args if not a.startswith("-")):
        expanded = target.replace("${HOME}", home).replace("$HOME", home)
        expanded = home + expanded[1:] if expanded.startswith("~") else expanded
        if expanded == "*" or expanded.endswith("/*"):
            expanded = expanded[:-1] or "."
        resolved = os.path.realpath(ctx.cwd / expanded)
        if resolved in ("/", os.path.realpath(home)):
            return f"rm -r of {target!r} deletes far more than a task's files"
        if ctx.matcher is not None and resolved == str(ctx.matcher.workspace):
            return f"rm -r of {target!r} deletes the whole workspace"
    return None


def _machine(cmd: SimpleCommand, argv: tuple[str, ...], ctx: CommandContext) -> str | None:
    if cmd.name in ("shutdown", "reboot", "halt", "poweroff") or cmd.name.startswith("mkfs"):
        return f"{cmd.name} acts on the machine, not on the task"
    if cmd.name == "dd" and any(a.startswith("of=/dev/") for a in argv[1:]):
        return "dd to a device acts on the machine, not on the task"
    return None


_RULES: tuple[tuple[str, _Rule], ...] = (
    ("force-push", _force_push),
    ("reset-hard", _reset_hard),
    ("clean-force", _clean_force),
    ("stash-shared", _stash),
    ("switch-shared", _switch),
    ("history-shared", _history),
    ("git-config-alias", _alias_config),
    ("checkout-outside-scope", _checkout_paths),
    ("rm-root", _rm_root),
    ("machine", _machine),
)
