"""The watch of running agents: run the agents of one wave concurrently, each watched live.

Per agent: a runner call with its wall clock, the coordinator's own counts (turns, tool
calls, cost), the per-agent breakers and the stagnation detectors on every event, a
shadow checkpoint after every edit, and on any stop that was not clean a ``wip:``
snapshot before anything else happens.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from pathlib import Path

import anyio
import anyio.lowlevel

from seawall.breakers.memory import is_guard_denial
from seawall.breakers.trip import Trip
from seawall.errors import GitError, RunnerError
from seawall.events import (
    Conversation,
    Event,
    Final,
    ProviderLimit,
    ToolCall,
    ToolResult,
    Turn,
    edited_paths,
    shell_command,
)
from seawall.git.checkpoints import Checkpointer
from seawall.git.repo import repo_relative
from seawall.hooks.server import serve_hooks
from seawall.model import BreakerLimits, Isolation, StagnationConfig
from seawall.pricing import PriceTable
from seawall.runner import AgentRequest, AgentResult, AgentRunner, RunCounter, RunCounts
from seawall.scope.bashwrites import line_writes
from seawall.scope.matcher import ScopeMatcher
from seawall.session.agent_live import shared_live
from seawall.session.edit_watch import EditWatches
from seawall.stagnation import AgentMonitor
from seawall.state.live import LiveCounts
from seawall.state.runs import AgentRun
from seawall.state.store import SessionPaths
from seawall.telemetry import EventLog

__all__ = ["AgentJob", "AgentRun", "AgentWatch", "dispatch_wave", "run_agent"]


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
    scope: tuple[str, ...] = ()  # the task's scope grants (an in-place watch keeps to them)
    shared: SessionPaths | None = None  # the session whose files show the agent live
    # a run continuing a conversation: the request that starts the agent afresh when the
    # CLI cannot continue it (the conversation is gone)
    fresh: AgentRequest | None = None


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
            run = await run_agent(job, on_event=on_event, on_trip=on_trip, watches=watches)
        runs[job.task_id] = run
        if on_finished is not None:
            await on_finished(run)

    async with serve_hooks() as hook_socket:  # the agents' hook calls are decided here
        for job in jobs:
            job.request = replace(job.request, hook_socket=hook_socket)
            if job.fresh is not None:
                job.fresh = replace(job.fresh, hook_socket=hook_socket)
        async with anyio.create_task_group() as group:
            watches = EditWatches(group)  # one watch per tree, for runners naming no edits
            for job in jobs:
                group.start_soon(one, job)
    return [runs[job.task_id] for job in jobs]


class AgentWatch:
    """The coordinator's live watch of one running agent, fed every event the runner
    streams (``observe``): its counts, the edits it makes (a shadow checkpoint after
    each), its errors and guard denials, and the judgement that stops it (``judge``).
    ``finish`` turns what was seen into the agent's ``AgentRun``."""

    def __init__(
        self,
        job: AgentJob,
        *,
        on_event: OnEvent | None = None,
        on_trip: Callable[[AgentJob, Trip], None] | None = None,
    ) -> None:
        self.job = job
        self.on_event = on_event
        self.on_trip = on_trip
        self.counter = RunCounter(clock=time.monotonic, prices=job.prices)
        self.monitor = AgentMonitor(
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
        self.pending_edits: dict[str, tuple[str, ...]] = {}  # call id -> paths it edits
        self.touched: set[str] = set()
        self.shell_writes: set[str] = set()  # in place: what its shell commands write
        self.trip: Trip | None = None  # the trip that stopped the agent
        self.stop_reason = ""  # why the coordinator stopped it ("" while it was not)
        self.saw_errors = False
        self.last_error = ""
        self.checkpoint_error = ""
        self.failed_edits = 0
        self.last_failed_edit = ""
        self.writes = 0
        self.guard_denials = 0
        self.last_guard_denial = ""
        self.events = 0  # events of the run, not counting a runner's own end-of-run note
        self.started_at = time.time()
        self.watch_problem = ""  # why the workspace could not be watched ("" when it was)
        self.conversation = job.request.conversation or ""  # the CLI names it (again)

    async def observe(self, event: Event) -> None:
        """The runner's event callback: count, record edits, then judge."""
        if type(event) is Conversation:
            self.conversation = event.id
            return
        if not (type(event) is Final and not event.text):  # a runner's own end-of-run note
            self.events += 1
        self.counter.observe(event)
        if self.on_event is not None:
            self.on_event(self.job.task_id, event, self.counter)
        if type(event) is ToolCall:
            paths = edited_paths(event)
            if paths:
                self.pending_edits[event.call_id] = paths
            elif self.job.in_place:
                self._shell_writes(event)
        elif type(event) is ToolResult:
            await self._result(event)
        self.judge(event)

    async def _result(self, event: ToolResult) -> None:
        """A tool's result: an error (a guard's denial, a failed edit) or a done edit,
        whose files get their shadow checkpoint now."""
        denied = False
        if event.is_error and not event.cancelled:
            self.saw_errors = True
            self.last_error = event.text[-2000:]
            denied = is_guard_denial(event.text)
            if denied:
                self.guard_denials += 1
                self.last_guard_denial = event.text[:500]
        paths = self.pending_edits.pop(event.call_id, ())
        if paths and event.is_error and not event.cancelled and not denied:
            self.failed_edits += 1
            self.last_failed_edit = event.text[:500]
        if paths and not event.is_error:
            self.writes += 1
            self.touched.update(_relative(self.job.request.workspace, path) for path in paths)
            await self._guarded(self.job.checkpointer.acheckpoint(self._in_place(paths)))

    def _shell_writes(self, call: ToolCall) -> None:
        """Record the files a shell call names as writes: in a shared tree, one way
        seawall sees that a change outside every scope is this agent's."""
        command = shell_command(call)
        if not command:
            return
        workspace = self.job.request.workspace
        for path in line_writes(command, cwd=workspace):
            relative = repo_relative(workspace, str(path))
            if relative is not None:
                self.shell_writes.add(relative)

    def followed(self, watches: EditWatches) -> AbstractAsyncContextManager[None]:
        """For a runner that names no edits: a checkpoint per burst of writes in the
        agent's workspace (in place, of its scope only) while inside."""
        job = self.job
        belongs: Callable[[str], bool] = _anywhere
        if job.in_place:
            matcher = ScopeMatcher(job.scope, workspace=job.request.workspace, session=job.session)
            belongs = matcher.matches_relative
        return watches.follow(
            job.request.workspace, belongs=belongs, on_burst=self._burst, on_problem=self._broke
        )

    def _broke(self, problem: str) -> None:
        self.watch_problem = problem

    async def _burst(self, paths: tuple[str, ...]) -> None:
        """One burst of the agent's writes, seen in its workspace: one edit."""
        self.writes += 1
        self.touched.update(paths)
        await self._guarded(self.job.checkpointer.acheckpoint(self._in_place(paths)))

    def judge(self, event: Event) -> None:
        """Whether this event ends the agent, and if so stop it. Two things do: a trip of
        the per-agent breakers or the stagnation detectors (``AgentMonitor.observe``; a
        self-service trip only warns the agent through its hooks), and a turn past the
        task's limit. The first reason is kept."""
        trip = self.monitor.observe(event)
        if trip is not None and self.trip is None and not trip.self_service:
            self.trip = trip
            self.stop(f"breaker {trip.kind.label}: {trip.evidence}")
            if self.on_trip is not None:
                self.on_trip(self.job, trip)
        if type(event) is Turn and self.counter.turns > self.job.max_turns and not self.stop_reason:
            self.stop(f"turn limit: {self.counter.turns} turns > max {self.job.max_turns}")

    def live(self) -> LiveCounts:
        """The counts so far, for the agent's live file."""
        counter, job = self.counter, self.job
        return LiveCounts(
            task=job.task_id,
            wave=job.wave,
            started_at=round(self.started_at, 3),
            updated_at=round(time.time(), 3),
            turns=counter.turns,
            tool_calls=counter.tool_calls,
            cost_usd=round(counter.cost_usd, 6),
            cost_estimated=counter.cost_estimated,
            input_tokens=counter.input_tokens,
            output_tokens=counter.output_tokens,
            last_tool=counter.last_tool or "",
            max_turns=job.max_turns,
            max_tool_calls=job.limits.max_tool_calls,
            tool_warn_fraction=job.limits.tool_budget_warn_fraction,
            time_limit_s=job.request.time_limit or 0.0,
            trip=f"{self.trip.kind.label}: {self.trip.evidence}" if self.trip else "",
            stop_reason=self.stop_reason,
            pid=os.getpid(),
            conversation=self.conversation,
        )

    def stop(self, reason: str) -> None:
        """Stop the agent: the request's stop signal is set, and the runner ends the
        agent's whole process group (``runtime.processes.aend_group``: SIGTERM, a grace
        period, SIGKILL) and returns an interrupted result, which ``finish`` snapshots."""
        self.stop_reason = reason
        self.job.request.stop.stop(reason)

    async def finish(
        self, result: AgentResult | None, *, runner_error: str, start_failure: str
    ) -> AgentRun:
        """The agent's run once its runner returned (``result``) or failed
        (``runner_error``): a last checkpoint, a ``wip:`` snapshot of an interrupted
        run, and everything seen, as one record."""
        job, counter = self.job, self.counter
        final_paths = tuple(sorted(self.touched.union(job.scope_paths() if job.in_place else ())))
        checkpoint = await self._guarded(job.checkpointer.acheckpoint(self._in_place(final_paths)))
        final = counter.final
        if final is not None and final.turn_limit and not self.stop_reason:
            turns = final.num_turns if final.num_turns is not None else counter.turns
            self.stop_reason = (
                f"turn limit: the agent stopped after {turns} turns (max {job.max_turns})"
            )
        interrupted = result is None or result.interrupted or bool(self.stop_reason)
        wip = None
        if interrupted and (self.trip is None or self.trip.wants_snapshot):
            reason = self.stop_reason or (result.stop_reason if result else "") or runner_error
            wip = await self._guarded(
                job.checkpointer.awip(reason or "stopped", self._in_place(final_paths))
            )
        final_text = result.final_text if result else ""
        if not final_text and final is not None:
            final_text = final.text
        if result is not None and checkpoint is None and job.checkpointer.tip is None:
            start_failure = _died_at_start(result, events=self.events, touched=self.touched)
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
                cache_read_tokens=counter.cache_read_tokens,
                cache_write_tokens=counter.cache_write_tokens,
                elapsed_s=round(counter.elapsed_s, 3),
                last_tool=counter.last_tool or "",
            ),
            trip=self.trip,
            soft_trips=tuple(trip for trip in self.monitor.trips if trip.self_service),
            stop_reason=self.stop_reason or (result.stop_reason if result else ""),
            final_text=final_text,
            checkpoint=checkpoint or job.checkpointer.tip,
            wip=wip,
            touched=final_paths,
            shell_writes=tuple(sorted(self.shell_writes)),
            findings=list(self.monitor.finish()),
            runner_error=runner_error,
            checkpoint_error=self.checkpoint_error,
            truncated=interrupted and not runner_error,
            saw_errors=self.saw_errors or bool(result and result.is_error),
            last_error=self.last_error,
            denials=final.denials if final is not None else (),
            failed_edits=self.failed_edits,
            last_failed_edit=self.last_failed_edit,
            writes=self.writes,
            guard_denials=self.guard_denials,
            last_guard_denial=self.last_guard_denial,
            start_failure=start_failure,
            stderr_tail=result.stderr_tail[-2000:] if result else "",
            watch_problem=self.watch_problem,
            limit=self._limit(final),
            conversation=self.conversation,
            continued=job.request.conversation or "",
        )

    def _limit(self, final: Final | None) -> ProviderLimit | None:
        """The provider limit that ended the run, naming the runner's provider."""
        if final is None or final.limit is None or self.stop_reason:
            return None
        if final.limit.provider:
            return final.limit
        return replace(final.limit, provider=self.job.runner.provider)

    def _in_place(self, paths: Sequence[str]) -> Sequence[str] | None:
        """The paths a checkpoint takes: those given in place, the whole worktree else."""
        return paths if self.job.in_place else None

    async def _guarded(self, step: Awaitable[str | None]) -> str | None:
        """Run one checkpoint step; a git failure (a full disk) is kept for the session to
        report once the wave's agents have ended, instead of cancelling the whole wave.
        The agent's files stay in its workspace, where a resume records them."""
        try:
            return await step
        except GitError as exc:
            self.checkpoint_error = self.checkpoint_error or str(exc)
            return None


async def run_agent(
    job: AgentJob,
    *,
    on_event: OnEvent | None = None,
    on_trip: Callable[[AgentJob, Trip], None] | None = None,
    watches: EditWatches | None = None,
) -> AgentRun:
    """Run one agent to its end under the coordinator's watch (``AgentWatch``); a runner
    that names no edits has its workspace watched (through ``watches``, the wave's, or
    a watch of its own). A run that was to continue a conversation the CLI could not
    continue (it ended at once, failing, without a turn) runs again afresh
    (``job.fresh``), and its run says why (``not_continued``)."""
    run = await _watched(job, on_event=on_event, on_trip=on_trip, watches=watches)
    fresh = job.fresh
    if fresh is None or not _not_continued(run):
        return run
    why = _first_line(run.final_text or run.last_error or run.stderr_tail) or (
        f"exit {run.exit_code}"
    )
    run = await _watched(
        replace(job, request=fresh, fresh=None), on_event=on_event, on_trip=on_trip, watches=watches
    )
    run.not_continued = f"conversation {job.request.conversation} not continued: {why}"
    return run


def _not_continued(run: AgentRun) -> bool:
    """Whether a run that was to continue a conversation ended without a turn or a call
    of it, by itself and failing: the CLI could not continue it. (Its files are not
    asked: in place, a scope file the sandbox made empty counts as touched.)"""
    return (
        bool(run.continued)
        and run.is_error
        and run.counts.turns == 0
        and run.counts.tool_calls == 0
        and run.writes == 0
        and run.limit is None
        and not run.stop_reason
        and not run.runner_error
    )


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:300]


async def _watched(
    job: AgentJob,
    *,
    on_event: OnEvent | None,
    on_trip: Callable[[AgentJob, Trip], None] | None,
    watches: EditWatches | None,
) -> AgentRun:
    watch = AgentWatch(job, on_event=on_event, on_trip=on_trip)
    result: AgentResult | None = None
    runner_error = start_failure = ""
    async with _shown(job, watch), contextlib.AsyncExitStack() as stack:
        if not job.runner.reports_edits:
            if watches is None:
                watches = EditWatches(await stack.enter_async_context(anyio.create_task_group()))
            await stack.enter_async_context(watch.followed(watches))
        try:
            result = await job.runner.run(job.request, watch.observe)
        except RunnerError as exc:  # the program could not be started at all
            runner_error = start_failure = str(exc)
        except Exception as exc:  # noqa: BLE001 - a runner that breaks is this agent's outcome
            runner_error = f"{type(exc).__name__}: {exc}"
    return await watch.finish(result, runner_error=runner_error, start_failure=start_failure)


def _anywhere(path: str) -> bool:
    return True


def _shown(job: AgentJob, watch: AgentWatch) -> AbstractAsyncContextManager[None]:
    """The agent's live file and stop requests while it runs (when the job shares them)."""
    if job.shared is None:
        return contextlib.nullcontext()
    return shared_live(
        job.shared, task=job.task_id, wave=job.wave, snapshot=watch.live, stop=watch.stop
    )


def _died_at_start(result: AgentResult, *, events: int, touched: set[str]) -> str:
    """Why an agent that ended by itself, failing, before its first event and without
    changing a file, never really started; "" when it did start."""
    if events or touched or result.interrupted or not result.is_error:
        return ""
    code = result.exit_code
    how = f"killed by signal {-code}" if code is not None and code < 0 else f"exited {code}"
    return f"the agent {how} before its first event"


def _relative(workspace: Path, path: str) -> str:
    """``path`` relative to the workspace when it lies inside it (agents give absolute
    paths, and a workspace may be reached through a symlink); otherwise as given."""
    for root in (workspace, workspace.resolve()):
        relative = repo_relative(root, path)
        if relative is not None:
            return relative
    return path
