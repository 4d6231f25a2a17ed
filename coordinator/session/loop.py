"""The loop of one wave: each call of ``advance`` moves the session one wave forward.

A wave goes planned → prepared → dispatched → reviewed → merged → done, the ledger
saved at every step, so a resumed session calls ``advance`` again and continues from
the recorded phase. The session halts (and ``advance`` returns) before it plans a new
wave or dispatches a prepared one past its ``budgets.session_minutes``. Step mode
(``step_mode``) runs the same two halves (``wave_steps``) with the lead dispatching.
"""

from __future__ import annotations

from seawall.model import Schedule
from seawall.session.context import WaveContext
from seawall.session.phases.dispatch import dispatch, salvage
from seawall.session.rolling import roll
from seawall.session.wave_steps import land_wave, next_wave
from seawall.state.ledger import SessionPhase, WavePhase

__all__ = ["advance"]


async def advance(ctx: WaveContext) -> bool:
    """Move the session forward by one wave; False when there is nothing left to do.
    A rolling session (``seawall.session.rolling``) runs to its end or stop at once."""
    if ctx.config.schedule is Schedule.ROLLING:
        return await roll(ctx)
    wave = await next_wave(ctx)
    if wave is None:
        return ctx.state.phase is not SessionPhase.RUNNING  # halted: not "nothing left"
    if wave.phase is WavePhase.PREPARED:
        await dispatch(ctx, wave)
    if wave.phase is WavePhase.DISPATCHED:
        await salvage(ctx, wave)
    await land_wave(ctx, wave)
    return True
