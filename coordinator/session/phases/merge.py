"""Merging a reviewed wave: the agents' work in sequence onto the wave's base (or the
moved target branch's new tip), checked, then the target branch advanced; landed tasks
close their open carryovers and conflicts become fix tasks."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence

import anyio

from seawall.breakers.wave import WaveTrigger
from seawall.carryover import plan_identity
from seawall.carryover.closing import close_landed_wave
from seawall.errors import GitError
from seawall.git.checks import WaveIntegration
from seawall.git.merge import FixTask
from seawall.model import Enforcement, Schedule, Task
from seawall.plan.loader import validate_task_id
from seawall.prompting import render_conflict_fix_prompt
from seawall.runtime.fault_injection import kill_point
from seawall.session.context import WaveContext
from seawall.session.continuation import continue_later
from seawall.session.halts import halt_on_base_checks, rebase_wave, report_checks
from seawall.session.integrate import (
    advance,
    branch_tip,
    merge_plan,
    record_integration,
    run_integration,
)
from seawall.session.tasks import add_pending
from seawall.session.wave_breaker import merge_conflict
from seawall.state.ledger import ChecksRecord, Dropped, SessionPhase, WavePhase, WaveRecord
from seawall.state.render import merge_outcome, set_aside_for_fixes
from seawall.telemetry import BreakerLevel, BreakerTripped, MergeRefused, WaveMerged

__all__ = ["merge"]


async def merge(ctx: WaveContext, wave: WaveRecord, *, checked: ChecksRecord | None = None) -> None:
    """Merge the wave; it is then ``merged`` (or stays reviewed on a halt). ``checked``:
    the checks already passed on a merge holding this one (a rolling session's batch,
    ``seawall.session.rolling_batch``), recorded as the wave's instead of run again."""
    branch = ctx.state.target_branch
    tip = await anyio.to_thread.run_sync(branch_tip, ctx.repo, branch)
    if wave.integration is not None and tip == wave.integration:
        wave.target_after = wave.integration
        wave.phase = WavePhase.MERGED  # the advance happened before the crash
        wave.merged_at = wave.merged_at or round(time.time(), 3)
        await ctx.save()
        return
    if tip is not None and tip != wave.start and _landed_by_session(ctx, tip):
        # a rolling session: agents that finished earlier landed since this one started
        wave.onto, wave.integration = tip, None
    elif tip is not None and tip != wave.start and ctx.rebase:
        rebase_wave(ctx, wave, tip)
    elif tip != wave.start:
        detail = (
            f"{branch} moved from {wave.start[:12]} (the wave's base) to {str(tip)[:12]} "
            "while the wave ran; nothing was merged. `seawall resume --rebase` merges the "
            "wave onto the new tip"
        )
        if _halt_on_conflict(ctx, wave, detail, tip):
            await ctx.save()
            return
        raise GitError(f"{detail}, or move the branch back.")
    plan = merge_plan(ctx.repo, wave, strict=wave.enforcement is Enforcement.STRICT)

    def integrate() -> WaveIntegration:
        return run_integration(
            ctx.repo,
            wave,
            plan,
            session=ctx.state.session,
            checks=() if checked is not None else ctx.config.checks,
            timeout=ctx.config.budgets.agent_minutes * 60.0,
            on_merged=lambda _merged: kill_point("between-merges"),
            policy=ctx.config.checks_policy,
        )

    result = await anyio.to_thread.run_sync(integrate)
    fixes = record_integration(wave, result)
    if checked is not None:
        wave.checks = checked
    for task, reason in plan.refused:
        wave.dropped.append(Dropped(task=task, reason=reason))
        ctx.events.append(MergeRefused(wave=wave.number, agent=task, reason=reason))
        ctx.progress.log(f"error: wave {wave.number} {task}: {reason}")
    report_checks(ctx, wave)
    if not result.mergeable:
        halt_on_base_checks(ctx, wave)
        await ctx.save()
        return
    _queue_conflict_fixes(ctx, wave, fixes)
    await ctx.save()  # the integration is recorded before the branch moves
    kill_point("before-advance")
    baseline = ctx.baseline(wave)
    await anyio.to_thread.run_sync(lambda: advance(ctx.repo, wave, branch, baseline=baseline))
    wave.target_after = wave.integration
    wave.phase = WavePhase.MERGED
    wave.merged_at = round(time.time(), 3)
    await ctx.save()
    merged = [a.task for a in wave.agents if a.merged]
    ctx.events.append(
        WaveMerged(
            wave=wave.number,
            integration=wave.integration,
            merged=tuple(merged),
            resolutions=tuple(wave.resolutions),
            dropped=tuple(wave.dropped),
        )
    )
    await _close_landed(ctx, wave)
    line = f"wave {wave.number}: merged {len(merged)} agent(s) into {branch}"
    if wave.resolutions:
        line += f", {len(wave.resolutions)} conflict(s) resolved by policy"
    if wave.dropped:
        line += f", dropped {', '.join(d.task for d in wave.dropped)}"
    ctx.progress.log(line.removeprefix("seawall: "))
    for agent in wave.agents:
        if set_aside_for_fixes(wave, agent.task):
            ctx.progress.log(f"W{wave.number} {agent.task}: {merge_outcome(wave, agent)}")


def _landed_by_session(ctx: WaveContext, tip: str) -> bool:
    """In a rolling session, whether ``tip`` is the merge of one of its own dispatches
    (the target branch moved under a running agent by the session, not by someone else)."""
    if ctx.config.schedule is not Schedule.ROLLING:
        return False
    return any(w.target_after == tip for w in reversed(ctx.state.waves))


async def _close_landed(ctx: WaveContext, wave: WaveRecord) -> None:
    """Landed tasks close their open carryover issues (from this or an earlier session)."""
    lines: list[str] = []
    await anyio.to_thread.run_sync(
        lambda: close_landed_wave(
            ctx.filer(),
            plan=plan_identity(ctx.plan),
            wave=wave,
            branch=ctx.state.target_branch,
            events=ctx.events,
            log=lines.append,
        )
    )
    for line in lines:
        ctx.progress.log(line)


def _halt_on_conflict(ctx: WaveContext, wave: WaveRecord, detail: str, head: str | None) -> bool:
    """Halt the session on the wave breaker's merge-conflict trigger; the wave stays
    reviewed, so `seawall resume` merges it once the branch is reconciled."""
    line = merge_conflict(ctx.state, wave, ctx.config, detail, head)
    if line is None:
        return False
    ctx.state.phase = SessionPhase.HALTED
    ctx.events.append(
        BreakerTripped(
            wave=wave.number,
            level=BreakerLevel.WAVE,
            trigger=WaveTrigger.MERGE_CONFLICT,
            detail=detail,
        )
    )
    ctx.progress.log(line.removeprefix("seawall: "))
    return True


def _queue_conflict_fixes(ctx: WaveContext, wave: WaveRecord, fixes: Sequence[FixTask]) -> None:
    tasks: list[Task] = []
    for fix in fixes:
        source = next((t for t in wave.tasks if t.id == fix.source_task), None)
        prompt = render_conflict_fix_prompt(
            wave=wave.number,
            earlier=", ".join(fix.against_tasks),
            later=fix.source_task,
            hunks=[(path, fix.hunks) for path in fix.files[:1]],
        )
        author = next((a for a in wave.agents if a.task == fix.source_task), None)
        task = Task(
            id=_fix_id(fix.id),
            prompt=prompt,
            scope=fix.files,
            agent=source.agent if source else None,
            models=(author.model,) if author is not None and author.model else (),
        )
        tasks.append(task)
        wave.fix_tasks.append(task.id)
        ctx.state.task(task.id).origin = task
        if author is not None:  # the author fixes its own work when its CLI can
            continue_later(
                ctx,
                author,
                task,
                happened=f"your work of wave {wave.number} conflicted with the work of "
                f"{', '.join(fix.against_tasks)}, merged first",
                next_step=prompt,
            )
    add_pending(ctx.state, tasks)


def _fix_id(raw: str) -> str:
    """A conflict fix's id as a valid task id (a hash of it when it is not one)."""
    if validate_task_id(raw) is None:
        return raw
    return "fix-" + hashlib.sha256(raw.encode()).hexdigest()[:10]
