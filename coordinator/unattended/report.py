"""What one tick did: the ``TickReport``, one line of ``ticks.jsonl``."""

from __future__ import annotations

from enum import StrEnum

import msgspec

from seawall.unattended.breaker import BreakerState

__all__ = ["TickAction", "TickReport"]


class TickAction(StrEnum):
    RAN = "ran"  # an item ran (a probe or an override run included)
    IDLE = "idle"  # nothing to take
    BREAKER_OPEN = "breaker-open"  # the breaker refused new work
    RATE_LIMIT_WAIT = "rate-limit-wait"  # the rate-limit backoff refused new work
    BUSY = "busy"  # another tick still holds the lock


class TickReport(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What one tick did; its ``ticks.jsonl`` line leaves out the fields it does not
    have (no item, no probe, no transitions)."""

    ts: float
    action: TickAction
    duration_sec: float
    consecutive_failures_before: int | None
    breaker: BreakerState | None = None  # the breaker's state after the tick
    item: str | None = None
    task: str | None = None
    outcome: str | None = None
    probe: bool = False  # the half-open breaker let this run through
    override: bool = False  # ``seawall runner resume`` let this run through
    events: tuple[str, ...] = ()  # transitions: breaker-open, breaker-closed, ...
    detail: str | None = None
