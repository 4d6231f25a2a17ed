"""The session loop: plan a wave, prepare, dispatch, review, merge, recover, repeat.

Every phase of a wave is recorded in the ledger before the next one starts, so
``Session.resume`` can finish a session whose coordinator was killed at any point:
agents that never reported are salvaged from their checkpoints, a merge is redone
from the pinned base (or recognised as done), and carryovers are deduplicated by the
tracker's fingerprint markers.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio

from seawall.breakers.wave import WaveBreakerState
from seawall.carryover import CarryoverFiler, RetryPolicy
from seawall.errors import StateError
from seawall.git.cleanup import remove_stale_check_worktrees
from seawall.git.repo import ensure_excluded, open_repository, pin_base, require_no_operation
from seawall.git.stale_locks import recover_git_locks
from seawall.git.workspaces import require_clean_worktree
from seawall.model import Plan, RunnerSpec, Status, Task
from seawall.plan.loader import parse_plan
from seawall.plan.render import plan_source
from seawall.publishing.webhook import Notifier
from seawall.report import report_path, write_report
from seawall.report.progress import Progress, quiet_progress
from seawall.runner import AgentRunner, build_runner, undeclared_processes
from seawall.sandbox.selection import sandbox_notice
from seawall.session.clock import Clock, SessionClock
from seawall.session.context import WaveContext
from seawall.session.loop import advance
from seawall.session.phases.finish import finish_session
from seawall.session.preflight import preflight_runners
from seawall.session.result import SessionResult
from seawall.session.step_mode import lead_out, prepare_for_lead, review_from_lead
from seawall.session.step_types import PreparedWave, WaveReport
from seawall.session.tasks import ready_tasks
from seawall.session.user_stop import kill_if_asked
from seawall.session.wave_breaker import clear_for_resume
from seawall.state.leadlease import check_lease, release_lease, take_lease
from seawall.state.ledger import HaltReason, SessionPhase, SessionState, WavePhase
from seawall.state.repolock import repository_lock
from seawall.state.store import StateStore, latest_session
from seawall.telemetry import GitLockRemoved, SessionStarted
from seawall.tracker import IssueTracker, open_tracker

__all__ = ["Session", "SessionResult", "new_session_id"]


def new_session_id(name: str) -> str:
    """``<plan name>-<UTC time>-<4 hex>``: unique, sortable, safe as a ref and path name."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{name}-{stamp}-{secrets.token_hex(2)}"


class Session:
    """One session of a plan on one repository.

    Pass runner and tracker instances to override what the plan names: ``runner`` serves
    every task; ``runners`` maps runner names to instances. Without a tracker, the
    plan's ``[session.tracker]`` is used (the local tracker by default). ``retry`` is how
    tracker faults are retried (its ``sleep`` included); ``clock`` is the monotonic time
    ``budgets.session_minutes`` is measured in (``time.monotonic`` by default). The
    session is silent unless given a ``progress`` sink (the command line passes one that
    writes to stderr). ``async with Session(...)`` closes the tracker the session opened
    itself (one passed in is the caller's to close).
    """

    def __init__(
        self,
        plan: Plan,
        *,
        repo: str | os.PathLike[str],
        runner: AgentRunner | None = None,
        runners: Mapping[str, AgentRunner] | None = None,
        tracker: IssueTracker | None = None,
        progress: Progress | None = None,
        session_id: str | None = None,
        plan_text: str = "",
        retry: RetryPolicy | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.plan = plan
        self.repo = Path(repo).resolve()
        self.session_id = session_id or new_session_id(plan.session.name)
        self.store = StateStore(self.repo, self.session_id)
        self._runner = runner
        self._runners: dict[str, AgentRunner] = dict(runners or {})
        self._warned: set[int] = set()  # runners whose sandbox warning was given
        self._tracker = tracker
        self._filer: CarryoverFiler | None = None
        self._retry = retry
        self._clock = SessionClock(clock)
        self.progress = progress or quiet_progress()
        self._plan_text = plan_text or plan_source(plan)
        self._opened_tracker = False
        self._save_lock = anyio.Lock()
        self.state: SessionState | None = None
        self.rebase = False  # a moved target branch: merge the wave onto its new tip

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the tracker this session opened (connections, files)."""
        if self._opened_tracker and self._tracker is not None:
            self._tracker.close()
            self._tracker = None
            self._opened_tracker = False

    # -- construction from the ledger -----------------------------------------------

    @classmethod
    def open(
        cls,
        repo: str | os.PathLike[str],
        session_id: str | None = None,
        **kwargs: Any,
    ) -> Session:
        """The session ``session_id`` of ``repo`` (default: the newest unfinished one)."""
        root = Path(repo).resolve()
        session_id = session_id or latest_session(root, unfinished=True)
        if session_id is None:
            raise StateError(f"no unfinished seawall session in {root}/.seawall")
        store = StateStore(root, session_id)
        state = store.load()
        if not state.plan_text:
            raise StateError(
                f"session {session_id} has no recorded plan: its state.json lacks plan_text"
            )
        plan = parse_plan(state.plan_text, path=state.plan_path or "<recorded plan>")
        session = cls(plan, repo=root, session_id=session_id, plan_text=state.plan_text, **kwargs)
        session.store = store  # it read the ledger: its first save appends what changed
        session.state = state
        return session

    # -- the driven loop --------------------------------------------------------------

    async def run(self) -> SessionResult:
        """Run the session to its end (or until it halts: a breaker, a budget, the environment).

        Every runner the plan uses is probed first (see ``seawall.session.preflight``): one
        that cannot start raises ``RunnerError`` before any session state is written.
        """
        with self.repository_lock("run"):
            self._clock.start()
            self.preflight()
            with self.store.lock():
                state = self._start()
                return await self._loop(state)

    async def resume(self, *, rebase: bool = False) -> SessionResult:
        """Continue an interrupted or halted session from its ledger.

        With ``rebase``, a wave whose target branch moved while it ran (someone else
        committed) is merged onto the branch's new tip instead of halting again.
        """
        self.rebase = rebase
        with self.repository_lock("resume"), self.store.lock():
            await anyio.to_thread.run_sync(
                lambda: recover_git_locks(
                    self.repo,
                    log=self.progress.log,
                    record=lambda path, age: self.store.events.append(
                        GitLockRemoved(path=str(path), age_s=age)
                    ),
                )
            )
            self._clock.start()
            state = self.state or self.store.load()
            self.state = state
            require_no_operation(open_repository(self.repo))
            self.preflight()
            if state.phase is SessionPhase.KILLED:
                raise StateError(f"session {state.session} was killed; start a new one")
            if state.phase is SessionPhase.HALTED and state.halt is not None:
                self.progress.log(f"resuming after: {state.halt.detail}")
                if state.halt.reason is HaltReason.SESSION_TIME:
                    SessionClock.grant(state)  # resuming is the choice to go on
                state.halt = None
                state.phase = SessionPhase.RUNNING
            if state.phase is SessionPhase.HALTED:
                again = clear_for_resume(state, self.plan.session)
                if again is not None:
                    self.progress.log(again)
                    self._save_now(state)
                    return self._ended()
                state.phase = SessionPhase.RUNNING
                self.progress.log("breaker cleared (counters kept); resuming")
            self._save_now(state)
            await anyio.to_thread.run_sync(remove_stale_check_worktrees, self.repo)
            return await self._loop(state)

    @contextlib.contextmanager
    def repository_lock(self, command: str, *, lead_step: bool = False) -> Iterator[None]:
        """One live session per repository (see ``seawall.state.repolock``), and
        none while a lead agent holds a wave (``seawall.state.leadlease``)."""
        ensure_excluded(open_repository(self.repo))
        with repository_lock(
            self.repo, session=self.session_id, command=command, on_takeover=self.progress.log
        ):
            check_lease(
                self.repo,
                session=self.session_id,
                command=command,
                on_takeover=self.progress.log,
                lead_step=lead_step,
            )
            yield

    def preflight(self) -> None:
        """Check that the program of every runner the plan's tasks use can start."""
        pending = self.state.pending if self.state else []
        preflight_runners(
            (
                (task.agent or self.plan.session.agent, self.runner_for(task))
                for task in (*self.plan.tasks, *pending)
            ),
            cwd=self.repo,
        )

    async def _loop(self, state: SessionState) -> SessionResult:
        ctx = self._context(state)
        self.progress.log(sandbox_notice(accept_hooks_only=self.plan.session.accept_hooks_only))
        with self._notifier():
            while state.phase is SessionPhase.RUNNING:
                if not await advance(ctx):
                    await finish_session(ctx)
                    break
                await kill_if_asked(ctx)
        return self._ended()

    def _context(self, state: SessionState) -> WaveContext:
        """What the phases of a wave get of this session."""
        return WaveContext(
            repo=self.repo,
            state=state,
            plan=self.plan,
            store=self.store,
            progress=self.progress,
            clock=self._clock,
            save=self.save,
            runner_for=self.runner_for,
            filer=self.filer,
            tracker=self.tracker,
            retry=self._retry,
            rebase=self.rebase,
        )

    def _ended(self) -> SessionResult:
        """The result of a session that ended or halted, with its HTML report written."""
        write_report(self.store)
        return self.result()

    def _notifier(self) -> AbstractContextManager[object]:
        """The ``[session.notify]`` webhook for the loop's duration (or nothing)."""
        config = self.plan.session.notify
        if config is None:
            return contextlib.nullcontext()
        return Notifier(config, events=self.store.events, name=self.plan.session.name)

    def result(self) -> SessionResult:
        state = self._state()
        # a wave reviewed and halted before its merge: its tasks' work is not landed yet
        unmerged = {
            agent.task
            for wave in state.waves
            if wave.phase is WavePhase.REVIEWED
            for agent in wave.agents
        }
        done = tuple(
            sorted(
                t.id
                for t in state.tasks.values()
                if t.status in (Status.DONE, Status.NO_TESTS_NEEDED) and t.id not in unmerged
            )
        )
        abandoned = tuple(
            sorted(
                t.id
                for t in state.tasks.values()
                if t.status not in (Status.DONE, Status.NO_TESTS_NEEDED)
            )
        )
        return SessionResult(
            session=state.session,
            phase=state.phase,
            waves=len(state.waves),
            done=done,
            abandoned=abandoned,
            breaker=state.breaker or WaveBreakerState(),
            state_md=self.store.paths.state_md,
            report=report if (report := report_path(self.store)).exists() else None,
            halt=state.halt,
            unmerged=tuple(sorted(unmerged)),
            merged=sum(1 for wave in state.waves for agent in wave.agents if agent.merged),
            checks_failed=tuple(
                wave.number
                for wave in state.waves
                if wave.target_after is not None
                and wave.checks is not None
                and wave.checks.verdict.merged_failing
            ),
        )

    # -- state ------------------------------------------------------------------------

    def _start(self) -> SessionState:
        if self.store.exists():
            raise StateError(
                f"session {self.session_id} already exists; use `seawall resume` to continue it"
            )
        pin = pin_base(self.repo)
        # the waves change the main working tree: refuse before anything starts rather
        # than stop mid-session on the user's uncommitted changes
        require_clean_worktree(self.repo)
        ensure_excluded(open_repository(self.repo))
        now = round(time.time(), 3)
        state = SessionState(
            session=self.session_id,
            name=self.plan.session.name,
            repo=str(self.repo),
            target_branch=pin.branch,
            start_commit=pin.commit,
            plan_path=self.plan.path or "",
            plan_text=self._plan_text,
            created_at=now,
            pending=list(self.plan.tasks),
            schedule=str(self.plan.session.schedule),
        )
        for task in self.plan.tasks:
            state.task(task.id).origin = task
        self.state = state
        self._save_now(state)
        self.store.events.append(
            SessionStarted(
                plan=state.plan_path,
                target=pin.branch,
                base=pin.commit,
                tasks=len(self.plan.tasks),
            )
        )
        return state

    def _state(self) -> SessionState:
        if self.state is None:
            raise StateError("the session has not started")
        return self.state

    def _save_now(self, state: SessionState) -> None:
        self._clock.tick(state)
        self.store.save(state)

    async def save(self) -> None:
        """Write the ledger (and STATE.md), with the session's running time so far."""
        async with self._save_lock:
            self._save_now(self._state())

    # -- runners and trackers ---------------------------------------------------------

    def runner_for(self, task: Task) -> AgentRunner:
        runner = self._runner
        if runner is None:
            name = task.agent or self.plan.session.agent
            runner = self._runners.get(name)
            if runner is None:
                spec = self.plan.runners.get(name) or RunnerSpec(name=name, kind=name)
                runner = self._runners[name] = build_runner(spec)
        if id(runner) not in self._warned:
            self._warned.add(id(runner))
            warning = undeclared_processes(type(runner))
            if warning:
                self.progress.log(f"warning: {warning}")
        return runner

    def tracker(self) -> IssueTracker:
        if self._tracker is None:
            self._tracker = open_tracker(self.plan.session.tracker, root=self.repo)
            self._opened_tracker = True
        return self._tracker

    def filer(self) -> CarryoverFiler:
        if self._filer is None:
            self._filer = CarryoverFiler(
                self.tracker(),
                session=self.session_id,
                label=self.plan.session.tracker.label,
                retry=self._retry,
                events=self.store.events,
                lock_path=self.repo / ".seawall" / "carryover.lock",
            )
        return self._filer

    # -- embedded step mode -----------------------------------------------------------

    async def prepare_wave(self) -> PreparedWave | None:
        """Step mode: plan and prepare the next wave for a lead agent to dispatch.

        Returns the prepared wave (each agent's prompt, workspace and scope, the scope
        manifest) or None when the session has no more work (``finish`` ends it:
        preparing files nothing) or has halted (``state.phase`` says so, and
        ``state.halt`` why: its ``budgets.session_minutes`` ran out). The repository
        stays held for this session's lead until the wave is reviewed (see
        ``seawall.state.leadlease``). The lead dispatches the agents with its own
        tool and then calls ``review_wave``.
        """
        with self.repository_lock("wave prepare", lead_step=True):
            self._clock.start()
            if self.state is None:
                if self.store.exists():
                    self.state = self.store.load()
                else:
                    self._start()
            state = self._state()
            if state.phase is not SessionPhase.RUNNING:
                raise StateError(f"session {state.session} is {state.phase}; nothing to prepare")
            prepared = await prepare_for_lead(self._context(state))
            if prepared is None:
                release_lease(self.repo, self.session_id)
                if self._state().phase is not SessionPhase.RUNNING:
                    self._ended()  # it halted: the report says why
                return None
            take_lease(self.repo, session=self.session_id, wave=prepared.wave)
            return prepared

    async def review_wave(self, outputs: Mapping[str, str]) -> WaveReport:
        """Step mode: review, merge and recover the prepared wave, given each agent's
        final text by task id. Returns the wave's report and releases the lead's hold."""
        with self.repository_lock("wave review", lead_step=True):
            self._clock.start()
            if self.state is None:
                self.state = self.store.load()
            ctx = self._context(self._state())
            report = await review_from_lead(ctx, outputs)
            if not lead_out(ctx):  # a rolling session's lead may still have agents out
                release_lease(self.repo, self.session_id)
            if self._state().phase is not SessionPhase.RUNNING:
                self._ended()
            return report

    async def finish(self) -> SessionResult:
        """Step mode: end a session with nothing left to prepare: file the carryover
        issues still missing, publish if configured, write the report."""
        with self.repository_lock("wave finish", lead_step=True):
            if self.state is None:
                self.state = self.store.load()
            state = self._state()
            if state.phase is SessionPhase.RUNNING:
                current = next((w for w in state.waves if w.phase is not WavePhase.DONE), None)
                if current is not None:
                    raise StateError(
                        f"session {state.session}: wave {current.number} is not reviewed "
                        "yet; review it before finishing"
                    )
                if ready_tasks(state):
                    raise StateError(
                        f"session {state.session} still has tasks to prepare; prepare "
                        "and review them before finishing"
                    )
                await finish_session(self._context(state))
            release_lease(self.repo, self.session_id)
            return self._ended()
