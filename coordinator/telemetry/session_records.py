"""The records of a session's life: started, halted, finished, killed, published, and
what a person did to it from the command line."""

from __future__ import annotations

from seawall.telemetry.base import TelemetryRecord

__all__ = [
    "BreakerReset",
    "GitLockRemoved",
    "LeadReleased",
    "NotifyFailed",
    "Published",
    "SessionFinished",
    "SessionHalted",
    "SessionKilled",
    "SessionStarted",
]


class SessionStarted(TelemetryRecord, frozen=True, tag="session_started"):
    """A session began: its plan file, the branch it advances from ``base``, its tasks."""

    plan: str
    target: str
    base: str
    tasks: int


class SessionFinished(TelemetryRecord, frozen=True, tag="session_finished"):
    """The session ended with no work left: what it cost, how many waves it ran."""

    cost_usd: float
    waves: int


class SessionHalted(TelemetryRecord, frozen=True, tag="session_halted"):
    """The session halted without a breaker trip; ``reason`` is the halt's
    (``agent-start``, ``checks-fail-at-base``, ``rate-limited``, ``session-time``), and
    a halt on ``session-time`` says the time run and its limit."""

    wave: int
    reason: str
    elapsed_s: float | None = None
    limit_s: float | None = None


class SessionKilled(TelemetryRecord, frozen=True, tag="session_killed"):
    """`seawall kill`, or a stop of the running session asked for from outside it
    (``by`` whom, ``via`` what: ``user``, ``seawall watch``): it will not continue."""

    by: str = ""
    via: str = ""


class LeadReleased(TelemetryRecord, frozen=True, tag="lead_released"):
    """`seawall reset --lead`: whether a lead's hold on the repository was released."""

    released: bool


class BreakerReset(TelemetryRecord, frozen=True, tag="breaker_reset"):
    """`seawall reset --agent`: whether the agent's breaker had a trip to clear."""

    agent: str
    cleared: bool


class Published(TelemetryRecord, frozen=True, tag="published"):
    """The session's branch pushed and its pull request found or opened (or the error)."""

    branch: str
    base: str
    commit: str | None = None
    number: int | None = None
    url: str | None = None
    created: bool = False
    error: str | None = None


class NotifyFailed(TelemetryRecord, frozen=True, tag="notify_failed"):
    """A webhook notification (``trip``, ``halt``, ``finish``) dropped after its tries."""

    notification: str
    attempts: int
    error: str


class GitLockRemoved(TelemetryRecord, frozen=True, tag="git_lock_removed"):
    """`seawall resume` removed a git lock a killed git process left (``path``, how old
    it was): no live process could own it (see ``seawall.git.stale_locks``)."""

    path: str
    age_s: float
