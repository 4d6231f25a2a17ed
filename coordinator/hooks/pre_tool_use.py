"""``seawall hook pre-tool-use``: scope, command policy and breaker gate before a call.

Checks, in order: the agent's breaker (after a trip only the cleanup allowance and the
session's BLOCKED.md notes pass), then the file scope of Edit, Write, MultiEdit and
NotebookEdit, and for Bash the command policy of every simple command plus the scope
of every file the command visibly writes. Outside a seawall session only the command
gate (the default deny list) applies, as a hard deny. In a headless run seawall drives
(``SEAWALL_PERMISSIONS=hook``) a call that passes every check is allowed outright.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coordinator.hooks import links
from coordinator.hooks.context import HookContext, resolve_context
from coordinator.hooks.protocol import (
    HookResponse,
    pre_tool_use_allow,
    pre_tool_use_context,
    pre_tool_use_deny,
)
from coordinator.model import Enforcement
from coordinator.scope.commands import CommandContext, CommandPolicy, FindingKind
from coordinator.scope.enforce import (
    ALLOW,
    Decision,
    ErrorClass,
    Failure,
    Verdict,
    decide,
    decide_failure,
)
from coordinator.scope.matcher import ScopeMatcher
from coordinator.scope.writes import written_paths
from coordinator.shell import ShellParseError, SimpleCommand, simple_commands

__all__ = ["FILE_TOOLS", "check_call", "handle"]

FILE_TOOLS: Mapping[str, str] = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
_CD = frozenset({"cd", "pushd", "popd"})


def handle(payload: Mapping[str, Any], env: Mapping[str, str]) -> HookResponse:
    """Answer one PreToolUse call."""
    ctx = resolve_context(payload, env)
    tool = str(payload.get("tool_name") or "")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, Mapping):
        tool_input = {}
    refusal, warning = links.breaker_admit(ctx, payload)
    if refusal:
        return pre_tool_use_deny(refusal)
    verdicts = check_call(ctx, tool, tool_input)
    for verdict in verdicts:
        links.record(ctx, verdict, tool=tool)
    denied = [v.message for v in verdicts if v.decision is Decision.DENY]
    if denied:
        return pre_tool_use_deny("\n".join(dict.fromkeys(denied)))
    notes = [v.message for v in verdicts if v.decision is Decision.WARN]
    if warning:
        notes.append(warning)
    note = "\n".join(dict.fromkeys(notes))
    if _is_permission_layer(ctx, env):
        return pre_tool_use_allow(note)
    if note:
        return pre_tool_use_context(note)
    return HookResponse.allow()


def _is_permission_layer(ctx: HookContext, env: Mapping[str, str]) -> bool:
    """Whether this hook answers for a headless agent seawall started: nobody could answer
    a prompt, so what passed the checks is allowed (a guard that cannot judge never is)."""
    if env.get("SEAWALL_PERMISSIONS", "").strip() != "hook":
        return False
    return ctx.failure is None or ctx.failure is Failure.NO_SESSION


def check_call(ctx: HookContext, tool: str, tool_input: Mapping[str, Any]) -> list[Verdict]:
    """Every warned or denied finding on one tool call (an empty list allows it)."""
    if tool in FILE_TOOLS:
        path = tool_input.get(FILE_TOOLS[tool])
        if not isinstance(path, str) or not path:
            return [_failure(ctx, Failure.BAD_INPUT, f"{tool} has no {FILE_TOOLS[tool]}")]
        return _nonallow([_check_path(ctx, path, ctx.cwd)])
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return _nonallow([_failure(ctx, Failure.BAD_INPUT, "Bash has no command", cmd=True)])
        return _nonallow(_check_bash(ctx, command))
    return []


def _nonallow(verdicts: list[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if v.decision is not Decision.ALLOW]


def _failure(ctx: HookContext, failure: Failure, detail: str, *, cmd: bool = False) -> Verdict:
    error_class = ErrorClass.COMMAND_BLOCKED if cmd else ErrorClass.SCOPE_DENIED
    return decide_failure(failure, ctx.enforcement, detail, error_class=error_class)


def _check_path(ctx: HookContext, path: str, cwd: Path) -> Verdict:
    if ctx.failure is not None:
        return _failure(ctx, ctx.failure, f"{path} cannot be checked: {ctx.detail}")
    matcher = ctx.matcher()
    if matcher is None:
        return ALLOW
    verdict = matcher.check(path, cwd=cwd)
    if verdict.allowed:
        return ALLOW
    problem = _scope_problem(verdict.reason, matcher)
    return decide(ctx.enforcement, error_class=ErrorClass.SCOPE_DENIED, problem=problem)


def _scope_problem(reason: str, matcher: ScopeMatcher) -> str:
    grants = ", ".join(grant for grant, _ in matcher.grants) or "no files"
    return f"{reason} (this task may change: {grants})"


def _check_bash(ctx: HookContext, command: str) -> list[Verdict]:
    gate_only = ctx.failure is Failure.NO_SESSION or (ctx.manifest is None and not ctx.failure)
    enforcement = Enforcement.STRICT if gate_only else ctx.enforcement
    try:
        commands = simple_commands(command)
    except ShellParseError as exc:
        if gate_only:
            return []  # outside a session only the deny list is armed
        problem = f"the command cannot be parsed ({exc})"
        return [_failure(ctx, Failure.UNPARSEABLE_COMMAND, problem, cmd=True)]
    matcher = None if gate_only else ctx.matcher()
    policy = CommandPolicy(ctx.manifest.commands if ctx.manifest else None)
    command_ctx = CommandContext(cwd=ctx.cwd, shared_tree=ctx.shared_tree, matcher=matcher)
    verdicts: list[Verdict] = []
    for cmd in commands:
        for finding in policy.check_simple(cmd, command_ctx):
            problem = f"`{finding.command}`: {finding.reason}"
            if finding.kind is FindingKind.DENIED:
                verdicts.append(
                    decide(enforcement, error_class=ErrorClass.COMMAND_BLOCKED, problem=problem)
                )
            elif not gate_only:
                verdicts.append(_failure(ctx, Failure.UNKNOWN_PROGRAM, problem, cmd=True))
    if not gate_only:
        verdicts.extend(_check_writes(ctx, commands))
    return verdicts


def _check_writes(ctx: HookContext, commands: list[SimpleCommand]) -> list[Verdict]:
    """Scope of every file the commands visibly write, from every directory it may run in.

    A ``cd`` of the main shell into an existing directory moves the working directory;
    any other ``cd`` (in a subshell, a pipeline, to a directory that may not exist)
    only adds a place the following writes may land, and each place must be in scope.
    """
    cwds: list[Path | None] = [ctx.cwd]
    verdicts: list[Verdict] = []
    for cmd in commands:
        if cmd.name in _CD:
            target = _cd_target(cmd, cwds[-1])
            moves_main_shell = not cmd.subshell and not cmd.wrappers and len(cwds) == 1
            if moves_main_shell and target is not None and target.is_dir():
                cwds = [target]  # the main shell moved; later commands run there
            else:
                cwds.append(target)  # it may or may not apply later: check every place
            continue
        if cmd.name == "ln":
            verdicts.extend(_check_link_targets(ctx, cmd, cwds))
        for path, dynamic in written_paths(cmd):
            if dynamic:
                problem = f"`{shlex.join(cmd.argv)}` writes to {path!r}, not known before it runs"
                verdicts.append(_failure(ctx, Failure.UNKNOWN_WRITE, problem))
                continue
            if path.startswith("/") or path.startswith("~"):
                verdicts.append(_check_path(ctx, path, ctx.cwd))
                continue
            if any(cwd is None for cwd in cwds):
                problem = f"`{shlex.join(cmd.argv)}` writes {path!r} in a directory not known"
                verdicts.append(_failure(ctx, Failure.UNKNOWN_WRITE, problem))
                continue
            verdicts.extend(_check_path(ctx, path, cwd) for cwd in dict.fromkeys(cwds) if cwd)
    return verdicts


def _check_link_targets(
    ctx: HookContext, cmd: SimpleCommand, cwds: list[Path | None]
) -> list[Verdict]:
    """``ln [-s] TARGET... LINK``: a link may only point into the scope.

    A symbolic link's relative target is read from the link's directory, as the
    kernel will; a hard link's from the working directory.
    """
    operands = [a for a in cmd.argv[1:] if not a.startswith("-")]
    if len(operands) < 2:
        return []
    symbolic = any(a.startswith("-") and not a.startswith("--") and "s" in a for a in cmd.argv[1:])
    symbolic = symbolic or "--symbolic" in cmd.argv
    verdicts: list[Verdict] = []
    for cwd in dict.fromkeys(cwds):
        if cwd is None:
            return [_failure(ctx, Failure.UNKNOWN_WRITE, "a link is made in a directory not known")]
        link = cwd / operands[-1]
        base = link if link.is_dir() else link.parent
        for target in operands[:-1]:
            verdicts.append(_check_path(ctx, target, base if symbolic else cwd))
    return verdicts


def _cd_target(cmd: SimpleCommand, cwd: Path | None) -> Path | None:
    args = [a for a in cmd.argv[1:] if not a.startswith("-")]
    if cmd.name == "popd" or cwd is None or len(args) != 1 or any(cmd.dynamic[1:]):
        return None
    target = args[0]
    if target.startswith("~"):
        return None
    return cwd / target
