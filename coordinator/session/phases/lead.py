"""Step mode: a lead agent dispatches the agents with its own tool.

``prepare_for_lead`` plans and prepares the next wave and returns what the lead needs
to dispatch it; ``review_from_lead`` takes each agent's final text and runs the rest of
the wave (review, merge, recover) as the driven loop does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coordinator.errors import StateError
from coordinator.session.context import WaveContext
from coordinator.session.phases.agents import apply_run, snapshot_unreported
from coordinator.session.phases.finish import finish_session
from coordinator.session.phases.merge import merge
from coordinator.session.phases.planning import plan_next
from coordinator.session.phases.prepare import ensure_workspaces, prepare, prompt_for
from coordinator.session.phases.recover import recover
from coordinator.session.phases.review import review, settle_in_place
from coordinator.state.ledger import WavePhase, WaveRecord

__all__ = ["prepare_for_lead", "review_from_lead"]


async def prepare_for_lead(ctx: WaveContext) -> dict[str, Any] | None:
    """The wave for the lead to dispatch (the current one again until it is reviewed),
    or None once the session has finished."""
    wave = ctx.state.current_wave
    if wave is None or wave.phase is WavePhase.DONE:
        wave = await plan_next(ctx)
        if wave is None:
            await finish_session(ctx)
            return None
    if wave.phase is WavePhase.PLANNED:
        await prepare(ctx, wave)
    if wave.phase is WavePhase.PREPARED:
        await ensure_workspaces(ctx, wave)
        wave.phase = WavePhase.DISPATCHED
        wave.lead = True
        await ctx.save()
    tasks = ctx.tasks(wave)
    return {
        "session": ctx.state.session,
        "wave": wave.number,
        "isolation": wave.isolation,
        "enforcement": wave.enforcement,
        "base": wave.base,
        "scope_manifest": str(ctx.paths.wave_dir(wave.number) / "scope.json"),
        "agents": [
            {
                "task": agent.task,
                "workspace": agent.workspace,
                "branch": agent.branch,
                "scope": list(tasks[agent.task].scope),
                "max_turns": tasks[agent.task].max_turns or wave.max_turns,
                "prompt": prompt_for(ctx, wave, tasks[agent.task]),
            }
            for agent in wave.agents
        ],
    }


async def review_from_lead(ctx: WaveContext, outputs: Mapping[str, str]) -> dict[str, Any]:
    """Review, merge and recover the dispatched wave from the agents' final texts."""
    wave = ctx.state.current_wave
    if wave is None or wave.phase is not WavePhase.DISPATCHED:
        raise StateError("no prepared wave is waiting for review; run `wave prepare` first")
    tasks = ctx.tasks(wave)
    for record in wave.agents:
        if record.run is not None:
            continue
        run = await snapshot_unreported(ctx, wave, record, tasks[record.task])
        text = outputs.get(record.task)
        run.final_text = text or ""
        run.truncated = text is None
        run.stop_reason = "" if text is not None else "no output was given"
        apply_run(ctx, record, run)
    await ctx.save()
    await settle_in_place(ctx, wave)
    await review(ctx, wave)
    await merge(ctx, wave)
    if _merged(wave):  # not halted before the merge
        await recover(ctx, wave)
    state = ctx.state
    return {
        "session": state.session,
        "wave": wave.number,
        "phase": str(state.phase),
        "agents": [
            {
                "task": a.task,
                "status": a.status,
                "summary": a.summary,
                "remaining": a.remaining,
                "merged": a.merged,
                "issue": None if a.issue is None else a.issue.number,
            }
            for a in wave.agents
        ],
        "set_aside": wave.set_aside,
        "pending": [t["id"] for t in state.pending],
        "checks": wave.checks,
        "halt": state.halt or None,
    }


def _merged(wave: WaveRecord) -> bool:
    return wave.phase is WavePhase.MERGED
