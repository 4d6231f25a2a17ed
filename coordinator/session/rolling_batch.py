"""Landing the dispatches of a rolling session that finished close together.

Every dispatch that finished while the session was landing another (or at the same
moment) lands with the others in one batch, in the order they finished: each is
reviewed, then their merges are built one onto the other, in memory, and the checks run
once, on the last. When they pass, each dispatch is merged and recovered in turn as a
wave is (the branch moves by compare-and-swap, one dispatch at a time), the checks
recorded as the batch's. When they fail, or a merge of the batch needs the conflict
policy, each dispatch is merged on its own with its own checks, so the one that breaks
them is dropped (bisection, as in a wave) and the others land.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from seawall.git.checks import run_checks
from seawall.git.merge import merge_wave
from seawall.model import CheckVerdict, Enforcement
from seawall.session.context import WaveContext
from seawall.session.halts import halt_on_start_failures
from seawall.session.integrate import branch_tip, merge_plan
from seawall.session.phases.merge import merge
from seawall.session.phases.recover import recover
from seawall.session.phases.review import review, settle_in_place
from seawall.state.ledger import ChecksRecord, SessionPhase, WavePhase, WaveRecord

__all__ = ["land_together"]


async def land_together(ctx: WaveContext, waves: Sequence[WaveRecord]) -> None:
    """Review, merge and recover ``waves`` (in the order they finished) with one run of
    the checks when it passes; a halt leaves the rest where ``seawall resume`` lands them."""
    for wave in waves:
        if wave.phase is WavePhase.DISPATCHED:
            if await halt_on_start_failures(ctx, wave):
                return
            await settle_in_place(ctx, wave)
            await review(ctx, wave)
    checked = await anyio.to_thread.run_sync(_check_together, ctx, waves)
    if checked is not None:
        ctx.progress.log(
            f"W{', W'.join(str(w.number) for w in waves)}: checked together "
            f"({checked.commit[:12]}), merging each"
        )
    for wave in waves:
        if ctx.state.phase is not SessionPhase.RUNNING:
            return
        if wave.phase is WavePhase.REVIEWED:
            await merge(ctx, wave, checked=checked)
        if wave.phase is WavePhase.MERGED:
            await recover(ctx, wave)


def _check_together(ctx: WaveContext, waves: Sequence[WaveRecord]) -> ChecksRecord | None:
    """The checks of the batch's merges built in sequence on the target branch's tip, when
    they pass; None when they fail or the batch cannot be judged as one (a merge refused
    or resolved by the conflict policy, nothing to check)."""
    config = ctx.config
    tip = branch_tip(ctx.repo, ctx.state.target_branch)
    if not config.checks or tip is None:
        return None
    onto = tip
    for wave in waves:
        if wave.phase is not WavePhase.REVIEWED:
            return None
        plan = merge_plan(ctx.repo, wave, strict=wave.enforcement is Enforcement.STRICT)
        if plan.refused:
            return None
        merged = merge_wave(
            ctx.repo,
            base=wave.base,
            changes=plan.changes,
            session_id=ctx.state.session,
            wave=wave.number,
            onto=None if onto == wave.base else onto,
        )
        if merged.fix_tasks or merged.resolutions or any(not a.merged for a in merged.agents):
            return None
        onto = merged.integration
    if onto == tip:
        return None
    run = run_checks(ctx.repo, onto, config.checks, timeout=config.budgets.agent_minutes * 60.0)
    if run.fails:
        return None
    return ChecksRecord(
        passed=True,
        policy=config.checks_policy,
        verdict=CheckVerdict.PASSED,
        runs=1,
        commit=onto,
        no_tests=run.no_baseline,
    )
