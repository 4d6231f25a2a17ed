"""An agent breaker's counters as JSON, for hook processes that resume it (internal)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from coordinator.breakers._memory import FailureCounts, Pending, Repeat
from coordinator.breakers.polls import BackgroundWatch
from coordinator.breakers.signature import FailurePrint
from coordinator.breakers.trip import Trip

if TYPE_CHECKING:
    from coordinator.breakers.agent import AgentBreaker

SCHEMA = 2


def dump_state(breaker: AgentBreaker) -> dict[str, Any]:
    """Everything needed to resume counting in another process (JSON-safe)."""
    return {
        "schema": SCHEMA,
        "agent": breaker.agent,
        "started_at": breaker._started,
        "tool_calls": breaker.tool_calls,
        "edits_since_verify": breaker.edits_since_verify,
        "consecutive_failures": breaker.consecutive_failures,
        "consecutive_polls": breaker.consecutive_polls,
        "scope_denials": breaker.scope_denials,
        "files": sorted(breaker.files),
        "warned": breaker.warned,
        "cleanup_used": breaker.cleanup_used,
        "trip": None if breaker.trip is None else breaker.trip.to_dict(),
        "pending": {
            call_id: [p.key, p.shown, p.command, list(p.paths), p.poll]
            for call_id, p in breaker._pending.items()
        },
        "repeats": {
            key: [r.streak, r.result_digest(), _saved_print(r.failure_print())]
            for key, r in breaker._repeats.items()
        },
        "command_failures": {
            command: counts.to_list() for command, counts in breaker._command_failures.items()
        },
        "background": breaker._background.to_dict(),
    }


def load_state(breaker: AgentBreaker, data: Mapping[str, Any]) -> None:
    """Set ``breaker``'s counters from what ``dump_state`` saved."""
    breaker.tool_calls = int(data["tool_calls"])
    breaker.edits_since_verify = int(data["edits_since_verify"])
    breaker.consecutive_failures = int(data["consecutive_failures"])
    breaker.consecutive_polls = int(data["consecutive_polls"])
    breaker.scope_denials = int(data.get("scope_denials", 0))
    breaker.files = {str(path) for path in data["files"]}
    breaker.warned = bool(data["warned"])
    breaker.cleanup_used = int(data["cleanup_used"])
    trip = data.get("trip")
    breaker.trip = None if trip is None else Trip.from_dict(trip)
    breaker._pending = {
        str(call_id): Pending(str(k), str(s), c, tuple(p), bool(poll))
        for call_id, (k, s, c, p, poll) in data["pending"].items()
    }
    breaker._repeats = {
        str(key): Repeat(int(value[0]), None, value[1], _print_of(value[2:]))
        for key, value in data["repeats"].items()
    }
    breaker._command_failures = {
        str(command): FailureCounts.from_list(counts)
        for command, counts in data["command_failures"].items()
    }
    breaker._background = BackgroundWatch.from_dict(data.get("background", {}))


def _saved_print(printed: FailurePrint | None) -> list[str] | None:
    return None if printed is None else sorted(printed)


def _print_of(rest: list[Any]) -> FailurePrint | None:
    """The failure print of a saved repeat (absent in an older state file)."""
    if not rest or rest[0] is None:
        return None
    return FailurePrint(frozenset(str(line) for line in rest[0]))
