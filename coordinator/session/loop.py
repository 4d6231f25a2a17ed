"""The loop of one wave: each call of ``advance`` moves the session one wave forward.

A wave goes planned → prepared → dispatched → reviewed → merged → done, the ledger
saved at every step, so a resumed session calls ``advance`` again and continues from
the recorded phase. The session halts (and ``advance`` returns) before it plans a new
wave or dispatches a prepared one past its ``budgets.session_minutes``.
"""

from __future__ import annotations

from seawall.session.context import WaveContext
from seawall.session.halts import halt_on_session_time, halt_on_start_failures
from seawall.session.phases.dispatch import dispatch, salvage
from seawall.session.phases.merge import merge
from seawall.session.phases.planning import plan_next
from seawall.session.phases.prepare import prepare
from seawall.session.phases.recover import recover
from seawall.session.phases.review import review, settle_in_place
from seawall.session.tasks import ready_tasks
from seawall.state.ledger import WavePhase

__all__ = ["advance"]


async def advance(ctx: WaveContext) -> bool:
    """Move the session forward by one wave; False when there is nothing left to do."""
    wave = ctx.state.current_wave
    if wave is None or wave.phase is WavePhase.DONE:
        if ready_tasks(ctx.state) and await halt_on_session_time(ctx, wave):
            return True
        wave = await plan_next(ctx)
        if wave is None:
            return False
    if wave.phase is WavePhase.PLANNED:
        await prepare(ctx, wave)
    if wave.phase is WavePhase.PREPARED:
        if await halt_on_session_time(ctx, wave):
            return True
        await dispatch(ctx, wave)
    if wave.phase is WavePhase.DISPATCHED:
        await salvage(ctx, wave)
        if await halt_on_start_failures(ctx, wave):
            return True
        await settle_in_place(ctx, wave)
        await review(ctx, wave)
    if wave.phase is WavePhase.REVIEWED:
        await merge(ctx, wave)
    if wave.phase is WavePhase.MERGED:
        await recover(ctx, wave)
    return True
