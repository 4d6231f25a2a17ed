"""An agent breaker's counters as one record, for hook processes that resume it.

The record is converted by the codec (``seawall.codec``) like every other record;
its JSON shape is the one schema 2 has always had: a pending call and a repeat are
short arrays, a command's failures a list of ``[failure print, count]`` pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from seawall.breakers.memory import FailureCounts, Pending, Repeat, Seen
from seawall.breakers.polls import BackgroundWatch
from seawall.breakers.signature import FailurePrint
from seawall.breakers.trip import Trip

SCHEMA = 2

# key, what is shown of the call, its shell command, the paths it touches, a poll?
SavedPending = tuple[str, str, str | None, tuple[str, ...], bool]
# streak, digest of the last successful result, the last failure's print
SavedRepeat = tuple[int, str | None, tuple[str, ...] | None]
SavedFailures = tuple[tuple[tuple[str, ...], int], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedWatch:
    """The file names the agent's background commands write."""

    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedBreaker:
    """Everything needed to resume an agent breaker's counting in another process."""

    schema: int = SCHEMA
    agent: str = "TASK"
    started_at: float
    tool_calls: int
    edits_since_verify: int
    consecutive_failures: int
    consecutive_polls: int
    scope_denials: int = 0
    last_verify: str | None = None  # the last test or build command the agent ran
    files: tuple[str, ...]
    warned: bool
    cleanup_used: int
    trip: Trip | None = None
    pending: dict[str, SavedPending] = field(default_factory=dict)
    repeats: dict[str, SavedRepeat] = field(default_factory=dict)
    command_failures: dict[str, SavedFailures] = field(default_factory=dict)
    background: SavedWatch = field(default_factory=SavedWatch)


class Counters(Protocol):
    """The counters of a breaker that ``dump_state`` saves and ``load_state`` sets (the
    ``AgentBreaker``'s own, named here so this module need not import it)."""

    agent: str
    _started: float
    tool_calls: int
    edits_since_verify: int
    consecutive_failures: int
    consecutive_polls: int
    scope_denials: int
    last_verify: str | None
    files: set[str]
    warned: bool
    cleanup_used: int
    trip: Trip | None
    _pending: dict[str, Pending]
    _repeats: dict[str, Repeat | Seen]
    _command_failures: dict[str, FailureCounts]
    _background: BackgroundWatch


def dump_state(breaker: Counters) -> SavedBreaker:
    """The record of ``breaker``'s counters."""
    return SavedBreaker(
        agent=breaker.agent,
        started_at=breaker._started,
        tool_calls=breaker.tool_calls,
        edits_since_verify=breaker.edits_since_verify,
        consecutive_failures=breaker.consecutive_failures,
        consecutive_polls=breaker.consecutive_polls,
        scope_denials=breaker.scope_denials,
        last_verify=breaker.last_verify,
        files=tuple(sorted(breaker.files)),
        warned=breaker.warned,
        cleanup_used=breaker.cleanup_used,
        trip=breaker.trip,
        pending=dict(breaker._pending),
        repeats={key: _saved_repeat(Repeat.of(memory)) for key, memory in breaker._repeats.items()},
        command_failures={
            command: tuple((tuple(sorted(seen)), count) for seen, count in counts.clusters)
            for command, counts in breaker._command_failures.items()
        },
        background=SavedWatch(names=breaker._background.names),
    )


def load_state(breaker: Counters, saved: SavedBreaker) -> None:
    """Set ``breaker``'s counters from a record ``dump_state`` made."""
    breaker.tool_calls = saved.tool_calls
    breaker.edits_since_verify = saved.edits_since_verify
    breaker.consecutive_failures = saved.consecutive_failures
    breaker.consecutive_polls = saved.consecutive_polls
    breaker.scope_denials = saved.scope_denials
    breaker.last_verify = saved.last_verify
    breaker.files = set(saved.files)
    breaker.warned = saved.warned
    breaker.cleanup_used = saved.cleanup_used
    breaker.trip = saved.trip
    breaker._pending = {
        call_id: (key, shown, command, tuple(paths), poll)
        for call_id, (key, shown, command, paths, poll) in saved.pending.items()
    }
    breaker._repeats = {
        key: Repeat(streak, None, digest, _print_of(printed), printed is not None)
        for key, (streak, digest, printed) in saved.repeats.items()
    }
    breaker._command_failures = {
        command: FailureCounts([(FailurePrint(frozenset(seen)), n) for seen, n in clusters])
        for command, clusters in saved.command_failures.items()
    }
    breaker._background = BackgroundWatch(set(saved.background.names))


def _saved_repeat(repeat: Repeat) -> SavedRepeat:
    return (repeat.streak, repeat.result_digest(), _saved_print(repeat.failure_print()))


def _saved_print(printed: FailurePrint | None) -> tuple[str, ...] | None:
    return None if printed is None else tuple(sorted(printed))


def _print_of(saved: tuple[str, ...] | None) -> FailurePrint | None:
    return None if saved is None else FailurePrint(frozenset(saved))
