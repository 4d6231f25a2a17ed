"""The records of a wave: planned, prepared in place or in worktrees, reviewed, merged,
recovered and finished, with the carryover issues filed and closed on the way.

A field that holds the value of an enum of a part above the telemetry (the recovery's
action, a carryover's kind, the checks' verdict) is a ``str`` holding that value, as
the ledger keeps it.
"""

from __future__ import annotations

from seawall.model import (
    BaselineChecks,
    ChecksPolicy,
    Dropped,
    Enforcement,
    Isolation,
    Resolution,
    SetAsideRecord,
    Status,
)
from seawall.scope.state_change import StateChange
from seawall.telemetry.base import TelemetryRecord

__all__ = [
    "AgentCommitsAbsorbed",
    "BreakerNotHalting",
    "CarryoverClosed",
    "CarryoverFiled",
    "ChecksRun",
    "MergeRefused",
    "RecoveryDecided",
    "RepoStateChanged",
    "ScopeCollision",
    "ScopeViolation",
    "UnattributedChanges",
    "WaveFinished",
    "WaveMerged",
    "WavePlanned",
    "WaveRebased",
    "WorktreeFallback",
    "WorktreeKept",
    "WorktreeRecreated",
]


class WavePlanned(TelemetryRecord, frozen=True, tag="wave_planned"):
    """A wave was planned: its tasks, isolation and enforcement, its base commit and
    why it runs isolated as it does."""

    wave: int
    tasks: tuple[str, ...]
    isolation: Isolation
    enforcement: Enforcement
    base: str
    reason: str = ""


class ScopeCollision(TelemetryRecord, frozen=True, tag="scope_collision"):
    """Tasks of an in-place wave whose scopes overlap: what was done about it."""

    wave: int
    action: str
    lines: tuple[str, ...] = ()


class WorktreeFallback(TelemetryRecord, frozen=True, tag="worktree_fallback"):
    """Worktrees could not be made: the wave runs in place, for ``reason``."""

    wave: int
    reason: str | None = None


class WorktreeRecreated(TelemetryRecord, frozen=True, tag="worktree_recreated"):
    """A workspace that was missing or not whole was made again."""

    wave: int
    path: str


class WorktreeKept(TelemetryRecord, frozen=True, tag="worktree_kept"):
    """A worktree the clean-up did not remove, and why."""

    wave: int
    agent: str
    path: str
    reason: str = ""


class AgentCommitsAbsorbed(TelemetryRecord, frozen=True, tag="agent_commits_absorbed"):
    """Commits agents made on the target branch in a shared tree, taken back and kept
    on ``ref``."""

    wave: int
    ref: str


class UnattributedChanges(TelemetryRecord, frozen=True, tag="unattributed_changes"):
    """Changes of a shared tree no agent may own, set aside."""

    wave: int
    set_aside: SetAsideRecord


class RepoStateChanged(TelemetryRecord, frozen=True, tag="repo_state_changed"):
    """A hook, the configuration, a ref or a local remote's branch changed by the wave."""

    wave: int
    change: StateChange


class ScopeViolation(TelemetryRecord, frozen=True, tag="scope_violation"):
    """An agent changed files outside its scope; ``action`` says what the merge did."""

    wave: int
    agent: str
    files: tuple[str, ...]
    action: str


class ChecksRun(TelemetryRecord, frozen=True, tag="checks"):
    """The wave's checks: the policy, the verdict (``seawall.git.checks.CheckVerdict``'s
    value), the commit checked, the first failing command, the base's own run and the
    agents dropped from the merge for them."""

    wave: int
    policy: ChecksPolicy
    verdict: str
    commit: str = ""
    failure: str | None = None
    baseline: BaselineChecks | None = None
    dropped: tuple[str, ...] = ()


class MergeRefused(TelemetryRecord, frozen=True, tag="merge_refused"):
    """An agent's work was not merged, and why."""

    wave: int
    agent: str
    reason: str


class WaveMerged(TelemetryRecord, frozen=True, tag="merge"):
    """The wave landed: the integration commit, the agents merged, the conflicts the
    policy resolved and the agents dropped."""

    wave: int
    integration: str | None
    merged: tuple[str, ...] = ()
    resolutions: tuple[Resolution, ...] = ()
    dropped: tuple[Dropped, ...] = ()


class RecoveryDecided(TelemetryRecord, frozen=True, tag="recovery"):
    """What the recovery protocol does with an agent's task
    (``seawall.session.after_review.Action``'s value: ``carry-forward``, ``fix``, ...)."""

    wave: int
    agent: str
    action: str
    reason: str = ""


class CarryoverFiled(TelemetryRecord, frozen=True, tag="carryover"):
    """A carryover issue filed for an escalated task (``kind`` is ``SPIRAL`` or
    ``FAILED``): ``outcome`` is ``created``, ``duplicate`` or ``error``."""

    task: str
    kind: str
    wave: int
    outcome: str | None = None
    number: int | None = None
    url: str | None = None
    fingerprint: str = ""
    tracker: str = ""
    error: str | None = None


class CarryoverClosed(TelemetryRecord, frozen=True, tag="carryover_closed"):
    """A carryover issue closed: its task landed (``landed``: the wave, agent and
    commit) or it duplicated another (``duplicate``: the issue kept)."""

    number: int | None
    reason: str
    closed: bool
    error: str | None = None
    wave: int | None = None
    agent: str | None = None
    commit: str | None = None
    duplicate_of: int | None = None


class BreakerNotHalting(TelemetryRecord, frozen=True, tag="breaker_not_halting"):
    """The wave breaker's line, with no halt: no work is left, the session ends."""

    wave: int
    line: str
    reason: str


class WaveFinished(TelemetryRecord, frozen=True, tag="wave_finished"):
    """The wave is done: each agent's status."""

    wave: int
    statuses: dict[str, Status | None]


class WaveRebased(TelemetryRecord, frozen=True, tag="wave_rebased"):
    """The target branch moved while the wave ran: the wave is merged onto ``onto``."""

    wave: int
    base: str
    previous: str
    onto: str
