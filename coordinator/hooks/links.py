"""Where the hooks meet the rest of seawall: telemetry, breakers, checkpoints.

Each function is the single place one integration happens, and each is a no-op for a
call that belongs to no seawall agent. The breaker (``seawall.breakers``) refuses
calls after a trip except the cleanup allowance and the BLOCKED.md notes; checkpoints
(``seawall.git.checkpoints``) snapshot an agent's files after each edit.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seawall.codec import JsonView
from seawall.hooks.context import HookContext
from seawall.scope.enforce import Verdict

if TYPE_CHECKING:
    from seawall.telemetry import EventLog

__all__ = ["breaker_admit", "breaker_observe", "checkpoint", "event_log", "record"]

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})


def driven(env: Mapping[str, str]) -> bool:
    """Whether seawall's coordinator drives this agent (``SEAWALL_PERMISSIONS=hook``).

    Then the coordinator counts, checkpoints and breaks from the agent's own event
    stream, and the agent runs in an OS sandbox where seawall's state is read-only: the
    hooks judge each call from the manifest and keep no state of their own (no breaker
    file, no checkpoint, no event record). A lead's hooks (step mode) keep theirs."""
    return env.get("SEAWALL_PERMISSIONS", "").strip() == "hook"


def event_log(ctx: HookContext) -> EventLog | None:
    """The session's ``events.jsonl``, or None outside a session. The telemetry is
    imported here, by a hook that writes a record, not by every hook that starts."""
    if ctx.repo is None or ctx.session is None:
        return None
    from seawall.telemetry import EventLog

    return EventLog(ctx.repo / ".seawall" / ctx.session / "events.jsonl", session=ctx.session)


def record(ctx: HookContext, verdict: Verdict, *, tool: str | None = None) -> None:
    """Record a warned or denied call in the session's telemetry (a plain allow is not
    recorded)."""
    log = event_log(ctx)
    if log is None:
        return
    from seawall.telemetry import scope_verdict

    wave = ctx.manifest.wave if ctx.manifest else None
    event = scope_verdict(verdict, wave=wave, task=ctx.task_id, tool=tool)
    if event is not None:
        log.append(event)


def _tool_call(payload: JsonView) -> Any:
    from seawall.events import ToolCall

    arguments = payload.get("tool_input")
    return ToolCall(
        call_id=str(payload.get("tool_use_id") or ""),
        name=str(payload.get("tool_name") or ""),
        arguments=arguments if isinstance(arguments, Mapping) else {},
    )


def breaker_admit(ctx: HookContext, payload: JsonView) -> tuple[str, str]:
    """Before a call: (refusal reason or "", warning or "") from the agent's breaker."""
    if ctx.repo is None or ctx.session is None or ctx.task_id is None:
        return "", ""
    from seawall.breakers.blocked import blocked_path
    from seawall.breakers.store import open_breaker

    limits = ctx.manifest.limits if ctx.manifest is not None else None
    stop_note = blocked_path(ctx.repo, ctx.session)
    with open_breaker(ctx.repo, ctx.session, ctx.task_id, limits=limits) as breaker:
        admission = breaker.admit(_tool_call(payload), stop_note=stop_note, cwd=ctx.cwd)
    if not admission.allowed:
        return admission.reason or "seawall: this agent's breaker has tripped", ""
    return "", admission.warning or ""


def breaker_observe(ctx: HookContext, payload: JsonView) -> str:
    """After a call: count its result; return the trip message if it tripped the breaker."""
    if ctx.repo is None or ctx.session is None or ctx.task_id is None:
        return ""
    from seawall.breakers.store import open_breaker
    from seawall.events import ToolResult

    is_error, text, exit_code = _outcome(payload.get("tool_response"))
    result = ToolResult(
        call_id=str(payload.get("tool_use_id") or ""),
        name=str(payload.get("tool_name") or ""),
        is_error=is_error,
        text=text,
        exit_code=exit_code,
    )
    limits = ctx.manifest.limits if ctx.manifest is not None else None
    with open_breaker(ctx.repo, ctx.session, ctx.task_id, limits=limits) as breaker:
        trip = breaker.observe(result)
        message = trip.message(ctx.task_id) if trip is not None else ""
    return message


def _outcome(response: object) -> tuple[bool, str, int | None]:
    """(is_error, text, exit code) from a PostToolUse ``tool_response``."""
    if isinstance(response, str):
        return False, response[:4000], None
    if not isinstance(response, Mapping):
        return False, "", None
    text = "\n".join(
        str(response[key]) for key in ("stdout", "stderr", "error", "content") if response.get(key)
    )[:4000]
    code = response.get("exit_code", response.get("exitCode", response.get("returncode")))
    exit_code = code if isinstance(code, int) else None
    failed = bool(response.get("is_error") or response.get("error") or response.get("interrupted"))
    return failed or bool(exit_code), text, exit_code


def checkpoint(ctx: HookContext, payload: JsonView) -> str | None:
    """After an edit: record a shadow checkpoint of the agent's files; the commit id or None."""
    tool = str(payload.get("tool_name") or "")
    manifest, agent = ctx.manifest, ctx.agent
    if tool not in EDIT_TOOLS or manifest is None or agent is None or not manifest.base:
        return None
    from seawall.git.checkpoints import Checkpointer, CheckpointMode

    workspace = Path(agent.workspace)
    in_place = workspace.resolve() == Path(manifest.repo).resolve()
    tool_input = payload.get("tool_input")
    touched: list[str] = []
    if isinstance(tool_input, Mapping):
        raw = tool_input.get("file_path") or tool_input.get("notebook_path")
        if isinstance(raw, str):
            try:
                touched.append(
                    (ctx.cwd / raw).resolve().relative_to(workspace.resolve()).as_posix()
                )
            except ValueError:
                return None
    checkpointer = Checkpointer(
        workspace,
        session_id=manifest.session,
        task_id=agent.task_id,
        base=manifest.base,
        mode=CheckpointMode.PATHS if in_place else CheckpointMode.TREE,
        dispatch=f"w{manifest.wave}",
    )
    return checkpointer.checkpoint(touched if in_place else None)
