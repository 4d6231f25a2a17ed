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
import re
import secrets
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from coordinator.errors import StateError
from coordinator.events import Event, ToolCall
from coordinator.exitcodes import ExitCode
from coordinator.git.cleanup import remove_stale_check_worktrees
from coordinator.lead.types import PreparedWave, WaveReport
from coordinator.model import Plan, RunnerSpec, Status, Task
from coordinator.plan.loader import parse_plan
from coordinator.progress import Progress, quiet_progress
from coordinator.runner import AgentRunner, RunCounter, build_runner
from coordinator.sandbox.agents import sandbox_notice
from coordinator.session.tasks import ready_tasks, task_from_dict
from coordinator.state.leadlease import check_lease, release_lease, take_lease
from coordinator.state.ledger import (
    SessionPhase,
    SessionState,
    WavePhase,
)
from coordinator.state.store import StateStore, latest_session
from coordinator.tracker import IssueTracker

__all__ = ["Session", "SessionResult", "new_session_id"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionResult:
    """How a session ended (or paused). ``exit_code`` is what ``seawall run`` returns."""

    session: str
    phase: SessionPhase
    waves: int
    done: tuple[str, ...]
    abandoned: tuple[str, ...]
    breaker: Mapping[str, Any]
    state_md: Path
    rate_limited: bool = False
    halt: Mapping[str, Any] | None = None
    report: Path | None = None  # the session's HTML report, once written
    merged: int = 0  # agents whose work was merged, over all waves
    checks_failed: tuple[int, ...] = ()  # waves that merged with failing checks

    @property
    def exit_code(self) -> int:
        """What ``seawall run`` returns; the codes and their meanings are
        :class:`coordinator.exitcodes.ExitCode`."""
        if self.phase is SessionPhase.HALTED:
            return _HALT_CODES.get(str((self.halt or {}).get("reason")), ExitCode.HALTED)
        if self.checks_failed:
            return ExitCode.CHECKS_FAILED
        if not self.abandoned:
            return ExitCode.OK
        if self.done:
            return ExitCode.CARRYOVER
        return ExitCode.RATE_LIMITED if self.rate_limited else ExitCode.NOTHING_SUCCEEDED


_HALT_CODES: Mapping[str, ExitCode] = {
    "rate-limited": ExitCode.RATE_LIMITED,
    "checks-fail-at-base": ExitCode.CHECKS_FAILED,
    "agent-start": ExitCode.AGENT_START,
}


_RATE_LIMIT = re.compile(
    r"rate.?limit|\b429\b|too many requests|overloaded|usage limit", re.IGNORECASE
)


def rate_limited(state: SessionState) -> bool:
    """Whether every failed agent of the last wave failed on a provider rate limit."""
    wave = state.current_wave
    if wave is None:
        return False
    failed = [a for a in wave.agents if a.status not in (Status.DONE, Status.NO_TESTS_NEEDED)]
    return bool(failed) and all(
        _RATE_LIMIT.search(f"{a.final_text}\n{a.error_signature}\n{a.reason}") for a in failed
    )


def new_session_id(name: str) -> str:
    """``<plan name>-<UTC time>-<4 hex>``: unique, sortable, safe as a ref and path name."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{name}-{stamp}-{secrets.token_hex(2)}"


class Session:
    """One session of a plan on one repository.

    Pass runner and tracker instances to override what the plan names: ``runner`` serves
    every task; ``runners`` maps runner names to instances. Without a tracker, the
    plan's ``[session.tracker]`` is used (the local tracker by default). The session is
    silent unless given a ``progress`` sink (the command line passes one that writes to
    stderr). ``async with Session(...)`` closes the tracker the session opened itself
    (one passed in is the caller's to close).
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
    ) -> None:
        self.plan = plan
        self.repo = Path(repo).resolve()
        self.session_id = session_id or new_session_id(plan.session.name)
        self.store = StateStore(self.repo, self.session_id)
        self._runner = runner
        self._runners: dict[str, AgentRunner] = dict(runners or {})
        self._tracker = tracker
        self._filer: Any = None
        self.progress = progress or quiet_progress()
        self._plan_text = plan_text or plan.source
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
        state = StateStore(root, session_id).load()
        if not state.plan_text:
            raise StateError(
                f"session {session_id} has no recorded plan (its Plan was built in Python, "
                "not parsed from TOML); it cannot be reopened"
            )
        plan = parse_plan(state.plan_text, path=state.plan_path or "<recorded plan>")
        session = cls(plan, repo=root, session_id=session_id, plan_text=state.plan_text, **kwargs)
        session.state = state
        return session

    # -- the driven loop --------------------------------------------------------------

    async def run(self) -> SessionResult:
        """Run the session to its end (or until the wave breaker halts it).

        Every runner the plan uses is probed first (see ``coordinator.preflight``): one
        that cannot start raises ``RunnerError`` before any session state is written.
        """
        with self.repository_lock("run"):
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
        from coordinator.git.repo import open_repository, require_no_operation

        with self.repository_lock("resume"), self.store.lock():
            state = self.state or self.store.load()
            self.state = state
            require_no_operation(open_repository(self.repo))
            self.preflight()
            if state.phase is SessionPhase.KILLED:
                raise StateError(f"session {state.session} was killed; start a new one")
            if state.phase is SessionPhase.HALTED and state.halt:
                self.progress.log(f"resuming after: {state.halt.get('detail', '')}")
                state.halt = {}
                state.phase = SessionPhase.RUNNING
            if state.phase is SessionPhase.HALTED:
                from coordinator.session.wave_breaker import clear_for_resume

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
        """One live session per repository (see ``coordinator.state.repolock``), and
        none while a lead agent holds a wave (``coordinator.state.leadlease``)."""
        from coordinator.git.repo import ensure_excluded, open_repository
        from coordinator.state.repolock import repository_lock

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
        from coordinator.preflight import preflight_runners

        pending = [task_from_dict(t) for t in self.state.pending] if self.state else []
        preflight_runners(
            (
                (task.agent or self.plan.session.agent, self.runner_for(task))
                for task in (*self.plan.tasks, *pending)
            ),
            cwd=self.repo,
        )

    async def _loop(self, state: SessionState) -> SessionResult:
        from coordinator.session.steps import WaveSteps

        steps = WaveSteps(self, state)
        self.progress.log(sandbox_notice(accept_hooks_only=self.plan.session.accept_hooks_only))
        with self._notifier():
            while state.phase is SessionPhase.RUNNING:
                advanced = await steps.advance()
                if not advanced:
                    await steps.finish_session()
                    break
        return self._ended()

    def _ended(self) -> SessionResult:
        """The result of a session that ended or halted, with its HTML report written."""
        from coordinator.report import write_report

        write_report(self.store)
        return self.result()

    def _notifier(self) -> AbstractContextManager[object]:
        """The ``[session.notify]`` webhook for the loop's duration (or nothing)."""
        config = self.plan.session.notify
        if config is None:
            return contextlib.nullcontext()
        from coordinator.notify import Notifier

        return Notifier(config, events=self.store.events, name=self.plan.session.name)

    def result(self) -> SessionResult:
        from coordinator.report import report_path

        state = self._state()
        done = tuple(
            sorted(
                t.id
                for t in state.tasks.values()
                if t.status in (Status.DONE, Status.NO_TESTS_NEEDED)
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
            breaker=dict(state.breaker),
            state_md=self.store.paths.state_md,
            report=report if (report := report_path(self.store)).exists() else None,
            rate_limited=rate_limited(state),
            halt=dict(state.halt) or None,
            merged=sum(1 for wave in state.waves for agent in wave.agents if agent.merged),
            checks_failed=tuple(
                wave.number
                for wave in state.waves
                if wave.target_after is not None
                and (wave.checks or {}).get("verdict") in ("known-failures", "failed-merged")
            ),
        )

    # -- state ------------------------------------------------------------------------

    def _start(self) -> SessionState:
        from coordinator.git.repo import ensure_excluded, open_repository, pin_base
        from coordinator.session.tasks import task_to_dict

        if self.store.exists():
            raise StateError(
                f"session {self.session_id} already exists; use `seawall resume` to continue it"
            )
        from coordinator.git.workspaces import require_clean_worktree

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
            pending=[task_to_dict(task) for task in self.plan.tasks],
        )
        for task in self.plan.tasks:
            state.task(task.id).origin = task_to_dict(task)
        self.state = state
        self._save_now(state)
        self.store.events.append(
            "session_started",
            plan=state.plan_path,
            target=pin.branch,
            base=pin.commit,
            tasks=len(self.plan.tasks),
        )
        return state

    def _state(self) -> SessionState:
        if self.state is None:
            raise StateError("the session has not started")
        return self.state

    def _save_now(self, state: SessionState) -> None:
        self.store.save(state)

    async def save(self) -> None:
        async with self._save_lock:
            self.store.save(self._state())

    # -- runners and trackers ---------------------------------------------------------

    def runner_for(self, task: Task) -> AgentRunner:
        if self._runner is not None:
            return self._runner
        name = task.agent or self.plan.session.agent
        runner = self._runners.get(name)
        if runner is None:
            spec = self.plan.runners.get(name) or RunnerSpec(name=name, kind=name)
            runner = self._runners[name] = build_runner(spec)
        return runner

    def tracker(self) -> IssueTracker:
        if self._tracker is None:
            from coordinator.tracker import open_tracker

            self._tracker = open_tracker(self.plan.session.tracker, root=self.repo)
            self._opened_tracker = True
        return self._tracker

    def filer(self) -> Any:
        if self._filer is None:
            from coordinator.carryover import CarryoverFiler

            self._filer = CarryoverFiler(
                self.tracker(),
                session=self.session_id,
                label=self.plan.session.tracker.label,
                events=self.store.events,
                lock_path=self.repo / ".seawall" / "carryover.lock",
            )
        return self._filer

    # -- embedded step mode -----------------------------------------------------------

    async def prepare_wave(self) -> PreparedWave | None:
        """Step mode: plan and prepare the next wave for a lead agent to dispatch.

        Returns the prepared wave (each agent's prompt, workspace and scope, the scope
        manifest) or None when the session has no more work; preparing files nothing
        (``finish`` ends the session). The repository stays held for this session's lead
        until the wave is reviewed (see ``coordinator.state.leadlease``). The lead
        dispatches the agents with its own tool and then calls ``review_wave``.
        """
        from coordinator.session.steps import WaveSteps

        with self.repository_lock("wave prepare", lead_step=True):
            if self.state is None:
                if self.store.exists():
                    self.state = self.store.load()
                else:
                    self._start()
            state = self._state()
            if state.phase is not SessionPhase.RUNNING:
                raise StateError(f"session {state.session} is {state.phase}; nothing to prepare")
            steps = WaveSteps(self, state)
            prepared = await steps.prepare_for_lead()
            if prepared is None:
                release_lease(self.repo, self.session_id)
                return None
            take_lease(self.repo, session=self.session_id, wave=prepared.wave)
            return prepared

    async def review_wave(self, outputs: Mapping[str, str]) -> WaveReport:
        """Step mode: review, merge and recover the prepared wave, given each agent's
        final text by task id. Returns the wave's report and releases the lead's hold."""
        from coordinator.session.steps import WaveSteps

        with self.repository_lock("wave review", lead_step=True):
            if self.state is None:
                self.state = self.store.load()
            steps = WaveSteps(self, self._state())
            report = await steps.review_from_lead(outputs)
            release_lease(self.repo, self.session_id)
            if self._state().phase is not SessionPhase.RUNNING:
                self._ended()
            return report

    async def finish(self) -> SessionResult:
        """Step mode: end a session with nothing left to prepare: file the carryover
        issues still missing, publish if configured, write the report."""
        from coordinator.session.steps import WaveSteps

        with self.repository_lock("wave finish", lead_step=True):
            if self.state is None:
                self.state = self.store.load()
            state = self._state()
            if state.phase is SessionPhase.RUNNING:
                current = state.current_wave
                if current is not None and current.phase is not WavePhase.DONE:
                    raise StateError(
                        f"session {state.session}: wave {current.number} is not reviewed "
                        "yet; review it before finishing"
                    )
                if ready_tasks(state):
                    raise StateError(
                        f"session {state.session} still has tasks to prepare; prepare "
                        "and review them before finishing"
                    )
                await WaveSteps(self, state).finish_session()
            release_lease(self.repo, self.session_id)
            return self._ended()


def progress_hook(progress: Progress) -> Any:
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
