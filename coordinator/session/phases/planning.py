"""Planning the next wave: the ready tasks, split by the wave cap and by colliding
scopes, on a base commit pinned on the target branch."""

from __future__ import annotations

import time

import anyio

from seawall.errors import GitError
from seawall.git.repo import pin_base
from seawall.model import Wave
from seawall.plan.waves import make_wave
from seawall.scope.collisions import plan_collisions
from seawall.session.context import WaveContext
from seawall.session.tasks import ready_tasks, remove_pending
from seawall.state.ledger import WaveRecord
from seawall.telemetry import ScopeCollision, WavePlanned

__all__ = ["plan_next", "record_wave"]


async def plan_next(ctx: WaveContext) -> WaveRecord | None:
    """Record the next wave in the ledger; None when no pending task is ready."""
    ready = ready_tasks(ctx.state)
    if not ready:
        return None
    config = ctx.config
    number = len(ctx.state.waves) + 1
    first = make_wave(tuple(ready[: config.max_agents_per_wave]), config, number=number)
    report = plan_collisions(first, policy=config.overlap)
    chosen = report.waves[0]
    wave_plan = make_wave(
        chosen.tasks,
        config,
        number=number,
        isolation=chosen.isolation,
        isolation_reason=chosen.isolation_reason,
    )
    if report.colliding:
        ctx.events.append(
            ScopeCollision(wave=number, action=report.action, lines=tuple(report.lines()))
        )
        ctx.progress.log("; ".join(report.lines()))
    return await record_wave(ctx, wave_plan)


async def record_wave(ctx: WaveContext, wave_plan: Wave) -> WaveRecord:
    """Record ``wave_plan`` in the ledger on a base pinned on the target branch now (its
    tasks leave the queue); a rolling session records each dispatch this way."""
    number = wave_plan.number
    pin = await anyio.to_thread.run_sync(pin_base, ctx.repo)
    target = ctx.state.target_branch
    if pin.branch != target:
        raise GitError(
            f"the session advances {target!r} but {pin.branch!r} is "
            f"checked out; `git switch {target}` and `seawall resume`"
        )
    wave = WaveRecord(
        number=number,
        tasks=list(wave_plan.tasks),
        isolation=wave_plan.isolation,
        enforcement=wave_plan.enforcement,
        max_turns=wave_plan.max_turns,
        isolation_reason=wave_plan.isolation_reason,
        enforcement_reason=wave_plan.enforcement_reason,
        base=pin.commit,
        started_at=round(time.time(), 3),
    )
    ctx.state.waves.append(wave)
    remove_pending(ctx.state, wave_plan.task_ids)
    await ctx.save()
    ctx.events.append(
        WavePlanned(
            wave=number,
            tasks=tuple(wave_plan.task_ids),
            isolation=wave_plan.isolation,
            enforcement=wave_plan.enforcement,
            base=wave.base,
            reason=wave.isolation_reason,
        )
    )
    return wave
