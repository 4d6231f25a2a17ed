"""The two halves of a wave that the driven loop and step mode share.

``next_wave`` brings the session to a wave ready to dispatch: it plans the next wave
when the last one is done and prepares a planned one, halting first when the session
has run past its ``budgets.session_minutes``. ``land_wave`` takes a dispatched wave to
its end: it halts when agents could not start (the environment's fault, not the
tasks'), then reviews, merges and recovers. Between the two, the driven loop dispatches
the agents itself (``phases.dispatch``) and step mode hands them to the lead
(``step_mode``); nothing else differs.
"""

from __future__ import annotations

from seawall.session.context import WaveContext
from seawall.session.halts import halt_on_session_time, halt_on_start_failures
from seawall.session.phases.merge import merge
from seawall.session.phases.planning import plan_next
from seawall.session.phases.prepare import prepare
from seawall.session.phases.recover import recover
from seawall.session.phases.review import review, settle_in_place
from seawall.session.tasks import ready_tasks
from seawall.state.ledger import WavePhase, WaveRecord

__all__ = ["land_wave", "next_wave"]


async def next_wave(ctx: WaveContext) -> WaveRecord | None:
    """The current wave, planned and prepared if it was not (a wave already dispatched,
    reviewed or merged is returned as it is, for its caller to continue); None when no
    task is left or the session halted (``ctx.state.phase`` tells which). It halts
    before it plans a new wave or returns a prepared one past the session's time."""
    wave = ctx.state.current_wave
    if wave is None or wave.phase is WavePhase.DONE:
        if ready_tasks(ctx.state) and await halt_on_session_time(ctx, wave):
            return None
        wave = await plan_next(ctx)
        if wave is None:
            return None
    if wave.phase is WavePhase.PLANNED:
        await prepare(ctx, wave)
        if wave.phase is WavePhase.PLANNED:  # the base failed the checks: halted
            return None
    if wave.phase is WavePhase.PREPARED and await halt_on_session_time(ctx, wave):
        return None
    return wave


async def land_wave(ctx: WaveContext, wave: WaveRecord) -> None:
    """Review, merge and recover a dispatched wave, from whichever of those steps its
    recorded phase says comes next. The session halts instead when its agents could not
    start, and the merge halts it when checks or the target branch say so."""
    if wave.phase is WavePhase.DISPATCHED:
        if await halt_on_start_failures(ctx, wave):
            return
        await settle_in_place(ctx, wave)
        await review(ctx, wave)
    if wave.phase is WavePhase.REVIEWED:
        await merge(ctx, wave)
    if wave.phase is WavePhase.MERGED:
        await recover(ctx, wave)
