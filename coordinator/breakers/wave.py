"""The wave-level breaker: the in-run breaker of a session, with a wave as the checkpoint.

Fed once per finished wave (``record``), it trips on the first of five triggers, in
spec order: no-progress stall, identical repeated failure, rework storm, cost drift,
merge conflict needing history reconciliation. A trip halts the session with one
actionable line; nothing is resolved automatically. ``resume`` clears ``tripped`` and
keeps the counters, so the same trigger firing again at once re-trips.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from seawall.breakers.signature import (
    FailurePrint,
    failure_print,
    same_failure,
    signature_digest,
)
from seawall.errors import StateError
from seawall.model import WaveBreakerConfig

__all__ = [
    "LastReport",
    "WaveBreaker",
    "WaveBreakerState",
    "WaveCheckpoint",
    "WaveCounters",
    "WaveReport",
    "WaveTrigger",
    "WaveTrip",
]


class WaveTrigger(StrEnum):
    """The five triggers, in the order they are checked."""

    STALL = "stall"
    IDENTICAL_FAILURE = "identical-failure"
    REWORK_STORM = "rework-storm"
    COST_DRIFT = "cost-drift"
    MERGE_CONFLICT = "merge-conflict"


def _empty_counts() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveReport:
    """What one finished wave did, as the session loop saw it.

    ``redispatched``: tasks of this wave that had been dispatched before (a rework
    cycle each). ``failures``: per task, the raw error texts of this cycle (normalized
    here). ``fingerprints``: per task, review-finding fingerprints, compared verbatim.
    ``cost_usd``: cumulative spend so far; ``projected_next_usd``: the estimated cost
    of the next wave. ``tokens``: cumulative input + output tokens of every agent.
    ``conflicts``: merge conflicts that need history reconciliation.
    """

    wave: int
    merged: int = 0
    new_commits: int = 0
    redispatched: tuple[str, ...] = ()
    failures: Mapping[str, tuple[str, ...]] = field(default_factory=_empty_counts)
    fingerprints: Mapping[str, tuple[str, ...]] = field(default_factory=_empty_counts)
    cost_usd: float = 0.0
    projected_next_usd: float | None = None
    tokens: int = 0
    conflicts: tuple[str, ...] = ()
    head: str | None = None  # the commit the session stands on after the wave


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveCheckpoint:
    """Where a tripped session stands: after wave ``wave``, on commit ``head`` (None
    when the trip did not know it)."""

    wave: int
    head: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LastReport:
    """What the counters keep of the last wave's report: enough to re-check the cost
    trigger on ``resume`` (and to trip from it)."""

    wave: int
    cost_usd: float = 0.0
    projected_next_usd: float | None = None
    tokens: int = 0
    head: str | None = None


@dataclass(slots=True, kw_only=True)
class WaveCounters:
    """The breaker's counts across waves: consecutive waves without progress, rework
    cycles and identical-failure cycles per task, each task's last failure signatures,
    and the last wave counted."""

    stall_waves: int = 0
    rework_cycles: dict[str, int] = field(default_factory=dict)
    identical_failure_cycles: dict[str, int] = field(default_factory=dict)
    last_signatures: dict[str, list[str]] = field(default_factory=dict)
    last_wave: int | None = None
    last_report: LastReport | None = None

    def copy(self) -> WaveCounters:
        """A copy sharing no mutable part with this one."""
        return WaveCounters(
            stall_waves=self.stall_waves,
            rework_cycles=dict(self.rework_cycles),
            identical_failure_cycles=dict(self.identical_failure_cycles),
            last_signatures={task: list(sigs) for task, sigs in self.last_signatures.items()},
            last_wave=self.last_wave,
            last_report=self.last_report,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveBreakerState:
    """The wave breaker as the ledger keeps it: its trip, if any, and its counters.

    ``trigger``, ``detail``, ``checkpoint`` and ``tripped_at`` are set while it is
    tripped; ``counters`` are the breaker's own (``WaveBreaker`` reads and writes them).
    """

    tripped: bool = False
    trigger: WaveTrigger | None = None
    detail: str | None = None
    checkpoint: WaveCheckpoint | None = None
    tripped_at: str | None = None
    counters: WaveCounters = field(default_factory=WaveCounters)


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveTrip:
    """A wave-level trip: the trigger, its evidence and the checkpoint to resume from."""

    trigger: WaveTrigger
    detail: str
    checkpoint: WaveCheckpoint
    tripped_at: str

    def line(self) -> str:
        """The one actionable line: what tripped, the evidence, the next action."""
        wave = self.checkpoint.wave
        return (
            f"seawall: wave breaker tripped after wave {wave}: {self.trigger.value}: "
            f"{self.detail}. Fix the cause, then `seawall resume`; or stop with `seawall kill`."
        )


class WaveBreaker:
    """The breaker over waves, enabled by default (``config.enabled=False``
    disables tripping; counting goes on).

    Duties: keep the counters of the five triggers across waves; trip on the first
    trigger that fires and hold that trip until ``resume``; produce the state the
    ledger keeps (``WaveBreakerState``);
    never change anything outside itself.
    """

    def __init__(
        self,
        config: WaveBreakerConfig | None = None,
        *,
        cost_budget_usd: float | None = None,
        token_budget: int | None = None,
        clock: Callable[[], float] = time.time,
        state: WaveBreakerState | None = None,
    ) -> None:
        self.config = config or WaveBreakerConfig()
        self.cost_budget_usd = cost_budget_usd
        self.token_budget = token_budget
        self._clock = clock
        self._listeners: list[Callable[[WaveTrip], None]] = []
        self.trip: WaveTrip | None = None
        self.counters = WaveCounters()
        if state is not None:
            self._load(state)

    @property
    def tripped(self) -> bool:
        return self.trip is not None

    def add_listener(self, listener: Callable[[WaveTrip], None]) -> None:
        """Call ``listener`` with every trip."""
        self._listeners.append(listener)

    def record(self, report: WaveReport) -> WaveTrip | None:
        """Count one finished wave; return the trip if a trigger fired (first wins)."""
        checks = (
            self._stall(report),
            self._identical(report),
            self._rework(report),
            self._cost(report),
            self._conflict(report),
        )
        self.counters.last_wave = report.wave
        self.counters.last_report = LastReport(
            wave=report.wave,
            cost_usd=report.cost_usd,
            projected_next_usd=report.projected_next_usd,
            tokens=report.tokens,
            head=report.head,
        )
        if self.trip is not None or not self.config.enabled:
            return None
        for check in checks:
            if check is not None:
                return self._trip(check[0], check[1], report)
        return None

    def resume(
        self,
        *,
        config: WaveBreakerConfig | None = None,
        cost_budget_usd: float | None = None,
    ) -> WaveTrip | None:
        """Clear the trip, keep the counters, re-check the standing triggers at once.

        A cost already over the (possibly raised) budget re-trips immediately; the
        other triggers re-trip on the next ``record`` if their cause is still there.
        """
        if config is not None:
            self.config = config
        if cost_budget_usd is not None:
            self.cost_budget_usd = cost_budget_usd
        self.trip = None
        report = self.counters.last_report
        if report is None or not self.config.enabled:
            return None
        standing = self._cost(report)
        if standing is not None:
            return self._trip(standing[0], standing[1], report)
        return None

    # -- triggers ---------------------------------------------------------------------

    def _stall(self, report: WaveReport) -> tuple[WaveTrigger, str] | None:
        if report.merged or report.new_commits:
            self.counters.stall_waves = 0
            return None
        self.counters.stall_waves += 1
        stalled = self.counters.stall_waves
        if stalled < self.config.stall_waves:
            return None
        return WaveTrigger.STALL, f"{stalled} consecutive waves merged nothing and made no commit"

    def _identical(self, report: WaveReport) -> tuple[WaveTrigger, str] | None:
        """Errors repeat when they are the same failure (``same_failure``: one added
        warning line does not make a new error); review findings when equal."""
        last = self.counters.last_signatures
        cycles = self.counters.identical_failure_cycles
        fired: tuple[WaveTrigger, str] | None = None
        for task in sorted({*report.failures, *report.fingerprints, *report.redispatched}):
            # a task that ran this wave without failing ends its chain of identical cycles
            texts = report.failures.get(task, ())
            signatures = {_error_key(text) for text in texts}
            signatures |= {f"finding:{fp}" for fp in report.fingerprints.get(task, ())}
            before = last.get(task, ())
            repeated = {s for s in signatures if any(_same(s, old) for old in before)}
            cycles[task] = cycles.get(task, 1) + 1 if repeated else (1 if signatures else 0)
            last[task] = sorted(signatures)
            if fired is None and repeated and cycles[task] >= self.config.identical_failure_cycles:
                which = "finding" if any(s.startswith("finding:") for s in repeated) else "error"
                shown = sorted(repeated)[0]
                if not shown.startswith("finding:"):
                    shown = signature_digest(next(t for t in texts if _error_key(t) == shown))
                fired = (
                    WaveTrigger.IDENTICAL_FAILURE,
                    f"task {task!r} failed with the same {which} signature "
                    f"({shown}) in {cycles[task]} consecutive rework cycles",
                )
        return fired

    def _rework(self, report: WaveReport) -> tuple[WaveTrigger, str] | None:
        cycles = self.counters.rework_cycles
        fired: tuple[WaveTrigger, str] | None = None
        for task in report.redispatched:
            cycles[task] = cycles.get(task, 0) + 1
            if fired is None and cycles[task] > self.config.max_rework_cycles:
                fired = (
                    WaveTrigger.REWORK_STORM,
                    f"task {task!r} re-dispatched {cycles[task]} times "
                    f"(cap {self.config.max_rework_cycles})",
                )
        return fired

    def _cost(self, report: WaveReport | LastReport) -> tuple[WaveTrigger, str] | None:
        tokens = self.token_budget
        if tokens is not None and report.tokens >= tokens:
            return WaveTrigger.COST_DRIFT, f"used {report.tokens} of a {tokens}-token budget"
        budget = self.cost_budget_usd
        if budget is None:
            return None
        if report.cost_usd >= budget:
            return WaveTrigger.COST_DRIFT, f"spent ${report.cost_usd:.2f} of a ${budget:.2f} budget"
        projected = report.projected_next_usd
        if projected is not None and report.cost_usd + projected > budget:
            return (
                WaveTrigger.COST_DRIFT,
                f"spent ${report.cost_usd:.2f}; the next wave's projected ${projected:.2f} "
                f"would cross the ${budget:.2f} budget",
            )
        return None

    def _conflict(self, report: WaveReport) -> tuple[WaveTrigger, str] | None:
        if not self.config.merge_conflict or not report.conflicts:
            return None
        shown = "; ".join(report.conflicts[:3])
        return WaveTrigger.MERGE_CONFLICT, f"merge conflict needs history reconciliation: {shown}"

    def conflict(self, *, wave: int, detail: str, head: str | None = None) -> WaveTrip | None:
        """Trip on a merge that needs history reconciliation, seen in the middle of a wave
        (the target branch moved elsewhere): counters are not touched, since the wave is
        counted when it finishes. None when the breaker or this trigger is disabled."""
        if self.trip is not None or not self.config.enabled or not self.config.merge_conflict:
            return self.trip
        report = WaveReport(wave=wave, conflicts=(detail,), head=head)
        found = self._conflict(report)
        assert found is not None
        return self._trip(found[0], found[1], report)

    # -- state --------------------------------------------------------------------------

    def _trip(self, trigger: WaveTrigger, detail: str, report: WaveReport | LastReport) -> WaveTrip:
        stamp = dt.datetime.fromtimestamp(self._clock(), tz=dt.UTC)
        trip = WaveTrip(
            trigger=trigger,
            detail=detail,
            checkpoint=WaveCheckpoint(wave=report.wave, head=report.head),
            tripped_at=stamp.isoformat(timespec="seconds").replace("+00:00", "Z"),
        )
        self.trip = trip
        for listener in self._listeners:
            listener(trip)
        return trip

    def state(self) -> WaveBreakerState:
        """What the ledger keeps: the trip, if any, and a copy of the counters."""
        trip = self.trip
        if trip is None:
            return WaveBreakerState(counters=self.counters.copy())
        return WaveBreakerState(
            tripped=True,
            trigger=trip.trigger,
            detail=trip.detail,
            checkpoint=trip.checkpoint,
            tripped_at=trip.tripped_at,
            counters=self.counters.copy(),
        )

    def _load(self, state: WaveBreakerState) -> None:
        self.counters = state.counters.copy()
        if state.tripped:
            if state.trigger is None:
                raise StateError("the wave breaker state is unreadable: tripped without a trigger")
            last = self.counters.last_report
            self.trip = WaveTrip(
                trigger=state.trigger,
                detail=str(state.detail),
                checkpoint=state.checkpoint
                or WaveCheckpoint(wave=self.counters.last_wave or (last.wave if last else 0)),
                tripped_at=state.tripped_at or "",
            )


def _error_key(text: str) -> str:
    """An error as the counters keep it: its failure print, one digest per line."""
    return "error:" + " ".join(sorted(failure_print(text)))


def _same(key: str, old: str) -> bool:
    if key.startswith("error:") and old.startswith("error:"):
        return same_failure(_print(old), _print(key))
    return key == old


def _print(key: str) -> FailurePrint:
    return FailurePrint(frozenset(key.removeprefix("error:").split()))
