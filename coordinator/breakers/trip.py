"""Values of the per-agent breakers: which breaker, a trip, an admission, a notice."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "CLEANUP_ALLOWANCE",
    "Admission",
    "BreakerKind",
    "BreakerNotice",
    "BreakerState",
    "BreakerStatistics",
    "NoticeKind",
    "Trip",
]

CLEANUP_ALLOWANCE = 6  # cleanup commands a tripped agent may still run; no refill


class BreakerKind(StrEnum):
    """The per-agent breakers, in the order they are checked."""

    UNVERIFIED_EDITS = "unverified-edits"
    LOOP = "loop"
    COMMAND_FAILURES = "command-failures"
    CONSECUTIVE_FAILURES = "consecutive-failures"
    NO_PROGRESS = "no-progress"
    TOOL_BUDGET = "tool-budget"
    BLAST_RADIUS = "blast-radius"
    SESSION_TIME = "session-time"
    SCOPE_DENIALS = "scope-denials"

    @property
    def label(self) -> str:
        return f"breaker/{self.value}"

    @property
    def self_service(self) -> bool:
        """Only unverified-edits has a way out: a passing test or build run clears it."""
        return self is BreakerKind.UNVERIFIED_EDITS

    @property
    def wants_snapshot(self) -> bool:
        """Every trip with no way out commits a ``wip:`` snapshot; unverified-edits does not."""
        return not self.self_service


_NEXT_ACTION: Mapping[BreakerKind, str] = {
    BreakerKind.UNVERIFIED_EDITS: "run the tests or the build; a run that passes, or fails "
    "otherwise than before, clears this trip",
    BreakerKind.LOOP: "stop repeating the call; a person reviews, then "
    "`seawall reset --agent {agent}`",
    BreakerKind.COMMAND_FAILURES: "stop retrying the failing command; a person reviews, then "
    "`seawall reset --agent {agent}`",
    BreakerKind.CONSECUTIVE_FAILURES: "stop; a person reviews the failures, then "
    "`seawall reset --agent {agent}`",
    BreakerKind.NO_PROGRESS: "stop polling; run the awaited command in the foreground after "
    "`seawall reset --agent {agent}`",
    BreakerKind.TOOL_BUDGET: "narrow the task and re-dispatch it, or raise limits.max_tool_calls "
    "and `seawall reset --agent {agent}`",
    BreakerKind.BLAST_RADIUS: "split the task by file set, or raise limits.max_files_touched and "
    "`seawall reset --agent {agent}`",
    BreakerKind.SESSION_TIME: "narrow the task and re-dispatch it, or raise "
    "limits.max_session_minutes and `seawall reset --agent {agent}`",
    BreakerKind.SCOPE_DENIALS: "stop reaching outside the task's scope; re-scope the task or "
    "raise limits.max_scope_denials, then `seawall reset --agent {agent}`",
}


class BreakerState(StrEnum):
    ARMED = "armed"
    TRIPPED = "tripped"


class NoticeKind(StrEnum):
    TRIPPED = "tripped"
    WARNED = "warned"
    CLEARED = "cleared"


@dataclass(frozen=True, slots=True, kw_only=True)
class Trip:
    """A breaker tripped: which one, the evidence, the count that crossed its limit."""

    kind: BreakerKind
    evidence: str
    count: float
    limit: float
    at: float

    @property
    def wants_snapshot(self) -> bool:
        return self.kind.wants_snapshot

    @property
    def self_service(self) -> bool:
        return self.kind.self_service

    def next_action(self, agent: str = "TASK") -> str:
        """The single next action for this trip."""
        return _NEXT_ACTION[self.kind].format(agent=agent)

    def message(self, agent: str = "TASK") -> str:
        """The block message: what tripped, the evidence, the one recovery (if any)."""
        recovery = "Recovery: " if self.self_service else "No self-service recovery. Next: "
        return (
            f"seawall {self.kind.label} tripped ({self.count:g}/{self.limit:g}): {self.evidence}. "
            f"{recovery}{self.next_action(agent)}."
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Admission:
    """Hook mode's answer to one tool call: allowed or refused, and why.

    ``cleanup`` is true when the call spends the cleanup allowance; ``warning`` carries
    the one-time 80 % tool-budget warning for the agent.
    """

    allowed: bool
    reason: str = ""
    trip: Trip | None = None
    warning: str | None = None
    cleanup: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerNotice:
    """What listeners hear: a trip, the tool-budget warning, or a self-service clear."""

    kind: NoticeKind
    message: str
    trip: Trip | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerStatistics:
    """A snapshot of one agent's breaker counters."""

    state: BreakerState
    tool_calls: int
    edits_since_verify: int
    files_touched: int
    consecutive_failures: int
    consecutive_polls: int
    warned: bool
    cleanup_used: int
    elapsed_s: float
    trip: Trip | None
