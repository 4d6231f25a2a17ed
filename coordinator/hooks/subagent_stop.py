"""``seawall hook subagent-stop``: the status of an agent that finished.

The agent's final message (``last_assistant_message``, else the last assistant text of
its transcript) is parsed for its STATUS line; the result is recorded as an
``agent_finished`` event and in ``.seawall/<session>/agents/<task>/status.json``.
An agent that ended without a STATUS line is asked once (``decision: block``; never
again while ``stop_hook_active``) to end with one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from seawall.codec import JsonView
from seawall.hooks import links
from seawall.hooks.context import resolve_context
from seawall.hooks.protocol import HookResponse, subagent_stop_block
from seawall.runtime.files import atomic_write_text

__all__ = ["ASK_FOR_STATUS", "final_message", "handle"]

ASK_FOR_STATUS = (
    "End your final message with exactly one STATUS line: `STATUS: done — <summary>`, "
    "`STATUS: partial — <done> | REMAINING: <what is left>`, or `STATUS: failed — <why>`."
)
_TAIL_BYTES = 256 * 1024


def handle(payload: JsonView, env: Mapping[str, str]) -> HookResponse:
    """Answer one SubagentStop call."""
    from seawall.status_parsing import parse_status

    ctx = resolve_context(payload, env)
    if ctx.manifest is None or ctx.repo is None:
        return HookResponse.allow()
    report = parse_status(final_message(payload))
    if links.driven(env):  # the coordinator reads the status from the stream; ask only
        if report.inferred and not payload.get("stop_hook_active"):
            return subagent_stop_block(ASK_FOR_STATUS)
        return HookResponse.allow()
    if report.inferred and not payload.get("stop_hook_active"):
        return subagent_stop_block(ASK_FOR_STATUS)
    record = {
        "task": ctx.task_id,
        "wave": ctx.manifest.wave,
        "status": str(report.status),
        "summary": report.summary,
        "remaining": report.remaining,
        "inferred": report.inferred,
        "reason": report.reason,
        "agent_id": payload.get("agent_id"),
    }
    log = links.event_log(ctx)
    if log is not None:
        from seawall.telemetry import AgentFinished, FinishSource

        agent_id = payload.get("agent_id")
        log.append(
            AgentFinished(
                wave=ctx.manifest.wave,
                agent=ctx.task_id,
                source=FinishSource.HOOK,
                status=report.status,
                summary=report.summary,
                remaining=report.remaining,
                inferred=report.inferred,
                reason=report.reason,
                agent_id=agent_id if isinstance(agent_id, str) else None,
            )
        )
    if ctx.task_id is not None:
        path = ctx.repo / ".seawall" / ctx.manifest.session / "agents" / ctx.task_id
        atomic_write_text(path / "status.json", json.dumps(record, indent=2) + "\n")
    return HookResponse.allow()


def final_message(payload: JsonView) -> str:
    """The agent's last assistant text: from the payload, else from its transcript."""
    message = payload.get("last_assistant_message")
    if isinstance(message, str) and message:
        return message
    for key in ("agent_transcript_path", "transcript_path"):
        path = payload.get(key)
        if isinstance(path, str) and path:
            text = _last_assistant_text(Path(path))
            if text:
                return text
    return ""


def _last_assistant_text(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - _TAIL_BYTES))
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        text = _assistant_text(entry)
        if text:
            return text
    return ""


def _assistant_text(entry: object) -> str:
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return ""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block.get("text", "")
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return "\n".join(part for part in parts if isinstance(part, str))
