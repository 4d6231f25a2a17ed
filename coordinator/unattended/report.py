"""What one tick did: the ``TickReport`` and its ``ticks.jsonl`` line."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from seawall.unattended.breaker import BreakerState

__all__ = ["TickAction", "TickReport"]


class TickAction(StrEnum):
    RAN = "ran"  # an item ran (a probe or an override run included)
    IDLE = "idle"  # nothing to take
    BREAKER_OPEN = "breaker-open"  # the breaker refused new work
    RATE_LIMIT_WAIT = "rate-limit-wait"  # the rate-limit backoff refused new work
    BUSY = "busy"  # another tick still holds the lock


@dataclass(frozen=True, slots=True, kw_only=True)
class TickReport:
    """What one tick did; ``to_record`` is its ``ticks.jsonl`` line."""

    action: TickAction
    ts: float
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

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "ts": round(self.ts, 3),
            "action": str(self.action),
            "duration_sec": round(self.duration_sec, 3),
            "consecutive_failures_before": self.consecutive_failures_before,
        }
        optional = {
            "breaker": None if self.breaker is None else str(self.breaker),
            "item": self.item,
            "task": self.task,
            "outcome": self.outcome,
            "probe": self.probe or None,
            "override": self.override or None,
            "events": list(self.events) or None,
            "detail": self.detail,
        }
        record.update({key: value for key, value in optional.items() if value is not None})
        return record
