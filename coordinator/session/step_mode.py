"""Step mode: a lead agent dispatches the agents with its own tool.

``prepare_for_lead`` plans and prepares the next wave and returns what the lead needs
to dispatch it (a ``PreparedWave``); ``review_from_lead`` takes each agent's final text
and runs the rest of the wave (review, merge, recover) as the driven loop does (a
``WaveReport``). Both run the driven loop's own halves (``seawall.session.wave_steps``),
so the same halts apply. Neither finishes the session: that is ``finish_session``, its
own step.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from seawall.errors import StateError
from seawall.model import Schedule
from seawall.session.agent_records import apply_run, snapshot_unreported
from seawall.session.context import WaveContext
from seawall.session.halts import halt_on_session_time
from seawall.session.phases.prepare import ensure_workspaces, prepare, prompt_for
from seawall.session.rolling import dispatch_ready, land_finished
from seawall.session.step_types import AgentAssignment, AgentReview, PreparedWave, WaveReport
from seawall.session.wave_steps import land_wave, next_wave
from seawall.state.ledger import SessionPhase, WavePhase, WaveRecord
from seawall.state.render import set_aside_for_fixes

__all__ = ["lead_out", "prepare_for_lead", "review_from_lead"]


async def prepare_for_lead(ctx: WaveContext) -> PreparedWave | None:
    """The wave for the lead to dispatch (the current one again until it is reviewed),
    or None when nothing is left (finishing, which files what is missing, is its own
    step) or the session halted: as the driven loop does, it halts before it plans a
    new wave or hands out a prepared one past its ``budgets.session_minutes``. A rolling
    session hands out one dispatch at a time (``_prepare_rolling``)."""
    if ctx.config.schedule is Schedule.ROLLING:
        return await _prepare_rolling(ctx)
    wave = await next_wave(ctx)
    if wave is None:
        return None
    if wave.phase is WavePhase.PREPARED:
        await _hand_out(ctx, wave)
    return _prepared(ctx, wave)


async def _prepare_rolling(ctx: WaveContext) -> PreparedWave | None:
    """A rolling session's next dispatch for the lead: a task that may start now beside
    the agents the lead has out (its dependencies landed, a slot free, no scope
    colliding), or, when none may, the first agent still out again (the lead then waits
    for an agent to finish and sends its output). None when nothing is out or left."""
    out = lead_out(ctx)
    waiting = [w for w in ctx.state.waves if w.phase in (WavePhase.PLANNED, WavePhase.PREPARED)]
    if not waiting:
        waiting = await dispatch_ready(ctx, out)
    for wave in waiting:
        if wave.phase is WavePhase.PLANNED:
            await prepare(ctx, wave)
            if wave.phase is WavePhase.PLANNED:  # the base failed the checks: halted
                return None
        if await halt_on_session_time(ctx, wave):
            return None
        await _hand_out(ctx, wave)
        return _prepared(ctx, wave)
    if ctx.state.phase is not SessionPhase.RUNNING or not out:
        return None
    return _prepared(ctx, out[0])


def lead_out(ctx: WaveContext) -> list[WaveRecord]:
    """The dispatches handed to the lead and not reviewed yet, in the order handed out."""
    return [w for w in ctx.state.waves if w.phase is WavePhase.DISPATCHED]


async def _hand_out(ctx: WaveContext, wave: WaveRecord) -> None:
    await ensure_workspaces(ctx, wave)
    wave.phase = WavePhase.DISPATCHED
    wave.lead = True
    await ctx.save()


def _prepared(ctx: WaveContext, wave: WaveRecord) -> PreparedWave:
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
    """Review, merge and recover the dispatched wave from the agents' final texts. In a
    rolling session, the dispatches whose agents ``outputs`` names (in its order, the
    order they finished); the agents still out stay out."""
    if ctx.config.schedule is Schedule.ROLLING:
        finished = [w for task in outputs for w in lead_out(ctx) if w.agents[0].task == task]
        if not finished:
            raise StateError(
                "no agent handed out is named in the outputs; give the final text of "
                "each agent that finished"
            )
    else:
        wave = ctx.state.current_wave
        if wave is None or wave.phase is not WavePhase.DISPATCHED:
            raise StateError("no prepared wave is waiting for review; run `wave prepare` first")
        finished = [wave]
    for wave in finished:
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
        wave.ended_at = round(time.time(), 3)
    await ctx.save()
    if ctx.config.schedule is Schedule.ROLLING:
        await land_finished(ctx, finished)
    else:
        await land_wave(ctx, finished[0])
    state = ctx.state
    last = finished[-1]
    return WaveReport(
        session=state.session,
        wave=finished[0].number,
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
            for wave in finished
            for a in wave.agents
        ),
        pending=tuple(t.id for t in state.pending),
        set_aside=last.set_aside,
        adopted=last.adopted,
        checks=last.checks,
        halt=state.halt,
    )
