"""What the phases of a wave work with: a narrow view of one session.

A phase receives a ``WaveContext``, never the ``Session``: the repository, the ledger
and its store, the plan, the progress sink, the session clock, and the few session
services a phase may call (save the ledger, the runner of a task, the carryover filer,
the tracker). The engine builds it; the phases never import the engine.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from seawall.breakers.project_check import limits_with_check
from seawall.carryover import CarryoverFiler, RetryPolicy
from seawall.git.baseline import Baseline
from seawall.model import BreakerLimits, Isolation, Plan, SessionConfig, Task
from seawall.report.progress import Progress
from seawall.runner import AgentRunner
from seawall.session.agent_watch import AgentRun
from seawall.session.clock import SessionClock
from seawall.session.user_files import WaveBaselines
from seawall.state.ledger import SessionState, WaveRecord
from seawall.state.store import SessionPaths, StateStore
from seawall.telemetry import EventLog
from seawall.tracker import IssueTracker

__all__ = ["WaveContext"]


@dataclass(slots=True, kw_only=True)
class WaveContext:
    """One session's waves as the phases see them.

    ``runs`` holds the agent runs of this process (the ledger holds their records);
    ``rebase`` says a moved target branch is merged onto its new tip instead of halting.
    """

    repo: Path
    state: SessionState
    plan: Plan
    store: StateStore
    progress: Progress
    clock: SessionClock
    save: Callable[[], Awaitable[None]]
    runner_for: Callable[[Task], AgentRunner]
    filer: Callable[[], CarryoverFiler]
    tracker: Callable[[], IssueTracker]
    retry: RetryPolicy | None = None  # for the tracker writes the filer does not make
    rebase: bool = False
    runs: dict[str, AgentRun] = field(default_factory=dict)
    baselines: WaveBaselines = field(init=False)

    def __post_init__(self) -> None:
        self.baselines = WaveBaselines(self.repo, self.state.session, self.paths.wave_dir)

    @property
    def config(self) -> SessionConfig:
        return self.plan.session

    def breaker_limits(self) -> BreakerLimits:
        """The plan's breaker limits, with the check an unverified-edits trip names
        (the plan's, else the project's detected test or build command)."""
        return limits_with_check(self.config, self.repo)

    @property
    def events(self) -> EventLog:
        return self.store.events

    @property
    def paths(self) -> SessionPaths:
        return self.store.paths

    def tasks(self, wave: WaveRecord) -> dict[str, Task]:
        """The tasks of ``wave`` by id, as the ledger recorded them."""
        return {task.id: task for task in wave.tasks}

    def baseline(self, wave: WaveRecord) -> Baseline | None:
        """The user files recorded before an in-place wave (None for a worktree wave)."""
        return self.baselines.get(wave.number) if wave.isolation is Isolation.NONE else None

    def run_file(self, wave: WaveRecord, task_id: str) -> Path:
        """Where one agent's run of ``wave`` is recorded the moment it ends."""
        return self.paths.agent_dir(task_id) / f"w{wave.number}-run.json"
