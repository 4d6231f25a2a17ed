"""Recovering after the merge: each agent that did not land is re-scoped, carried
forward or escalated with a carryover issue (filed once, found again when it exists);
then the wave is closed: manifest closed, worktrees pruned, the wave breaker fed."""

from __future__ import annotations

import time
from dataclasses import replace

import anyio

from seawall.carryover import Carryover, CarryoverKind, plan_identity
from seawall.git.cleanup import prune_worktrees
from seawall.git.repo import checkpoint_ref
from seawall.model import Isolation, Status, Task
from seawall.prompting import render_carry_forward_prompt
from seawall.runtime.fault_injection import kill_point
from seawall.scope.manifest import close_manifest, manifest_path
from seawall.session.after_review import Action, Recovery, decide_recovery
from seawall.session.context import WaveContext
from seawall.session.continuation import recovery_continuation
from seawall.session.limits import paused_agents, settle_pauses
from seawall.session.tasks import add_pending
from seawall.session.wave_breaker import evaluate_wave
from seawall.state.ledger import AgentRecord, IssueRef, SessionPhase, WavePhase, WaveRecord
from seawall.state.render import pending_note, run_notes
from seawall.telemetry import (
    BreakerLevel,
    BreakerNotHalting,
    BreakerTripped,
    RecoveryDecided,
    WaveFinished,
    WorktreeKept,
)

__all__ = ["recover"]


async def recover(ctx: WaveContext, wave: WaveRecord) -> None:
    """Decide what comes of each agent of the merged wave; the wave is then ``done``."""
    tasks = ctx.tasks(wave)
    next_tasks: list[Task] = []
    for record in wave.agents:
        task_record = ctx.state.task(record.task)
        if record.status is Status.PAUSED:  # a provider's limit: the same task again
            continue
        original = task_record.origin or tasks[record.task]
        recovery = decide_recovery(
            original,
            record,
            task_record,
            max_attempts=ctx.config.wave_breaker.max_rework_cycles + 1,
        )
        if recovery.next_task is not None:
            next_tasks.append(recovery.next_task)
            task_record.rework += 1
            if recovery.action in (Action.CARRY_FORWARD, Action.FIX):
                recovery_continuation(ctx, record, recovery.next_task)
        if recovery.action is Action.ESCALATE:
            task_record.abandoned = True
        if recovery.carryover is not None and task_record.issue is None:
            await _file_carryover(ctx, wave, record, original, recovery.carryover)
        elif recovery.carryover is not None and task_record.issue is not None:
            record.issue = IssueRef(
                number=task_record.issue.number, url=task_record.issue.url, existing=True
            )
        if recovery.action is not Action.NONE:
            record.recovery = recovery.reason
            ctx.progress.log(f"W{wave.number} {record.task}: {_retry_line(ctx, recovery)}")
            ctx.events.append(
                RecoveryDecided(
                    wave=wave.number,
                    agent=record.task,
                    action=recovery.action,
                    reason=recovery.reason,
                )
            )
    for task in settle_pauses(ctx, wave, tasks):
        original = ctx.state.task(task.id).origin or task
        record = wave.agent(task.id)
        record.recovery = "paused: runs again after the provider's reset"
        prompt = original.prompt
        if record.touched:  # it had begun: its work (merged) is carried forward
            prompt = render_carry_forward_prompt(
                original, done=record.summary, remaining=record.remaining
            )
        again = replace(original, prompt=prompt, depends_on=())
        next_tasks.append(again)
        if recovery_continuation(ctx, record, again):
            record.recovery += ", continuing its conversation"
        ctx.progress.log(f"W{wave.number} {task.id}: {record.recovery}")
    add_pending(ctx.state, next_tasks)
    _say_waiting(ctx, wave)
    await _finish_wave(ctx, wave)


def _retry_line(ctx: WaveContext, recovery: Recovery) -> str:
    """The console's line for a recovery: the retry and where it runs, or the escalation."""
    task = recovery.next_task
    if task is None:
        return recovery.reason
    how = "continues its conversation" if ctx.state.task(task.id).conversation else "runs again"
    return f"{recovery.reason}; {task.id} {how} in a later wave"


def _say_waiting(ctx: WaveContext, wave: WaveRecord) -> None:
    """Name the pending tasks that depend on an agent of ``wave`` that did not finish:
    they wait for its retry, or run without it when it was abandoned."""
    unfinished = {a.task for a in wave.agents if not (a.status and a.status.is_success)}
    for task in ctx.state.pending:
        if unfinished.intersection(task.depends_on):
            note = pending_note(ctx.state, task)
            if note:
                ctx.progress.log(f"W{wave.number} {task.id}: {note}")


async def _finish_wave(ctx: WaveContext, wave: WaveRecord) -> None:
    await _cleanup(ctx, wave)
    wave.phase = WavePhase.DONE
    wave.finished_at = round(time.time(), 3)
    # a wave only paused tried nothing: the breaker has nothing to count
    if len(paused_agents(wave)) < len(wave.agents):
        _wave_breaker(ctx, wave)
    await ctx.save()
    ctx.events.append(
        WaveFinished(wave=wave.number, statuses={a.task: a.status for a in wave.agents})
    )


async def _file_carryover(
    ctx: WaveContext, wave: WaveRecord, record: AgentRecord, task: Task, kind: str
) -> None:
    work = record.wip or record.checkpoint or ""
    carryover = Carryover(
        plan=plan_identity(ctx.plan),
        task_id=task.id,
        kind=CarryoverKind(kind),
        session=ctx.state.session,
        wave=wave.number,
        description=task.prompt.strip().splitlines()[0][:80],
        tried=record.summary or (record.reason if record.inferred else ""),
        spiral_verdict=record.spiral.summary if record.spiral else "",
        error_signature=record.error_signature,
        remaining=record.remaining,
        # where a status was read says nothing; the ground of an inferred one does
        context="\n".join(
            [
                *([f"The status was inferred: {record.reason}."] if record.inferred else []),
                *(f"- {n}" for n in run_notes(record.run)),
            ]
        ),
        final_text=record.final_text,
        # the ref that holds the agent's work (its checkpoint ref), or "" when it has none
        work_ref=checkpoint_ref(ctx.state.session, record.task) if work else "",
        work_commit=work,
        base=wave.base,
        plan_path=ctx.state.plan_path,
    )
    result = await anyio.to_thread.run_sync(lambda: ctx.filer().file(carryover))
    kill_point("after-issue-created")
    if result.number is not None and result.skipped != "error":
        ref = IssueRef(number=result.number, url=result.url or "", existing=not result.created)
        record.issue = ref
        ctx.state.task(task.id).issue = ref
        ctx.progress.log(f"W{wave.number} {task.id}: {kind} {ref.suffix()}")
    else:
        ctx.progress.log(f"warning: carryover for {task.id} not filed: {result.error}")
    await ctx.save()  # the filer recorded the filing in the telemetry


async def _cleanup(ctx: WaveContext, wave: WaveRecord) -> None:
    path = manifest_path(ctx.repo, ctx.state.session, wave.number)
    if path.exists():
        close_manifest(path)
    if wave.isolation is not Isolation.WORKTREE:
        return
    paths = [agent.workspace for agent in wave.agents]
    report = await anyio.to_thread.run_sync(lambda: prune_worktrees(ctx.repo, paths=paths))
    for info in report.kept:
        ctx.events.append(
            WorktreeKept(wave=wave.number, agent=info.task, path=info.path, reason=info.reason)
        )


def _wave_breaker(ctx: WaveContext, wave: WaveRecord) -> None:
    line = evaluate_wave(ctx.state, wave, ctx.config)
    if line is None:
        return
    if not ctx.state.pending:
        ctx.events.append(
            BreakerNotHalting(
                wave=wave.number, line=line, reason="no work is left; the session ends"
            )
        )
        return
    ctx.state.phase = SessionPhase.HALTED
    breaker = ctx.state.breaker
    ctx.events.append(
        BreakerTripped(
            wave=wave.number,
            level=BreakerLevel.WAVE,
            trigger=None if breaker is None else breaker.trigger,
            detail=None if breaker is None else breaker.detail,
        )
    )
    ctx.progress.log(line.removeprefix("seawall: "))
