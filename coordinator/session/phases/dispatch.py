"""Dispatching a prepared wave: every agent at once (up to the wave cap), each recorded
in its own run file the moment it ends; and, on resume, the salvage of agents the dead
coordinator never heard back from."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from seawall.breakers.blocked import append_blocked_note
from seawall.breakers.trip import Trip
from seawall.codec import decode_any, encode, from_data
from seawall.errors import GitError, RunnerError, StateError
from seawall.events import Event, ToolCall
from seawall.git.sparse import task_sparse_dirs
from seawall.git.workspaces import restore_worktree
from seawall.model import Isolation, Schedule, Task
from seawall.pricing import PriceTable
from seawall.report.progress import Progress
from seawall.runner import AgentRequest, RunCounter
from seawall.runtime.fault_injection import kill_point
from seawall.runtime.files import atomic_write_bytes
from seawall.runtime.orphans import find_orphans, stop_orphans
from seawall.sandbox.selection import agent_sandbox
from seawall.session.agent_records import (
    apply_run,
    checkpointer,
    dirty_in_scope,
    placeholder_record,
    snapshot_unreported,
)
from seawall.session.agent_watch import AgentJob, AgentRun, dispatch_wave
from seawall.session.context import WaveContext
from seawall.session.continuation import SALVAGED, continued_request, said_at_dispatch
from seawall.session.limits import held_runner
from seawall.session.phases.prepare import ensure_workspaces, prompt_for, wave_manifest
from seawall.state.ledger import AgentRecord, WavePhase, WaveRecord
from seawall.state.live import live_path, read_live
from seawall.state.render import run_notes
from seawall.telemetry import (
    AgentFinished,
    AgentSalvaged,
    OrphanStopped,
    RemoteOrphansUnchecked,
    WorktreeRecreated,
)

__all__ = ["dispatch", "progress_hook", "salvage"]


async def dispatch(ctx: WaveContext, wave: WaveRecord) -> None:
    """Run the wave's agents; the wave is ``dispatched`` before the first one starts."""
    tasks = ctx.tasks(wave)
    await ensure_workspaces(ctx, wave)
    # after a halt on agents that could not start, only those run again
    jobs = [_job(ctx, wave, agent, tasks[agent.task]) for agent in wave.agents if agent.run is None]
    wave.phase = WavePhase.DISPATCHED
    await ctx.save()
    rolling = ctx.config.schedule is Schedule.ROLLING
    if rolling:  # one agent of many running: its row joins the others
        for agent in wave.agents:
            ctx.progress.agent_started(wave.number, wave.isolation, wave.enforcement, agent.task)
    else:
        ctx.progress.wave_started(
            wave.number, wave.isolation, wave.enforcement, [agent.task for agent in wave.agents]
        )

    for agent in wave.agents:
        if agent.resumes is not None and agent.run is None:
            ctx.progress.log(said_at_dispatch(wave, agent))
        if agent.model and agent.run is None:  # the task names the model of each attempt
            attempt = ctx.state.task(agent.task).attempts + 1
            ctx.progress.log(
                f"W{wave.number} {agent.task}: attempt {attempt} on model {agent.model}"
            )

    async def finished(run: AgentRun) -> None:
        await _finished(ctx, wave, run)

    def on_trip(job: AgentJob, trip: Trip) -> None:
        # said at once; the BLOCKED.md note waits for the agent's end, so it can name the
        # ``wip:`` snapshot that then exists (taken as soon as the agent stopped)
        ctx.progress.log(f"W{wave.number} {job.task_id}: {trip.message(job.task_id)}")

    # heartbeats of agents that print nothing (a rolling session ticks for all its agents)
    async with contextlib.nullcontext() if rolling else ctx.progress.ticking():
        await dispatch_wave(
            jobs,
            on_event=progress_hook(ctx.progress),
            on_trip=on_trip,
            on_finished=finished,
            limit=ctx.config.max_agents_per_wave,
        )
    wave.ended_at = round(time.time(), 3)
    if not rolling:
        ctx.progress.wave_finished()
    broken = {
        a.task: a.run.checkpoint_error for a in wave.agents if a.run and a.run.checkpoint_error
    }
    if broken:
        first = next(iter(broken.values()))
        raise GitError(
            f"wave {wave.number}: the work of {', '.join(sorted(broken))} could not be "
            f"recorded ({first}). Their files are still in their "
            "workspaces; fix the cause, then `seawall resume` records and reviews them."
        )


def progress_hook(progress: Progress) -> Callable[[str, Event, RunCounter], None]:
    """The live table's update for each event of an agent."""

    def on_event(task_id: str, event: Event, counter: RunCounter) -> None:
        changes: dict[str, object] = {
            "turns": counter.turns,
            "tool_calls": counter.tool_calls,
            "cost_usd": counter.cost_usd,
            "cost_estimated": counter.cost_estimated,
        }
        if type(event) is ToolCall:
            changes["last_tool"] = event.name
        progress.update(task_id, **changes)

    return on_event


def _job(ctx: WaveContext, wave: WaveRecord, agent: AgentRecord, task: Task) -> AgentJob:
    in_place = wave.isolation is Isolation.NONE
    config = ctx.config
    runner = ctx.runner_for(task)
    max_turns = task.max_turns or wave.max_turns
    manifest, manifest_sha256 = wave_manifest(ctx, wave)
    request = AgentRequest(
        task_id=task.id,
        prompt=prompt_for(ctx, wave, task),
        workspace=Path(agent.workspace),
        session=ctx.state.session,
        wave=wave.number,
        max_turns=max_turns,
        time_limit=config.budgets.agent_minutes * 60.0,
        transcript_path=ctx.paths.agent_dir(task.id) / f"w{wave.number}-transcript.jsonl",
        sandbox=agent_sandbox(
            task_id=task.id,
            workspace=Path(agent.workspace),
            in_place=in_place,
            scope=task.scope,
            enforcement=wave.enforcement,
            accept_hooks_only=config.accept_hooks_only,
            starts_processes=runner.starts_processes,
            extra_writable=config.sandbox_writable,
            placeholder_record=placeholder_record(ctx, wave.number, task.id),
        ),
        manifest=manifest,
        manifest_sha256=manifest_sha256,
        model=agent.model or None,
    )
    fresh = None
    if agent.resumes is not None:  # its own conversation goes on; afresh when it cannot
        fresh = request
        request = continued_request(
            request,
            agent.resumes,
            task,
            render=lambda text, workspace: prompt_for(ctx, wave, text, workspace=workspace),
        )

    def scope_paths() -> tuple[str, ...]:
        return dirty_in_scope(ctx, wave, task) if in_place else ()

    return AgentJob(
        task_id=task.id,
        runner=held_runner(ctx, task, runner),
        request=request,
        checkpointer=checkpointer(ctx, wave, agent),
        limits=ctx.breaker_limits(),
        stagnation=config.stagnation,
        prices=PriceTable(config.prices),
        max_turns=max_turns,
        wave=wave.number,
        session=ctx.state.session,
        in_place=in_place,
        repo=ctx.repo,
        event_log=ctx.events,
        scope_paths=scope_paths,
        scope=tuple(task.scope),
        shared=ctx.paths,
        fresh=fresh,
    )


async def _finished(ctx: WaveContext, wave: WaveRecord, run: AgentRun) -> None:
    """Record one agent's outcome at once, in its own small file (not the whole ledger:
    rewriting the ledger per agent would cost O(agents²) in a large wave)."""
    apply_run(ctx, wave.agent(run.task_id), run)
    if run.trip is not None:
        append_blocked_note(
            ctx.paths.blocked, run.trip, agent=run.task_id, wave=wave.number, snapshot=run.wip
        )
    ctx.progress.finished(run.task_id, "stopped" if run.truncated else "finished")
    for line in run_notes(run):
        ctx.progress.log(f"W{wave.number} {run.task_id}: {line}")
    ctx.events.append(
        AgentFinished(
            wave=wave.number,
            agent=run.task_id,
            truncated=run.truncated,
            stop_reason=run.stop_reason,
            counts=run.counts,
        )
    )
    if run.watch_problem:
        ctx.progress.log(
            f"warning: W{wave.number} {run.task_id}: {run.watch_problem}; its edit history "
            "holds only its last checkpoint"
        )
    if run.checkpoint_error:
        # no run record: a resume then records the agent's files from its workspace
        ctx.progress.log(f"W{wave.number} {run.task_id}: {run.checkpoint_error}")
    else:
        path, data = ctx.run_file(wave, run.task_id), encode(run.for_ledger())
        try:
            await anyio.to_thread.run_sync(lambda: atomic_write_bytes(path, data))
        except StateError as exc:  # the ledger save after the wave reports the disk
            ctx.progress.log(f"warning: W{wave.number} {run.task_id}: {exc}")
    kill_point("after-agent-finished")


async def salvage(ctx: WaveContext, wave: WaveRecord) -> None:
    """Agents that never reported (the coordinator died): their recorded run, or their
    work snapshotted as wip."""
    tasks = ctx.tasks(wave)
    salvaged = False
    for record in wave.agents:
        if record.run is not None:
            continue
        salvaged = True
        recorded = ctx.run_file(wave, record.task)
        if recorded.exists():
            # a run recorded before runs named their task takes the record's
            data = {"task_id": record.task, **decode_any(recorded.read_bytes())}
            run = from_data(data, AgentRun)
            apply_run(ctx, record, run)
            continue
        await _stop_orphans(ctx, tasks[record.task])
        await _restore_missing_worktree(ctx, wave, record)
        run = await snapshot_unreported(ctx, wave, record, tasks[record.task], wip=SALVAGED)
        run.truncated, run.stop_reason = True, SALVAGED
        # the conversation its CLI named, which the agent's live file kept
        live = read_live(live_path(ctx.paths, record.task, wave.number))
        run.conversation = live.conversation if live is not None else ""
        run.continued = record.resumes.id if record.resumes is not None else ""
        apply_run(ctx, record, run)
        ctx.events.append(
            AgentSalvaged(wave=wave.number, agent=record.task, checkpoint=run.checkpoint)
        )
    if salvaged:
        await ctx.save()


async def _stop_orphans(ctx: WaveContext, task: Task) -> None:
    """Stop an agent the dead coordinator left running, wherever its runner runs agents
    and then here, before salvaging its work.

    Where the runner cannot look (a cluster that cannot be reached) the salvage goes
    on, said in the log and the events: a remote agent writes only to its own clone,
    never into this machine's copy, so what is salvaged is the same either way."""
    try:
        remote = await ctx.runner_for(task).stop_remote_orphans(ctx.state.session, task.id)
    except RunnerError as exc:
        ctx.events.append(RemoteOrphansUnchecked(agent=task.id, error=str(exc)))
        ctx.progress.log(
            f"warning: {task.id}: could not look for a remote agent the previous coordinator "
            f"left running: {exc}"
        )
    else:
        if remote:
            ctx.events.append(OrphanStopped(agent=task.id, remote=tuple(remote)))
            ctx.progress.log(
                f"{task.id}: stopped the remote agent the previous coordinator left running "
                f"({'; '.join(remote)})"
            )
    groups = await anyio.to_thread.run_sync(find_orphans, ctx.state.session, task.id)
    if groups:
        stopped = await anyio.to_thread.run_sync(stop_orphans, groups)
        ctx.events.append(OrphanStopped(agent=task.id, process_groups=tuple(sorted(stopped))))
        ctx.progress.log(f"{task.id}: stopped the agent the previous coordinator left running")


async def _restore_missing_worktree(
    ctx: WaveContext, wave: WaveRecord, record: AgentRecord
) -> None:
    """A worktree folder deleted under a running wave comes back at its branch's tip
    (the agent's commits); its uncommitted files went with the folder."""
    if wave.isolation is not Isolation.WORKTREE or record.branch is None:
        return
    if (Path(record.workspace) / ".git").exists():
        return
    task = ctx.tasks(wave).get(record.task)
    sparse = None if task is None else task_sparse_dirs(task, ctx.config)
    if await restore_worktree(ctx.repo, record.workspace, record.branch, sparse=sparse):
        ctx.events.append(WorktreeRecreated(wave=wave.number, path=record.workspace))
        ctx.progress.log(f"{record.task}: its worktree folder was missing; made again")
