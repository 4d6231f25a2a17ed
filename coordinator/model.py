"""The domain model: tasks, session configuration, plans, waves, statuses and issues.
What a wave's merge, checks and review produced lives in ``seawall.outcomes`` and is
named here too.

Every value here is a frozen, slotted, keyword-only dataclass or a StrEnum. Nothing
reads the environment or the disk at import time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Literal

from seawall.outcomes import (
    AdoptedRecord,
    BaselineChecks,
    CheckFailure,
    Dropped,
    Resolution,
    RunCounts,
    SetAsideRecord,
)
from seawall.pricing import Price

__all__ = [
    "AUTO_MAX_TURNS",
    "AdoptedRecord",
    "BaselineChecks",
    "BreakerLimits",
    "Budgets",
    "CheckFailure",
    "CheckVerdict",
    "ChecksPolicy",
    "CollisionRisk",
    "CommandPolicyConfig",
    "Dropped",
    "Enforcement",
    "Isolation",
    "IssueRef",
    "NotifyConfig",
    "OnLimit",
    "OptionValue",
    "OverlapPolicy",
    "Plan",
    "PublishConfig",
    "Resolution",
    "RunCounts",
    "RunnerSpec",
    "Schedule",
    "SessionConfig",
    "SessionType",
    "SetAsideRecord",
    "SpiralConfig",
    "StagnationConfig",
    "Status",
    "StatusReport",
    "Task",
    "TaskKind",
    "TrackerConfig",
    "Wave",
    "WaveBreakerConfig",
]


class SessionType(StrEnum):
    HOUSEKEEPING = "housekeeping"
    FEATURE = "feature"
    DEEP = "deep"


class Isolation(StrEnum):
    """Configured isolation. A resolved wave is only ever ``worktree`` or ``none``."""

    AUTO = "auto"
    WORKTREE = "worktree"
    NONE = "none"


class Enforcement(StrEnum):
    OFF = "off"
    WARN = "warn"
    STRICT = "strict"


class CollisionRisk(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class OverlapPolicy(StrEnum):
    """What an in-place wave does with tasks whose scopes overlap."""

    SPLIT = "split"  # the overlapping tasks wait for later waves, one after another
    WORKTREE = "worktree"  # move the wave to worktrees


class Schedule(StrEnum):
    """How a session dispatches its tasks (see docs/sessions.md, "Schedules")."""

    WAVES = "waves"  # a wave starts when the previous one has landed whole
    ROLLING = "rolling"  # each task starts as soon as what it needs has landed


class ChecksPolicy(StrEnum):
    """What a failing check does to the merge of a wave."""

    BLOCK = "block"  # drop the merge that broke it; a failing base merges nothing
    BASELINE = "baseline"  # only failures the base does not have block
    WARN = "warn"  # merge anyway, and say so everywhere


class CheckVerdict(StrEnum):
    """What the checks of a wave's merge came to."""

    NONE = "none"  # the session has no checks
    PASSED = "passed"
    KNOWN_FAILURES = "known-failures"  # baseline: merged; it fails only as the base does
    FAILED_MERGED = "failed-merged"  # warn: merged although the checks fail
    BASE_FAILS = "base-fails"  # block: the base fails the checks too; nothing merged

    @property
    def merged_failing(self) -> bool:
        """The wave merged with failing checks."""
        return self in (CheckVerdict.KNOWN_FAILURES, CheckVerdict.FAILED_MERGED)


class TaskKind(StrEnum):
    IMPLEMENT = "implement"
    TEST_WRITER = "test-writer"
    FIX = "fix"
    REFACTOR = "refactor"
    DOCS = "docs"
    REVIEW = "review"
    RESEARCH = "research"


class Status(StrEnum):
    """The one status vocabulary. ``no-tests-needed`` is a success, like ``done``."""

    DONE = "done"
    NO_TESTS_NEEDED = "no-tests-needed"
    PARTIAL = "partial"
    FAILED = "failed"
    SPIRAL = "spiral"
    BLOCKED = "blocked"
    PAUSED = "paused"  # a provider's limit stopped it: run again after the reset, not failed

    @property
    def is_success(self) -> bool:
        return self in (Status.DONE, Status.NO_TESTS_NEEDED)


AUTO_MAX_TURNS: Mapping[SessionType, int] = MappingProxyType(
    {SessionType.HOUSEKEEPING: 8, SessionType.FEATURE: 15, SessionType.DEEP: 25}
)


#: A value of an adapter's ``options`` table: a TOML string, integer, float, boolean, or a
#: list of strings.
OptionValue = str | int | float | bool | tuple[str, ...]


def _frozen_map(value: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One unit of work for one agent."""

    id: str
    prompt: str
    scope: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    kind: TaskKind = TaskKind.IMPLEMENT
    agent: str | None = None  # runner name; None means the session default
    max_turns: int | None = None  # None means the wave's resolved value
    collision_risk: CollisionRisk = CollisionRisk.LOW
    may_change_nothing: bool = False  # done with no change is a success (else it is checked)
    reads: tuple[str, ...] = ()  # paths the agent reads beyond its scope (its sparse checkout)
    sparse: bool | None = None  # a sparse worktree for this task; None: the session's choice
    # the model of each attempt, in order (a retry moves to the next, the last repeats);
    # empty: the runner's own model
    models: tuple[str, ...] = ()

    def model_for(self, attempt: int) -> str | None:
        """The model of attempt ``attempt`` (0: the first), or None for the runner's."""
        if not self.models:
            return None
        return self.models[min(attempt, len(self.models) - 1)]


@dataclass(frozen=True, slots=True, kw_only=True)
class Budgets:
    """Money and time ceilings. ``None`` means no ceiling."""

    cost_usd: float | None = None
    tokens: int | None = None  # input + output tokens of all agents, an alternative limit
    agent_minutes: float = 30.0  # wall clock per agent
    session_minutes: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerLimits:
    """Per-agent breakers (defaults of the breaker reference)."""

    max_edits_without_verify: int = 25
    max_repeat_identical: int = 4
    max_same_command_failures: int = 3
    max_consecutive_failures: int = 3
    max_consecutive_polls: int = 12
    max_tool_calls: int = 400
    tool_budget_warn_fraction: float = 0.8
    max_files_touched: int = 60
    max_session_minutes: float = 90.0
    max_scope_denials: int = 10  # calls seawall's guard denied; not counted as failures
    verify_command: str = ""  # the check an unverified-edits trip names ("": found for it)


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveBreakerConfig:
    """The wave-level breaker. Enabled by default; disable only explicitly."""

    enabled: bool = True
    stall_waves: int = 2
    identical_failure_cycles: int = 2
    max_rework_cycles: int = 3
    merge_conflict: bool = True
    window: int = 0  # rolling: reviews judged together (0: the concurrency cap)


@dataclass(frozen=True, slots=True, kw_only=True)
class StagnationConfig:
    pagination_reads: int = 3
    turn_key_repeats: int = 3
    error_echo_repeats: int = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class SpiralConfig:
    """Spiral detection from an agent's history."""

    file_changes: int = 3  # a file changed in this many checkpoints/commits
    detect_reverts: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandPolicyConfig:
    """Overlays on the default command deny list.

    Each entry is a command prefix in shell syntax (``"npm publish"``); tokens may use
    ``*`` globs. ``allow`` lifts a default deny, ``deny`` adds one.
    """

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerSpec:
    """A named agent runner from the plan's ``[runners.NAME]`` table."""

    name: str
    kind: str
    argv: tuple[str, ...] = ()
    model: str | None = None
    env: Mapping[str, str] = field(default_factory=_frozen_map)
    #: the runner's own settings (``options = {...}``), typed TOML values
    options: Mapping[str, OptionValue] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True, kw_only=True)
class TrackerConfig:
    """Where carryover issues go. Tokens are never stored here, only read on request."""

    kind: str = "local"
    repository: str | None = None  # "owner/name" on GitHub, "group/project" on GitLab
    url: str | None = None  # GitHub Enterprise API URL or self-hosted GitLab URL
    label: str = "carryover"
    token_env: str | None = None  # defaults per tracker: GITHUB_TOKEN / GITLAB_TOKEN
    #: the adapter's own settings (``[session.tracker.options]``), typed TOML values
    options: Mapping[str, OptionValue] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishConfig:
    """``[session.publish]``: at the end, push the session's branch and open a pull
    request (GitHub) or merge request (GitLab) on the session's tracker host."""

    remote: str = "origin"  # a git remote name or URL
    branch: str | None = None  # the branch pushed; default: the session's target branch
    base: str = "main"  # the branch the request merges into
    title: str | None = None  # default: "seawall: <session name>"


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyConfig:
    """``[session.notify]``: a webhook that gets a small JSON body on these events."""

    url: str
    events: tuple[str, ...] = ("trip", "halt", "finish")
    timeout: float = 5.0  # seconds per delivery attempt
    attempts: int = 3


class OnLimit(StrEnum):
    """``[session] on_limit``: what a provider's limit does to the session."""

    WAIT = "wait"  # wait for the reset (up to ``max_wait`` minutes), then run again
    HALT = "halt"  # halt at once (exit 6), naming the provider and the reset time


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionConfig:
    name: str = "session"
    session_type: SessionType = SessionType.FEATURE
    isolation: Isolation = Isolation.AUTO
    enforcement: Enforcement = Enforcement.WARN
    max_turns: int | Literal["auto"] = "auto"
    # the concurrency cap: how many agents run at once (``max_agents`` in a plan file;
    # its old name ``max_agents_per_wave`` is still read)
    max_agents_per_wave: int = 6
    schedule: Schedule = Schedule.WAVES
    budgets: Budgets = field(default_factory=Budgets)
    checks: tuple[str, ...] = ()
    checks_policy: ChecksPolicy = ChecksPolicy.BLOCK
    agent: str = "scripted"  # default runner name
    overlap: OverlapPolicy = OverlapPolicy.SPLIT
    breakers: BreakerLimits = field(default_factory=BreakerLimits)
    wave_breaker: WaveBreakerConfig = field(default_factory=WaveBreakerConfig)
    stagnation: StagnationConfig = field(default_factory=StagnationConfig)
    spiral: SpiralConfig = field(default_factory=SpiralConfig)
    commands: CommandPolicyConfig = field(default_factory=CommandPolicyConfig)
    tracker: TrackerConfig = field(default_factory=TrackerConfig)
    # where agent worktrees go (absolute, or relative to the repository); "" = next to it
    worktree_root: str = ""
    sparse: bool = False  # worktrees hold only what each task needs (seawall.git.sparse)
    reads: tuple[str, ...] = ()  # paths every sparse worktree holds (what the checks read)
    accept_hooks_only: bool = False  # without an OS sandbox, run strict in place anyway
    # untracked files of the user's inside an in-place task's scope: adopt them (copy,
    # name, let the agent change them) instead of refusing the wave
    adopt_user_files: bool = False
    sandbox_writable: tuple[str, ...] = ()  # more paths every agent may write (caches)
    prices: Mapping[str, Price] = field(default_factory=lambda: MappingProxyType({}))
    publish: PublishConfig | None = None
    notify: NotifyConfig | None = None
    on_limit: OnLimit = OnLimit.WAIT  # a provider's limit: wait for its reset, or halt
    max_wait: float = 30.0  # minutes ``wait`` waits for a reset at most; longer: halt
    # an interrupted agent, and the fix of its work, continue its own conversation when
    # its CLI can (``seawall.session.continuation``); false: a new agent each time
    continue_conversations: bool = True

    @property
    def max_agents(self) -> int:
        """The concurrency cap: the agents of a wave, or of a rolling session at once."""
        return self.max_agents_per_wave

    def resolved_max_turns(self) -> int:
        if self.max_turns == "auto":
            return AUTO_MAX_TURNS[self.session_type]
        return self.max_turns


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """A validated plan: the session configuration and its tasks, in file order.

    A plan parsed from TOML keeps its ``source``; a session records it and reopens from
    it. A plan built in Python has none; the session records its rendering
    (``seawall.plan.render``) instead."""

    session: SessionConfig
    tasks: tuple[Task, ...]
    runners: Mapping[str, RunnerSpec] = field(default_factory=lambda: MappingProxyType({}))
    path: str | None = None
    source: str = field(default="", repr=False, compare=False)  # the TOML parsed, if any

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class Wave:
    """A set of tasks dispatched together, with its resolved isolation and enforcement."""

    number: int
    tasks: tuple[Task, ...]
    isolation: Isolation
    enforcement: Enforcement
    max_turns: int
    isolation_reason: str = ""
    enforcement_reason: str = ""

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(task.id for task in self.tasks)

    def renumbered(self, number: int, tasks: tuple[Task, ...]) -> Wave:
        """A wave of ``tasks`` numbered ``number`` with this wave's decisions (planning
        decides once per wave shape and gives every wave of that shape the same)."""
        return Wave(
            number=number,
            tasks=tasks,
            isolation=self.isolation,
            enforcement=self.enforcement,
            max_turns=self.max_turns,
            isolation_reason=self.isolation_reason,
            enforcement_reason=self.enforcement_reason,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusReport:
    """What an agent's final message says (or what could be inferred without a STATUS line)."""

    status: Status
    summary: str = ""
    remaining: str = ""
    inferred: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class IssueRef:
    """The tracker issue a task's outcome points to; ``existing`` when the issue was
    already open (the task was a duplicate of earlier work) rather than filed for it."""

    number: int
    url: str = ""
    existing: bool = False

    def suffix(self) -> str:
        """``→ issue #N`` for an issue filed for the task, ``→ existing #N`` otherwise."""
        return f"→ {'existing' if self.existing else 'issue'} #{self.number}"
