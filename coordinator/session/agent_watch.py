"""Dispatch: run the agents of one wave concurrently and watch each of them live.

Per agent: a runner call with its wall clock, the coordinator's own counts (turns, tool
calls, cost), the per-agent breakers and the stagnation detectors on every event, a
shadow checkpoint after every edit, and on any stop that was not clean a ``wip:``
snapshot before anything else happens.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

from seawall.breakers._memory import is_guard_denial
from seawall.breakers.trip import Trip
from seawall.errors import GitError, RunnerError
from seawall.events import Event, Final, ToolCall, ToolResult, Turn, edited_paths
from seawall.git.checkpoints import Checkpointer
from seawall.git.repo import repo_relative
from seawall.hooks.server import serve_hooks
from seawall.model import BreakerLimits, Isolation, StagnationConfig
from seawall.pricing import PriceTable
from seawall.runner import AgentRequest, AgentResult, AgentRunner, RunCounter, RunCounts
from seawall.stagnation import AgentMonitor
from seawall.state.runs import AgentRun
from seawall.telemetry import EventLog

__all__ = ["AgentJob", "AgentRun", "dispatch_wave"]


@dataclass(slots=True, kw_only=True)
class AgentJob:
    """Everything needed to run and watch one agent."""

    task_id: str
    runner: AgentRunner
    request: AgentRequest
    checkpointer: Checkpointer
    limits: BreakerLimits
    stagnation: StagnationConfig
    max_turns: int
    wave: int
    session: str
    in_place: bool
    repo: Path
    event_log: EventLog | None = None
    prices: PriceTable | None = None  # prices usage that comes without a cost
    scope_paths: Callable[[], Sequence[str]] = lambda: ()


OnEvent = Callable[[str, Event, RunCounter], None]
OnFinished = Callable[[AgentRun], Awaitable[None]]


async def dispatch_wave(
    jobs: Sequence[AgentJob],
    *,
    on_event: OnEvent | None = None,
    on_trip: Callable[[AgentJob, Trip], None] | None = None,
    on_finished: OnFinished | None = None,
    limit: int | None = None,
) -> list[AgentRun]:
    """Run ``jobs`` concurrently (at most ``limit`` at once); return their runs in job order.

    ``on_finished`` is awaited as each agent ends (the session records it at once, so a
    crash after one agent finished loses nothing). The session's hook server answers the
    agents' hook calls from before the first starts until the last has ended.
    """
    runs: dict[str, AgentRun] = {}
    limiter = anyio.CapacityLimiter(limit or max(1, len(jobs)))

    async def one(job: AgentJob) -> None:
        async with limiter:
            run = await run_agent(job, on_event=on_event, on_trip=on_trip)
        runs[job.task_id] = run
        if on_finished is not None:
            await on_finished(run)

    async with serve_hooks() as hook_socket:  # the agents' hook calls are decided here
        for job in jobs:
            job.request = replace(job.request, hook_socket=hook_socket)
        async with anyio.create_task_group() as group:
            for job in jobs:
                group.start_soon(one, job)
    return [runs[job.task_id] for job in jobs]


@dataclass(slots=True)
class _Watch:
    """What the coordinator saw of one running agent besides its counts: the trip that
    stopped it, why it was stopped, its errors, edits and guard denials."""

    trip: Trip | None = None
    stop: str = ""
    saw_errors: bool = False
    last_error: str = ""
    checkpoint_error: str = ""
    failed_edits: int = 0
    last_failed_edit: str = ""
    writes: int = 0
    guard_denials: int = 0
    last_guard_denial: str = ""
    events: int = 0  # events of the run, not counting a runner's own end-of-run note


async def run_agent(
    job: AgentJob,
    *,
    on_event: OnEvent | None = None,
    on_trip: Callable[[AgentJob, Trip], None] | None = None,
) -> AgentRun:
    """Run one agent to its end under the coordinator's watch."""
    counter = RunCounter(clock=time.monotonic, prices=job.prices)
    monitor = AgentMonitor(
        session=job.session,
        wave=job.wave,
        agent=job.task_id,
        workspace=job.request.workspace,
        repo=job.repo,
        isolation=Isolation.NONE if job.in_place else Isolation.WORKTREE,
        limits=job.limits,
        stagnation=job.stagnation,
        event_log=job.event_log,
    )
    pending_edits: dict[str, tuple[str, ...]] = {}
    touched: set[str] = set()
    watch = _Watch()

    async def emit(event: Event) -> None:
        if not (type(event) is Final and not event.text):  # a runner's own end-of-run note
            watch.events += 1
        counter.observe(event)
        if on_event is not None:
            on_event(job.task_id, event, counter)
        if type(event) is ToolCall:
            paths = edited_paths(event)
            if paths:
                pending_edits[event.call_id] = paths
        elif type(event) is ToolResult:
            denied = False
            if event.is_error and not event.cancelled:
                watch.saw_errors = True
                watch.last_error = event.text[-2000:]
                denied = is_guard_denial(event.text)
                if denied:
                    watch.guard_denials += 1
                    watch.last_guard_denial = event.text[:500]
            paths = pending_edits.pop(event.call_id, ())
            if paths and event.is_error and not event.cancelled and not denied:
                watch.failed_edits += 1
                watch.last_failed_edit = event.text[:500]
            if paths and not event.is_error:
                watch.writes += 1
                touched.update(_relative(job.request.workspace, path) for path in paths)
                await _guarded(watch, job.checkpointer.acheckpoint(paths if job.in_place else None))
        trip = monitor.observe(event)
        if trip is not None and watch.trip is None and not trip.self_service:
            watch.trip = trip
            _stop(job, f"breaker {trip.kind.label}: {trip.evidence}", watch)
            if on_trip is not None:
                on_trip(job, trip)
        if type(event) is Turn and counter.turns > job.max_turns and not watch.stop:
            _stop(job, f"turn limit: {counter.turns} turns > max {job.max_turns}", watch)

    result: AgentResult | None = None
    runner_error = ""
    start_failure = ""
    try:
        result = await job.runner.run(job.request, emit)
    except RunnerError as exc:  # the program could not be started at all
        runner_error = start_failure = str(exc)
    except Exception as exc:  # noqa: BLE001 - a runner that breaks is this agent's outcome
        runner_error = f"{type(exc).__name__}: {exc}"
    final_paths = tuple(sorted(touched.union(job.scope_paths() if job.in_place else ())))
    checkpoint = await _guarded(
        watch, job.checkpointer.acheckpoint(final_paths if job.in_place else None)
    )
    final = counter.final
    if final is not None and final.turn_limit and not watch.stop:
        turns = final.num_turns if final.num_turns is not None else counter.turns
        watch.stop = f"turn limit: the agent stopped after {turns} turns (max {job.max_turns})"
    interrupted = result is None or result.interrupted or bool(watch.stop)
    wip = None
    trip = watch.trip
    if interrupted and (trip is None or trip.wants_snapshot):
        reason = watch.stop or (result.stop_reason if result else "") or runner_error
        wip = await _guarded(
            watch, job.checkpointer.awip(reason or "stopped", final_paths if job.in_place else None)
        )
    final_text = result.final_text if result else ""
    if not final_text and counter.final is not None:
        final_text = counter.final.text
    if result is not None and checkpoint is None and job.checkpointer.tip is None:
        start_failure = _died_at_start(result, events=watch.events, touched=touched)
    return AgentRun(
        task_id=job.task_id,
        is_error=bool(result and result.is_error) or bool(runner_error),
        exit_code=result.exit_code if result else None,
        transcript=str(result.transcript_path or "") if result else "",
        counts=RunCounts(
            turns=counter.turns,
            tool_calls=counter.tool_calls,
            cost_usd=round(counter.cost_usd, 6),
            cost_estimated=counter.cost_estimated,
            input_tokens=counter.input_tokens,
            output_tokens=counter.output_tokens,
            elapsed_s=round(counter.elapsed_s, 3),
            last_tool=counter.last_tool or "",
        ),
        trip=trip,
        stop_reason=watch.stop or (result.stop_reason if result else ""),
        final_text=final_text,
        checkpoint=checkpoint or job.checkpointer.tip,
        wip=wip,
        touched=final_paths,
        findings=list(monitor.finish()),
        runner_error=runner_error,
        checkpoint_error=watch.checkpoint_error,
        truncated=interrupted and not runner_error,
        saw_errors=watch.saw_errors or bool(result and result.is_error),
        last_error=watch.last_error,
        denials=final.denials if final is not None else (),
        failed_edits=watch.failed_edits,
        last_failed_edit=watch.last_failed_edit,
        writes=watch.writes,
        guard_denials=watch.guard_denials,
        last_guard_denial=watch.last_guard_denial,
        start_failure=start_failure,
        stderr_tail=result.stderr_tail[-2000:] if result else "",
    )


def _died_at_start(result: AgentResult, *, events: int, touched: set[str]) -> str:
    """Why an agent that ended by itself, failing, before its first event and without
    changing a file, never really started; "" when it did start."""
    if events or touched or result.interrupted or not result.is_error:
        return ""
    code = result.exit_code
    how = f"killed by signal {-code}" if code is not None and code < 0 else f"exited {code}"
    return f"the agent {how} before its first event"


async def _guarded(watch: _Watch, step: Awaitable[str | None]) -> str | None:
    """Run one checkpoint step; a git failure (a full disk) is kept for the session to
    report once the wave's agents have ended, instead of cancelling the whole wave. The
    agent's files stay in its workspace, where a resume records them."""
    try:
        return await step
    except GitError as exc:
        watch.checkpoint_error = watch.checkpoint_error or str(exc)
        return None


def _stop(job: AgentJob, reason: str, watch: _Watch) -> None:
    watch.stop = reason
    job.request.stop.stop(reason)


def _relative(workspace: Path, path: str) -> str:
    """``path`` relative to the workspace when it lies inside it (agents give absolute
    paths, and a workspace may be reached through a symlink); otherwise as given."""
    for root in (workspace, workspace.resolve()):
        relative = repo_relative(root, path)
        if relative is not None:
            return relative
    return path
