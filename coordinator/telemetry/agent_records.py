"""The records of one agent: how it finished or could not start, what its breaker and
the stagnation detectors saw, what the scope guard warned of or denied, and what a
resume found of it.

The stagnation detectors' pattern, source and error class are the values of
``seawall.stagnation``'s enums, held as ``str``: that part writes these records, so
its enums cannot be the telemetry's field types without an import circle.
"""

from __future__ import annotations

from enum import StrEnum

from seawall.breakers.trip import BreakerKind
from seawall.breakers.wave import WaveTrigger
from seawall.model import RunCounts, Status
from seawall.scope.enforce import Decision, ErrorClass, Failure, Verdict
from seawall.telemetry.base import TelemetryRecord

__all__ = [
    "AgentFinished",
    "AgentSalvaged",
    "AgentStartFailed",
    "BreakerLevel",
    "BreakerTripped",
    "CheckpointFailed",
    "FinishSource",
    "OrphanStopped",
    "RemoteOrphansUnchecked",
    "ScopeDenied",
    "ScopeWarning",
    "StagnationDetected",
    "scope_verdict",
]


class FinishSource(StrEnum):
    """Who saw an agent finish: the coordinator that ran it, or its SubagentStop hook."""

    COORDINATOR = "coordinator"
    HOOK = "hook"


class AgentFinished(TelemetryRecord, frozen=True, tag="agent_finished"):
    """An agent ended. The coordinator records how its run ended and what it counted
    (``truncated``, ``stop_reason``, ``counts``); the SubagentStop hook of an agent a
    lead dispatched records the status it read from the agent's final message
    (``status`` to ``reason``, and the CLI's ``agent_id``)."""

    wave: int
    agent: str | None
    source: FinishSource = FinishSource.COORDINATOR
    truncated: bool = False
    stop_reason: str = ""
    counts: RunCounts | None = None
    status: Status | None = None
    summary: str = ""
    remaining: str = ""
    inferred: bool = False
    reason: str = ""
    agent_id: str | None = None


class AgentStartFailed(TelemetryRecord, frozen=True, tag="agent_start_failed"):
    """An agent whose program could not start (or died before its first event)."""

    wave: int
    task: str
    reason: str = ""
    exit_code: int | None = None
    stderr: str = ""


class AgentSalvaged(TelemetryRecord, frozen=True, tag="agent_salvaged"):
    """On resume: an agent the dead coordinator never heard back from, its work
    snapshotted at ``checkpoint``."""

    wave: int
    agent: str
    checkpoint: str | None = None


class OrphanStopped(TelemetryRecord, frozen=True, tag="orphan_stopped"):
    """On resume: an agent a dead coordinator left running was stopped, on other
    machines (a line per place in ``remote``) or here (its ``process_groups``)."""

    agent: str
    remote: tuple[str, ...] = ()
    process_groups: tuple[int, ...] = ()


class RemoteOrphansUnchecked(TelemetryRecord, frozen=True, tag="remote_orphans_unchecked"):
    """On resume: the runner could not look for an agent left running elsewhere."""

    agent: str
    error: str


class BreakerLevel(StrEnum):
    AGENT = "agent"
    WAVE = "wave"


class BreakerTripped(TelemetryRecord, frozen=True, tag="breaker_tripped"):
    """A breaker tripped. An agent's (``level`` ``agent``): which ``breaker``, the
    ``evidence``, the ``count`` that crossed its ``limit``, whether a ``wip:`` snapshot
    is taken and the one ``next_action``. The wave breaker's (``level`` ``wave``): its
    ``trigger`` and ``detail``; the session halts."""

    wave: int
    level: BreakerLevel = BreakerLevel.AGENT
    agent: str | None = None
    breaker: BreakerKind | None = None
    evidence: str = ""
    count: float | None = None
    limit: float | None = None
    snapshot: bool | None = None
    next_action: str = ""
    trigger: WaveTrigger | None = None
    detail: str | None = None


class StagnationDetected(
    TelemetryRecord, frozen=True, tag="stagnation_detected", omit_defaults=True
):
    """A stagnation pattern of one agent (``seawall.stagnation.Pattern``'s value), found
    by the post-wave review or the live watch (``source``: ``coordinator`` or ``tail``).
    Only error echo has an ``error_class``; the other patterns leave it out."""

    wave: int
    agent: str
    pattern: str
    source: str
    occurrences: int
    evidence: str
    error_class: str | None = None


class _ScopeVerdictRecord(TelemetryRecord, frozen=True):
    """What the scope guard decided of one call of ``task``'s agent, and why."""

    decision: Decision
    error_class: ErrorClass | None = None
    failure: Failure | None = None
    problem: str = ""
    wave: int | None = None
    task: str | None = None
    tool: str | None = None


class ScopeWarning(_ScopeVerdictRecord, frozen=True, tag="scope_warning"):
    """A call outside the agent's scope, allowed with a warning (``warn``)."""


class ScopeDenied(_ScopeVerdictRecord, frozen=True, tag="scope_denied"):
    """A call outside the agent's scope, denied (``strict``, or a guard that cannot
    judge the call)."""


def scope_verdict(
    verdict: Verdict, *, wave: int | None, task: str | None, tool: str | None
) -> ScopeWarning | ScopeDenied | None:
    """The record of a warned or denied call; None for a plain allow, which is not logged."""
    if verdict.decision is Decision.ALLOW:
        return None
    kind = ScopeWarning if verdict.decision is Decision.WARN else ScopeDenied
    return kind(
        decision=verdict.decision,
        error_class=verdict.error_class,
        failure=verdict.failure,
        problem=verdict.problem,
        wave=wave,
        task=task,
        tool=tool,
    )


class CheckpointFailed(TelemetryRecord, frozen=True, tag="checkpoint_failed"):
    """A hook could not record an agent's checkpoint after an edit (never blocking)."""

    task: str | None
    error: str
