"""What stays open after a trip, in hook mode, each exception with its bound.

- Edits of exactly the session's stop note (BLOCKED.md), on every trip.
- After unverified-edits, the one trip with a way out: reading (read tools, shell
  commands that only read) and a verify run alone; edits stay refused until a check
  passes, and the refusal says so.
- The cleanup allowance, on every trip: six single plain git reads in all (what the
  agents' git rule, ``seawall.scope.gitpolicy``, allows).

``after_trip`` decides; the breaker applies the effect (count the call, or spend one
cleanup command).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from seawall.breakers.commands import cleanup_refusal, reads_only, verify_run
from seawall.breakers.memory import is_stop_note
from seawall.breakers.polls import POLL_TOOLS
from seawall.breakers.trip import CLEANUP_ALLOWANCE, Admission, Trip
from seawall.events import READ_TOOLS, ToolCall, edited_paths, shell_command

__all__ = ["EDIT_TRIP_REFUSAL", "Effect", "after_trip"]

OPEN_AFTER_EDIT_TRIP = (
    READ_TOOLS
    | POLL_TOOLS
    | frozenset(
        {"TodoWrite", "WebFetch", "WebSearch", "ListMcpResourcesTool", "ReadMcpResourceTool"}
    )
)
EDIT_TRIP_REFUSAL = (
    "Edits are blocked until a test or build run passes or fails otherwise than before; "
    "reading and checking stay open."
)


class Effect(Enum):
    """What the breaker does with an admitted call after a trip."""

    NONE = "none"
    COUNT = "count"  # counted like any call (its result is observed)
    CLEANUP = "cleanup"  # spends one command of the cleanup allowance


def after_trip(
    call: ToolCall,
    trip: Trip,
    *,
    agent: str,
    cleanup_used: int,
    stop_note: Path | None,
    cwd: Path | None,
) -> tuple[Admission, Effect]:
    """The admission of ``call`` once ``trip`` has fired, and its effect."""
    paths = edited_paths(call)
    if paths and all(is_stop_note(path, stop_note, cwd) for path in paths):
        reason = "BLOCKED.md stays open after a trip"
        return Admission(allowed=True, reason=reason, trip=trip), Effect.NONE
    command = shell_command(call)
    if trip.self_service:
        if command is not None and verify_run(command):
            reason = "a verify run may clear this trip"
            return Admission(allowed=True, reason=reason, trip=trip), Effect.COUNT
        if reads_only(command) if command is not None else call.name in OPEN_AFTER_EDIT_TRIP:
            return Admission(allowed=True, reason="reading stays open", trip=trip), Effect.COUNT
        if command is None:
            reason = f"{trip.message(agent)} {EDIT_TRIP_REFUSAL}"
            return Admission(allowed=False, reason=reason, trip=trip), Effect.NONE
    if command is None:
        return Admission(allowed=False, reason=trip.message(agent), trip=trip), Effect.NONE
    refusal = cleanup_refusal(command)
    if refusal is not None:
        extra = f" {EDIT_TRIP_REFUSAL}" if trip.self_service else ""
        reason = f"{trip.message(agent)} {refusal}.{extra}"
        return Admission(allowed=False, reason=reason, trip=trip), Effect.NONE
    if cleanup_used >= CLEANUP_ALLOWANCE:
        reason = f"{trip.message(agent)} The cleanup allowance is spent."
        return Admission(allowed=False, reason=reason, trip=trip), Effect.NONE
    left = CLEANUP_ALLOWANCE - cleanup_used - 1
    reason = f"cleanup command allowed after {trip.kind.label} ({left} left; the trip stays)"
    return Admission(allowed=True, reason=reason, trip=trip, cleanup=True), Effect.CLEANUP
