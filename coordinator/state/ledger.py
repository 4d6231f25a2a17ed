"""The session ledger: what ``state.json`` holds, as typed records.

The ledger is the single source of truth of a session. It is written atomically after
every step that changes it, so a coordinator killed at any point can be resumed from it.
Every record converts through ``coordinator.codec``; how the ledger is laid out on
disk, and saved in proportion to what changed, is ``coordinator.state.store``'s.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import StrEnum

from coordinator.breakers.trip import Trip
from coordinator.breakers.wave import WaveBreakerState
from coordinator.model import ChecksPolicy, IssueRef, Status, Task
from coordinator.stagnation.finding import Finding
from coordinator.state.runs import AgentRun

__all__ = [
    "SCHEMA_VERSION",
    "AgentRecord",
    "BaselineChecks",
    "CheckFailure",
    "ChecksRecord",
    "Dropped",
    "Halt",
    "HaltedAgent",
    "IssueRef",
    "Resolution",
    "SessionPhase",
    "SessionState",
    "SetAsideRecord",
    "SpiralRecord",
    "TaskRecord",
    "Tracked",
    "WaveBreakerState",
    "WavePhase",
    "WaveRecord",
    "version",
]

SCHEMA_VERSION = 3  # 1: one state.json rewritten whole on every save; 2: halt, breaker dicts


_ASSIGNMENTS = itertools.count(1)


class Tracked:
    """A record that notes when a field of it was last assigned.

    Every assignment stamps the record with a number no earlier assignment had
    (``version``), so a writer that kept a record's encoding beside its version knows,
    without encoding it again, that nothing was assigned since. A list the record holds
    that is changed in place does not change the version: ``state.journal`` encodes every
    open wave again on each save, and counts the lists of a settled one. A record built
    by decoding has version 0 (unknown) until ``mark`` stamps it.
    """

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        self.__dict__["version"] = next(_ASSIGNMENTS)

    def mark(self) -> None:
        """Stamp the record as just assigned (after it was built without assignments)."""
        self.__dict__["version"] = next(_ASSIGNMENTS)


def version(record: Tracked) -> int:
    """The number of ``record``'s last assignment (0: unknown)."""
    stamp: int = record.__dict__.get("version", 0)
    return stamp


class SessionPhase(StrEnum):
    RUNNING = "running"
    HALTED = "halted"  # the wave breaker tripped; `seawall resume` continues
    DONE = "done"
    KILLED = "killed"  # `seawall kill`: the session will not continue


class WavePhase(StrEnum):
    PLANNED = "planned"
    PREPARED = "prepared"  # workspaces created, prompts rendered
    DISPATCHED = "dispatched"  # agents running (or handed to a lead agent)
    REVIEWED = "reviewed"  # statuses known, spirals judged, recovery decided
    MERGED = "merged"  # the target branch holds the wave's merge
    DONE = "done"  # workspaces cleaned, carryovers filed


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution:
    """A merge conflict resolved by the documented policy: the path, the rule that
    decided it (``coordinator.git.merge.MergeRule``'s value), the two agents, the one
    whose version was kept, and the fix task queued for the other, if any."""

    path: str
    rule: str
    agents: tuple[str, ...] = ()
    kept: str = ""
    fix_task: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Dropped:
    """An agent whose merge was dropped from the wave, and why."""

    task: str
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckFailure:
    """The first check command that failed: its exit code (None: it timed out) and the
    tail of its output."""

    command: str
    returncode: int | None = None
    output: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class BaselineChecks:
    """The wave base's own run of the checks, when it was checked."""

    commit: str
    failure: CheckFailure | None = None
    no_tests: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ChecksRecord:
    """A wave's checks: whether they passed, under which policy, the verdict
    (``coordinator.git.checks.CheckVerdict``'s value), how many runs it took, the commit
    checked, what failed there, and the base's own run."""

    passed: bool
    policy: ChecksPolicy = ChecksPolicy.BLOCK
    verdict: str = "none"
    runs: int = 0
    commit: str = ""
    failure: CheckFailure | None = None
    no_tests: bool = False
    baseline: BaselineChecks | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SetAsideRecord:
    """Changes of a shared tree no agent may own: kept on ``ref``; ``files`` were taken
    out of the tree, ``left_in_place`` (the user's files that predate the wave and
    changed during it) only copied; ``restore`` is the command that puts them back."""

    ref: str
    files: tuple[str, ...] = ()
    left_in_place: tuple[str, ...] = ()
    restore: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class SpiralRecord:
    """Why an agent's work counts as a spiral: one line, the files and commits it
    concerns, and each signal described (a file changed again and again, a revert, the
    same call three times in a row)."""

    summary: str
    files: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()


@dataclass(slots=True, kw_only=True)
class AgentRecord(Tracked):
    """One agent of one wave: how it ran and what came of it."""

    task: str
    status: Status | None = None
    summary: str = ""
    remaining: str = ""
    inferred: bool = False
    reason: str = ""
    spiral: SpiralRecord | None = None
    issue: IssueRef | None = None
    merged: bool = False
    workspace: str = ""
    branch: str | None = None
    checkpoint: str | None = None
    wip: str | None = None
    turns: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0
    cost_estimated: bool = False  # priced from token usage: the agent CLI gave no total
    input_tokens: int = 0
    output_tokens: int = 0
    elapsed_s: float = 0.0
    exit_code: int | None = None
    trip: Trip | None = None  # the per-agent breaker that stopped it
    findings: list[Finding] = field(default_factory=list)
    scope_violations: list[str] = field(default_factory=list)
    error_signature: str = ""
    final_text: str = ""
    transcript: str = ""
    last_tool: str = ""
    run: AgentRun | None = None  # what the dispatcher measured, kept for review and resume
    recovery: str = ""  # what the recovery protocol did: carry-forward, fix, rescope, ...
    touched: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class WaveRecord(Tracked):
    number: int
    tasks: list[Task]  # the tasks dispatched
    isolation: str
    enforcement: str
    max_turns: int
    isolation_reason: str = ""
    enforcement_reason: str = ""
    base: str = ""
    phase: WavePhase = WavePhase.PLANNED
    fallback: str | None = None
    agents: list[AgentRecord] = field(default_factory=list)
    integration: str | None = None
    resolutions: list[Resolution] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    checks: ChecksRecord | None = None
    started_at: float = 0.0
    finished_at: float = 0.0
    target_after: str | None = None
    fix_tasks: list[str] = field(default_factory=list)
    set_aside: SetAsideRecord | None = None
    lead: bool = False  # dispatched by a lead agent (step mode), which reviews it later
    onto: str | None = None  # the target branch's later tip the wave is merged onto

    @property
    def start(self) -> str:
        """The commit the wave's merge is built on and the target branch moves from."""
        return self.onto or self.base

    def agent(self, task: str) -> AgentRecord:
        for record in self.agents:
            if record.task == task:
                return record
        raise KeyError(task)


@dataclass(slots=True, kw_only=True)
class TaskRecord(Tracked):
    """A task's life across waves: attempts, reworks, spirals and its carryover issue."""

    id: str
    attempts: int = 0
    rework: int = 0
    spirals: int = 0
    failures: int = 0
    status: Status | None = None
    issue: IssueRef | None = None
    signatures: list[str] = field(default_factory=list)
    origin: Task | None = None  # the task as the plan first gave it
    abandoned: bool = False  # escalated with a carryover issue; not dispatched again


@dataclass(frozen=True, slots=True, kw_only=True)
class HaltedAgent:
    """An agent that could not start, as a halt on agent start names it."""

    task: str
    reason: str = ""
    exit_code: int | None = None
    stderr: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Halt:
    """Why the session halted when no breaker tripped, and the one next step.

    ``reason`` says which halt it is (``agent-start``, ``checks-fail-at-base``,
    ``rate-limited``, ``session-time``); the fields after ``next`` belong to one reason
    each: ``agents`` and ``stderr`` to ``agent-start``, ``budget``, ``elapsed_s`` and
    ``limit_s`` to ``session-time``.
    """

    reason: str
    detail: str
    wave: int = 0
    next: str | None = None
    agents: tuple[HaltedAgent, ...] = ()
    stderr: str | None = None
    budget: str | None = None
    elapsed_s: float | None = None
    limit_s: float | None = None


@dataclass(slots=True, kw_only=True)
class SessionState:
    session: str
    name: str
    repo: str
    target_branch: str
    start_commit: str
    plan_path: str = ""
    plan_text: str = ""
    runner: str | None = None
    tracker: str | None = None
    phase: SessionPhase = SessionPhase.RUNNING
    created_at: float = 0.0
    updated_at: float = 0.0
    pending: list[Task] = field(default_factory=list)
    tasks: dict[str, TaskRecord] = field(default_factory=dict)
    waves: list[WaveRecord] = field(default_factory=list)
    breaker: WaveBreakerState | None = None  # None until a wave was fed to the breaker
    halt: Halt | None = None  # a halt that is not a breaker trip
    cost_usd: float = 0.0
    running_s: float = 0.0  # seconds seawall ran the session, over all runs and resumes
    clock_start_s: float = 0.0  # running_s when the session_minutes allowance began

    def task(self, task_id: str) -> TaskRecord:
        record = self.tasks.get(task_id)
        if record is None:
            record = self.tasks[task_id] = TaskRecord(id=task_id)
        return record

    @property
    def current_wave(self) -> WaveRecord | None:
        return self.waves[-1] if self.waves else None
