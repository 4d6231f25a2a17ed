"""``seawall hook pre-tool-use``: scope, command policy and breaker gate before a call.

Checks, in order: the agent's breaker (after a trip only the cleanup allowance and the
session's BLOCKED.md notes pass), then the file scope of Edit, Write, MultiEdit and
NotebookEdit; for Bash the command policy of every simple command (for an agent, the
allow-list: ``seawall.scope.programs`` and ``seawall.scope.gitpolicy``) plus
the scope of every file the command visibly writes; any other tool (MCP tools and the
rest) by its path-like arguments (``seawall.scope.tools``), except seawall's own MCP
tools, which are the lead's (refused to an agent). A write an agent makes into the main
checkout or another agent's workspace is refused even where the wave only warns. Outside a seawall
session only the command gate (the default deny list) applies, as a hard deny. In a
headless run seawall drives (``SEAWALL_PERMISSIONS=hook``) a call that passes every
check is allowed outright.

``seawall`` itself runs outside Claude Code's sandbox (the settings' ``excludedCommands``,
see ``seawall.sandbox.claude_code``), and Claude Code runs a whole line outside it when
any command of the line is excluded: a line that runs ``seawall`` must run it alone (no
other command, no variable set, no file written by a redirection), for every caller,
and an agent may not run it at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from seawall.codec import JsonView
from seawall.hooks import links
from seawall.hooks.context import HookContext, resolve_context
from seawall.hooks.protocol import (
    HookResponse,
    pre_tool_use_allow,
    pre_tool_use_context,
    pre_tool_use_deny,
)
from seawall.model import Enforcement
from seawall.sandbox.claude_code import UNSANDBOXED_PROGRAMS
from seawall.scope.bashwrites import PathTarget, write_targets
from seawall.scope.command_policy import CommandContext, CommandPolicy, FindingKind
from seawall.scope.enforce import (
    ALLOW,
    Decision,
    ErrorClass,
    Failure,
    Verdict,
    decide,
    decide_failure,
)
from seawall.scope.matcher import ScopeMatcher
from seawall.scope.programs import inline_code, variable_reason
from seawall.scope.tools import other_tool_paths
from seawall.shell import ShellLine, ShellParseError, SimpleCommand, read_line

__all__ = ["FILE_TOOLS", "SEAWALL_TOOL", "check_call", "handle"]

#: seawall's MCP tools: registered as ``seawall`` or through the Claude Code plugin
SEAWALL_TOOL = re.compile(r"mcp__(?:plugin_seawall_)?seawall__[A-Za-z0-9_-]+")

FILE_TOOLS: Mapping[str, str] = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}


def handle(payload: JsonView, env: Mapping[str, str]) -> HookResponse:
    """Answer one PreToolUse call."""
    ctx = resolve_context(payload, env)
    tool = str(payload.get("tool_name") or "")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, Mapping):
        tool_input = {}
    stateful = not links.driven(env)  # driven: the coordinator keeps the state
    refusal, warning = links.breaker_admit(ctx, payload) if stateful else ("", "")
    if refusal:
        return pre_tool_use_deny(refusal)
    verdicts = check_call(ctx, tool, tool_input, env=env)
    for verdict in verdicts if stateful else ():
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
    if not links.driven(env):
        return False
    return ctx.failure is None or ctx.failure is Failure.NO_SESSION


def check_call(
    ctx: HookContext,
    tool: str,
    tool_input: JsonView,
    *,
    env: Mapping[str, str] | None = None,
) -> list[Verdict]:
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
        return _nonallow(_check_bash(ctx, command, env or {}))
    if ctx.manifest is None and ctx.failure in (None, Failure.NO_SESSION):
        return []  # not a seawall agent: only the command gate applies
    if SEAWALL_TOOL.fullmatch(tool):
        return _check_seawall_tool(ctx, tool)
    return _nonallow(_check_other_tool(ctx, tool, tool_input))


def _check_seawall_tool(ctx: HookContext, tool: str) -> list[Verdict]:
    """seawall's own MCP tools (``next``, ``status``, ...) are the lead's: its call is
    never judged as an agent's write; an agent of the wave may not step the session."""
    if ctx.agent is None and ctx.how != "agent_id":
        return []
    problem = f"{tool}: seawall's steps are the lead's, not an agent's; report your STATUS"
    return [decide(Enforcement.STRICT, error_class=ErrorClass.COMMAND_BLOCKED, problem=problem)]


def _check_other_tool(ctx: HookContext, tool: str, tool_input: JsonView) -> list[Verdict]:
    """A tool other than the built-in ones: judged by its path-like arguments."""
    judged = other_tool_paths(tool, tool_input)
    if judged.read_only:
        return []
    if judged.refusal:
        problem = f"{tool}: {judged.refusal}"
        return [decide(ctx.enforcement, error_class=ErrorClass.COMMAND_BLOCKED, problem=problem)]
    if not judged.paths:
        problem = f"{tool} has no path argument to judge: what it writes is not known"
        return [_failure(ctx, Failure.UNKNOWN_WRITE, problem)]
    return [_check_path(ctx, path, ctx.cwd) for path in judged.paths]


def _nonallow(verdicts: list[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if v.decision is not Decision.ALLOW]


def _failure(ctx: HookContext, failure: Failure, detail: str, *, cmd: bool = False) -> Verdict:
    error_class = ErrorClass.COMMAND_BLOCKED if cmd else ErrorClass.SCOPE_DENIED
    return decide_failure(failure, ctx.enforcement, detail, error_class=error_class)


def _check_path(ctx: HookContext, path: str, cwd: Path, *, link: bool = False) -> Verdict:
    if ctx.failure is not None:
        return _failure(ctx, ctx.failure, f"{path} cannot be checked: {ctx.detail}")
    matcher = ctx.matcher()
    if matcher is None:
        return ALLOW
    verdict = matcher.check(path, cwd=cwd)
    if verdict.allowed:
        return ALLOW
    outside = verdict.path.startswith("/") and ctx.agent is not None
    reason = f"a link it makes points at its target: {verdict.reason}" if link else verdict.reason
    problem = _scope_problem(reason, matcher, outside=outside)
    enforcement = ctx.enforcement
    if (
        outside
        and enforcement is Enforcement.WARN
        and (link or _in_other_checkout(ctx, verdict.path))
    ):
        # a worktree wave only warns because the worktree isolates the agent; a write
        # into the main checkout or another agent's worktree is what it did not stop,
        # nor is a link out of the workspace (which the merge would carry into the tree)
        enforcement = Enforcement.STRICT
    return decide(enforcement, error_class=ErrorClass.SCOPE_DENIED, problem=problem)


def _in_other_checkout(ctx: HookContext, path: str) -> bool:
    """Whether ``path`` (resolved, absolute) is in the repository's main checkout or in
    the workspace of another agent of the wave."""
    if ctx.manifest is None:
        return False
    roots = {ctx.manifest.repo, *(agent.workspace for agent in ctx.manifest.agents)}
    for root in roots:
        real = os.path.realpath(root).rstrip("/") + "/"
        if path.startswith(real) or path == real.rstrip("/"):
            return True
    return False


def _scope_problem(reason: str, matcher: ScopeMatcher, *, outside: bool = False) -> str:
    """The refusal the agent reads: what it may change, and, for a path outside its
    workspace, where all its work happens."""
    grants = ", ".join(grant for grant, _ in matcher.grants) or "no files"
    where = f"; all its work happens in {matcher.workspace}" if outside else ""
    return f"{reason} (this task may change: {grants}{where})"


def _check_bash(ctx: HookContext, command: str, env: Mapping[str, str]) -> list[Verdict]:
    gate_only = ctx.failure is Failure.NO_SESSION or (ctx.manifest is None and not ctx.failure)
    enforcement = Enforcement.STRICT if gate_only else ctx.enforcement
    try:
        line = read_line(command)
    except ShellParseError as exc:
        if any(name in command for name in UNSANDBOXED_PROGRAMS):
            problem = (
                f"the command cannot be parsed ({exc}) and names a program that runs outside "
                "Claude Code's sandbox with its whole line; run it alone"
            )
            return [
                decide(Enforcement.STRICT, error_class=ErrorClass.COMMAND_BLOCKED, problem=problem)
            ]
        if gate_only:
            return []  # outside a session only the deny list is armed
        problem = f"the command cannot be parsed ({exc})"
        return [_failure(ctx, Failure.UNPARSEABLE_COMMAND, problem, cmd=True)]
    matcher = None if gate_only else ctx.matcher()
    policy = CommandPolicy(ctx.manifest.commands if ctx.manifest else None)
    command_ctx = CommandContext(
        cwd=ctx.cwd, shared_tree=ctx.shared_tree, matcher=matcher, agent=not gate_only
    )
    verdicts = _check_unsandboxed(ctx, line, env)
    if not gate_only:
        verdicts.extend(_check_assignments(ctx, line.assignments))
    for cmd in line.commands:
        for finding in policy.check_simple(cmd, command_ctx):
            problem = f"`{finding.command}`: {finding.reason}"
            if finding.kind is FindingKind.DENIED:
                verdicts.append(
                    decide(enforcement, error_class=ErrorClass.COMMAND_BLOCKED, problem=problem)
                )
            elif not gate_only:
                verdicts.append(_failure(ctx, Failure.UNKNOWN_PROGRAM, problem, cmd=True))
    if not gate_only:
        verdicts.extend(_check_writes(ctx, line.commands, line.assignments, env))
        verdicts.extend(_check_inline(ctx, line.commands, env))
    return verdicts


def _check_inline(
    ctx: HookContext, commands: list[SimpleCommand], env: Mapping[str, str]
) -> list[Verdict]:
    """An interpreter given its program on the command line (``python -c``): what it
    writes is the OS layer's to confine; a strict wave with no OS layer refuses it."""
    inline = [found for cmd in commands if (found := inline_code(cmd))]
    if not inline or ctx.enforcement is not Enforcement.STRICT or os_layer(ctx, env):
        return []
    problem = (
        f"`{inline[0]}`: what a program written on the command line writes cannot be "
        "judged before it runs, and no OS sandbox confines this agent (neither seawall "
        "run's Landlock nor Claude Code's sandbox, which `seawall hooks install` sets up); "
        "a strict wave without one refuses it: make the change with the file tools or a "
        "program whose writes seawall knows"
    )
    return [decide(Enforcement.STRICT, error_class=ErrorClass.COMMAND_BLOCKED, problem=problem)]


def os_layer(ctx: HookContext, env: Mapping[str, str]) -> bool:
    """Whether an OS sandbox confines the caller's programs: seawall's runner gave it its
    own ``TMPDIR`` (made only under Landlock), or the project's Claude Code settings
    turn Claude Code's sandbox on with no way around it (what ``seawall hooks install``
    writes)."""
    if ctx.scratch is not None:
        return True
    project = env.get("CLAUDE_PROJECT_DIR", "").strip() or (str(ctx.repo) if ctx.repo else "")
    if not project:
        return False
    import json

    for name in ("settings.local.json", "settings.json"):
        try:
            data = json.loads((Path(project) / ".claude" / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        sandbox = data.get("sandbox") if isinstance(data, dict) else None
        if isinstance(sandbox, dict) and "enabled" in sandbox:
            return (
                sandbox.get("enabled") is True and sandbox.get("allowUnsandboxedCommands") is False
            )
    return False


def _check_unsandboxed(ctx: HookContext, line: ShellLine, env: Mapping[str, str]) -> list[Verdict]:
    """A line running a program Claude Code's sandbox runs outside it (``seawall``): the
    lead's alone, never an agent's. Claude Code lets the whole line out of the sandbox
    with it, so anything beside it would run unsandboxed too. Refused at every
    enforcement level: this guards the OS layer, not a scope. An agent is a caller
    named as one (a subagent's ``agent_id``, a runner's ``SEAWALL_TASK_ID``), never one
    only guessed (the single agent of a wave may be the lead's own call)."""
    ours = [cmd for cmd in line.commands if cmd.name in UNSANDBOXED_PROGRAMS]
    if not ours:
        return []
    name = ours[0].name
    if ctx.how == "agent_id" or env.get("SEAWALL_TASK_ID", "").strip():
        problem = f"`{name}`: seawall's steps are the lead's, not an agent's; report your STATUS"
        return [decide(Enforcement.STRICT, error_class=ErrorClass.COMMAND_BLOCKED, problem=problem)]
    cmd = ours[0]
    alone = (
        len(line.commands) == 1
        and not line.assignments
        and not cmd.assignments
        and not cmd.wrappers
        and not cmd.written_files
    )
    if alone:
        return []
    problem = (
        f"`{name}` runs outside Claude Code's sandbox, and so would everything on its line: "
        f"run `{name} ...` alone, with no other command, variable or output file (its answer "
        "is printed)"
    )
    return [decide(Enforcement.STRICT, error_class=ErrorClass.COMMAND_BLOCKED, problem=problem)]


def _check_assignments(ctx: HookContext, assignments: tuple[str, ...]) -> list[Verdict]:
    """Variables set for the rest of the line: ``GIT_*`` refused, code loaders unknown."""
    verdicts: list[Verdict] = []
    for name in (a.split("=", 1)[0].removesuffix("+") for a in assignments):
        if name.startswith("GIT_"):
            problem = f"`{name}=`: it points git at other state; agents may not set GIT_*"
            verdicts.append(
                decide(ctx.enforcement, error_class=ErrorClass.COMMAND_BLOCKED, problem=problem)
            )
        elif why := variable_reason(name):
            verdicts.append(_failure(ctx, Failure.UNKNOWN_PROGRAM, f"`{name}=`: {why}", cmd=True))
    return verdicts


def _check_writes(
    ctx: HookContext,
    commands: list[SimpleCommand],
    assignments: tuple[str, ...],
    env: Mapping[str, str],
) -> list[Verdict]:
    """Scope of every file the commands visibly write, from every directory it may run in."""
    verdicts: list[Verdict] = []
    for target in write_targets(commands, cwd=ctx.cwd, assignments=assignments, env=env):
        if isinstance(target, PathTarget):
            verdicts.append(_check_path(ctx, target.path, target.cwd, link=target.link))
        else:
            verdicts.append(_failure(ctx, Failure.UNKNOWN_WRITE, target.problem))
    return verdicts
