"""Step mode: a lead agent dispatches the agents with its own tool.

``prepare_for_lead`` plans and prepares the next wave and returns what the lead needs
to dispatch it (a ``PreparedWave``); ``review_from_lead`` takes each agent's final text
and runs the rest of the wave (review, merge, recover) as the driven loop does (a
``WaveReport``). Both run the driven loop's own halves (``seawall.session.wave_steps``),
so the same halts apply. Neither finishes the session: that is ``finish_session``, its
own step.
"""

from __future__ import annotations

from collections.abc import Mapping

from seawall.errors import StateError
from seawall.session.agent_records import apply_run, snapshot_unreported
from seawall.session.context import WaveContext
from seawall.session.phases.prepare import ensure_workspaces, prompt_for
from seawall.session.step_types import AgentAssignment, AgentReview, PreparedWave, WaveReport
from seawall.session.wave_steps import land_wave, next_wave
from seawall.state.ledger import WavePhase
from seawall.state.render import set_aside_for_fixes

__all__ = ["prepare_for_lead", "review_from_lead"]


async def prepare_for_lead(ctx: WaveContext) -> PreparedWave | None:
    """The wave for the lead to dispatch (the current one again until it is reviewed),
    or None when nothing is left (finishing, which files what is missing, is its own
    step) or the session halted: as the driven loop does, it halts before it plans a
    new wave or hands out a prepared one past its ``budgets.session_minutes``."""
    wave = await next_wave(ctx)
    if wave is None:
        return None
    if wave.phase is WavePhase.PREPARED:
        await ensure_workspaces(ctx, wave)
        wave.phase = WavePhase.DISPATCHED
        wave.lead = True
        await ctx.save()
    tasks = ctx.tasks(wave)
    return PreparedWave(
        session=ctx.state.session,
        wave=wave.number,
        isolation=wave.isolation,
        enforcement=wave.enforcement,
        base=wave.base,
        scope_manifest=str(ctx.paths.wave_dir(wave.number) / "scope.json"),
        agents=tuple(
            AgentAssignment(
                task=agent.task,
                workspace=agent.workspace,
                branch=agent.branch,
                scope=tuple(tasks[agent.task].scope),
                max_turns=tasks[agent.task].max_turns or wave.max_turns,
                prompt=prompt_for(ctx, wave, tasks[agent.task], workspace=agent.workspace),
            )
            for agent in wave.agents
        ),
    )


async def review_from_lead(ctx: WaveContext, outputs: Mapping[str, str]) -> WaveReport:
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
    await land_wave(ctx, wave)
    state = ctx.state
    return WaveReport(
        session=state.session,
        wave=wave.number,
        phase=state.phase,
        agents=tuple(
            AgentReview(
                task=a.task,
                status=a.status,
                summary=a.summary,
                remaining=a.remaining,
                merged=a.merged,
                issue=None if a.issue is None else a.issue.number,
                set_aside=tuple(set_aside_for_fixes(wave, a.task)),
            )
            for a in wave.agents
        ),
        pending=tuple(t.id for t in state.pending),
        set_aside=wave.set_aside,
        checks=wave.checks,
        halt=state.halt,
    )
