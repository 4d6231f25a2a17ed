"""A stop of the whole session asked for from outside the coordinator (``seawall watch``'s
``K``, ``seawall kill`` of a running session): the running agents stop as a breaker stops
them (``seawall.session.agent_live``), the wave they were in lands, and then the session
is killed as ``seawall kill`` kills it, recorded as a stop by whoever asked."""

from __future__ import annotations

from seawall.session.context import WaveContext
from seawall.state.ledger import SessionPhase
from seawall.state.live import read_stop, session_stop_path
from seawall.telemetry import SessionKilled

__all__ = ["kill_if_asked"]


async def kill_if_asked(ctx: WaveContext) -> bool:
    """Kill the session when a stop of it was asked for; False when none was."""
    request = read_stop(session_stop_path(ctx.paths))
    if request is None or ctx.state.phase is not SessionPhase.RUNNING:
        return False
    ctx.state.phase = SessionPhase.KILLED
    ctx.events.append(SessionKilled(by=request.by, via=request.via))
    await ctx.save()
    ctx.progress.log(
        f"session {request.describe()}; its work stays on refs/seawall/{ctx.state.session}/*"
    )
    return True
