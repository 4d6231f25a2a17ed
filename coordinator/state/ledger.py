"""The session ledger: what ``state.json`` holds, as typed records.

The ledger is the single source of truth of a session. It is written atomically after
every step that changes it, so a coordinator killed at any point can be resumed from it.
Every record converts through ``seawall.codec``; how the ledger is laid out on
disk, and saved in proportion to what changed, is ``seawall.state.store``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from seawall.breakers.trip import Trip
from seawall.breakers.wave import WaveBreakerState
from seawall.model import (
    AdoptedRecord,
    BaselineChecks,
    CheckFailure,
    ChecksPolicy,
    CheckVerdict,
    Dropped,
    Enforcement,
    Isolation,
    IssueRef,
    Resolution,
    SetAsideRecord,
    Status,
    Task,
)
from seawall.stagnation.finding import Finding
from seawall.state.halt import Halt, HaltedAgent, HaltReason
from seawall.state.runs import AgentRun

__all__ = [
    "SCHEMA_VERSION",
    "AdoptedRecord",
    "AgentRecord",
    "BaselineChecks",
    "CheckFailure",
    "ChecksRecord",
    "ConversationRef",
    "Dropped",
    "Halt",
    "HaltReason",
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
    "collect_changes",
    "collecting",
    "watch",
]

SCHEMA_VERSION = 3  # 1: one state.json rewritten whole on every save; 2: halt, breaker dicts


_WATCH = "_ledger_watch"  # in a record's __dict__: (changes, key, owner), set by ``watch``
_CHANGES = "_ledger_changes"  # in a ledger's __dict__: the changes its writer collects


class Tracked:
    """A record that tells its ledger's writer when a field of it is assigned.

    A writer that has encoded a record ``watch``-es it: the first assignment to any of
    its fields after that puts the record's piece (its key, and the record that piece is
    encoded from: an agent's piece is its wave's) into the writer's ``changes``, once,
    and the writer encodes again only the pieces found there. A save's cost therefore
    follows what was assigned, not how many records the ledger holds. A list a record
    holds that is changed in place is not an assignment: the writer encodes every open
    wave (and the last one) on each save, so their lists may be changed in place; the
    lists of other records are replaced by assignment, or reached through
    ``SessionState.task``, which counts the task as changed.
    """

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        watched = self.__dict__.pop(_WATCH, None)
        if watched is not None:
            watched[0][watched[1]] = watched[2]


def watch(record: Tracked, changes: dict[str, Tracked], key: str, owner: Tracked) -> None:
    """Have the next assignment to a field of ``record`` set ``changes[key] = owner``."""
    record.__dict__[_WATCH] = (changes, key, owner)


def collect_changes(state: SessionState, changes: dict[str, Tracked]) -> None:
    """Make ``changes`` the dict ``state.task`` notes the tasks it hands out in."""
    state.__dict__[_CHANGES] = changes


def collecting(state: SessionState) -> dict[str, Tracked] | None:
    """The dict ``state`` notes changed tasks in (``collect_changes``), if any."""
    changes: dict[str, Tracked] | None = state.__dict__.get(_CHANGES)
    return changes


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
class ChecksRecord:
    """A wave's checks: whether they passed, under which policy, the verdict, how many
    runs it took, the commit checked, what failed there, and the base's own run."""

    passed: bool
    policy: ChecksPolicy = ChecksPolicy.BLOCK
    verdict: CheckVerdict = CheckVerdict.NONE
    runs: int = 0
    commit: str = ""
    failure: CheckFailure | None = None
    no_tests: bool = False
    baseline: BaselineChecks | None = None


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
    model: str = ""  # the model of this attempt, when the task names its models
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
    input_tokens: int = 0  # uncached input
    output_tokens: int = 0
    cache_read_tokens: int = 0  # cached input read
    cache_write_tokens: int = 0  # cached input written
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
    conversation: str = ""  # the agent CLI's conversation id, to continue it later
    continued: str = ""  # the conversation this agent continued ("" for a fresh start)
    resumes: ConversationRef | None = None  # the conversation it was dispatched to continue

    @property
    def tokens(self) -> int:
        """Every input and output token of the agent, cached input (read and written)
        included: what ``budgets.tokens`` counts."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    @property
    def cached_tokens(self) -> int:
        """The cached share of ``tokens``: input read from or written to the cache."""
        return self.cache_read_tokens + self.cache_write_tokens


@dataclass(slots=True, kw_only=True)
class WaveRecord(Tracked):
    number: int
    tasks: list[Task]  # the tasks dispatched
    isolation: Isolation  # as resolved: worktree or none
    enforcement: Enforcement
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
    adopted: AdoptedRecord | None = None  # the user's files in scopes, copied before dispatch
    lead: bool = False  # dispatched by a lead agent (step mode), which reviews it later
    onto: str | None = None  # the target branch's later tip the wave is merged onto
    # a rolling session's timeline: when the agent of this dispatch ended, and when its
    # work landed on the target branch (0: not yet, or not at all)
    ended_at: float = 0.0
    merged_at: float = 0.0

    @property
    def start(self) -> str:
        """The commit the wave's merge is built on and the target branch moves from."""
        return self.onto or self.base

    def agent(self, task: str) -> AgentRecord:
        for record in self.agents:
            if record.task == task:
                return record
        raise KeyError(task)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationRef:
    """The conversation a task's next dispatch continues (``seawall.session.continuation``):
    its id, the workspace it ran in, what the message that continues it says (what
    ``happened``, the ``next_step``) and the turns it used that count against the
    continued agent's limit."""

    id: str
    workspace: str = ""
    happened: str = ""
    next_step: str = ""
    turns: int = 0
    by: str = ""  # the task whose agent held it (a conflict's fix continues its author's)
    model: str = ""  # the model it ran on (a retry on another model starts afresh)


@dataclass(slots=True, kw_only=True)
class TaskRecord(Tracked):
    """A task's life across waves: attempts, reworks, spirals and its carryover issue."""

    id: str
    attempts: int = 0
    rework: int = 0
    spirals: int = 0
    failures: int = 0
    pauses: int = 0  # a provider's limit paused it in this many dispatches in a row
    status: Status | None = None
    issue: IssueRef | None = None
    signatures: list[str] = field(default_factory=list)
    origin: Task | None = None  # the task as the plan first gave it
    abandoned: bool = False  # escalated with a carryover issue; not dispatched again
    conversation: ConversationRef | None = None  # the next dispatch continues this one


@dataclass(slots=True, kw_only=True)
class SessionState(Tracked):
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
    holds: dict[str, float] = field(default_factory=dict)  # provider: its limit's reset
    schedule: str = "waves"  # the plan's [session] schedule when the session started
    green_bases: list[str] = field(default_factory=list)  # bases whose checks passed

    def task(self, task_id: str) -> TaskRecord:
        """The record of ``task_id`` (made when there is none), counted as changed."""
        record = self.tasks.get(task_id)
        if record is None:
            record = self.tasks[task_id] = TaskRecord(id=task_id)
        changes = self.__dict__.get(_CHANGES)
        if changes is not None:  # the caller may change the record's lists in place
            changes[f"task/{task_id}"] = record
        return record

    @property
    def current_wave(self) -> WaveRecord | None:
        return self.waves[-1] if self.waves else None
