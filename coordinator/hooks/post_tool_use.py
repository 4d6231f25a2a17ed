"""``seawall hook post-tool-use``: checkpoints and breaker counters after a call.

For a seawall agent: after an edit, a shadow checkpoint of the agent's files (so no
work is lost and spiral detection has a history); then the call's result goes to the
agent's breaker. A trip is told to the agent with PostToolUse's ``decision: block``
(the call already ran; the reason is what the agent reads next). A checkpoint that
fails is recorded and never blocks the agent.
"""

from __future__ import annotations

from collections.abc import Mapping

from seawall.codec import JsonView
from seawall.errors import SeawallError
from seawall.hooks import links
from seawall.hooks.context import resolve_context
from seawall.hooks.protocol import HookResponse, post_tool_use_block

__all__ = ["handle"]


def handle(payload: JsonView, env: Mapping[str, str]) -> HookResponse:
    """Answer one PostToolUse call."""
    if links.driven(env):  # the coordinator checkpoints and counts from the event stream
        return HookResponse.allow()
    ctx = resolve_context(payload, env)
    if ctx.manifest is None or ctx.agent is None:
        return HookResponse.allow()
    notes: list[str] = []
    try:
        links.checkpoint(ctx, payload)
    except SeawallError as exc:
        log = links.event_log(ctx)
        if log is not None:
            from seawall.telemetry import CheckpointFailed

            log.append(CheckpointFailed(task=ctx.task_id, error=str(exc)))
        notes.append(f"seawall: checkpoint failed: {exc}")
    message = links.breaker_observe(ctx, payload)
    if message:
        return post_tool_use_block(message)
    return HookResponse(stderr="\n".join(notes))
