"""``seawall runner status``: the runner's state in one screen, read-only.

Everything shown is derived from the runner's files at the moment of asking: the
queue, its ``blocked_reason`` and override, the breaker and the rate-limit backoff as
the ledger shows them, and the newest lines of ``ticks.jsonl``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from seawall.unattended.breaker import (
    BreakerState,
    BreakerStatus,
    RateLimitStatus,
    evaluate_breaker,
    evaluate_rate_limit,
)
from seawall.unattended.config import RunnerSettings
from seawall.unattended.ledger import ItemHistory, Ledger, item_histories
from seawall.unattended.logs import TickLog
from seawall.unattended.outcomes import Outcome, is_parked
from seawall.unattended.paths import RunnerPaths, format_ts
from seawall.unattended.queue import QueueFile, QueueItem
from seawall.unattended.report import TickReport

__all__ = [
    "BreakerView",
    "ItemState",
    "ItemStatus",
    "ItemView",
    "RateLimitView",
    "RunnerStatus",
    "RunnerStatusDocument",
    "render_status",
    "runner_status",
]


class ItemState(StrEnum):
    PENDING = "pending"  # will be taken by a tick
    RUNNING = "running"  # a tick is running it now
    PARKED = "parked"  # ran and waits for a person; re-enqueue after answering
    GIVEN_UP = "given-up"  # failed max_attempts times


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemStatus:
    item: QueueItem
    state: ItemState
    runs: int
    failures: int
    last_outcome: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerView:
    """The breaker as ``runner status --json`` shows it (``opened_by``: the outcome of
    the newest failed run of the chain)."""

    state: BreakerState
    consecutive_failures: int
    limit: int
    next_probe_at: float | None
    opened_by: str | None
    same_failure: str | None
    distinct_failures: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimitView:
    consecutive: int
    wait_until: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemView:
    """One queue item as ``runner status --json`` shows it."""

    id: str
    plan: str
    state: ItemState
    runs: int
    failures: int
    last_outcome: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerStatusDocument:
    """``seawall runner status --json``."""

    schema: str = field(default="seawall.runner-status/1", init=False)

    dir: str
    now: float
    blocked_reason: str | None
    override: bool
    breaker: BreakerView
    rate_limit: RateLimitView
    items: tuple[ItemView, ...]
    last_ticks: tuple[TickReport, ...]
    unreadable_rows: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerStatus:
    """A snapshot of one runner directory."""

    dir: Path
    now: float
    items: tuple[ItemStatus, ...]
    blocked_reason: str | None
    override: bool
    breaker: BreakerStatus
    rate_limit: RateLimitStatus
    last_ticks: tuple[TickReport, ...]
    unreadable_rows: int

    def document(self) -> RunnerStatusDocument:
        """The snapshot as ``seawall runner status --json`` prints it."""
        breaker = self.breaker
        return RunnerStatusDocument(
            dir=str(self.dir),
            now=self.now,
            blocked_reason=self.blocked_reason,
            override=self.override,
            breaker=BreakerView(
                state=breaker.state,
                consecutive_failures=breaker.consecutive_failures,
                limit=breaker.limit,
                next_probe_at=breaker.next_probe_at,
                opened_by=breaker.opened_by.outcome if breaker.opened_by else None,
                same_failure=breaker.same_failure,
                distinct_failures=breaker.distinct_failures,
            ),
            rate_limit=RateLimitView(
                consecutive=self.rate_limit.consecutive, wait_until=self.rate_limit.wait_until
            ),
            items=tuple(
                ItemView(
                    id=s.item.id,
                    plan=s.item.plan,
                    state=s.state,
                    runs=s.runs,
                    failures=s.failures,
                    last_outcome=s.last_outcome,
                )
                for s in self.items
            ),
            last_ticks=self.last_ticks,
            unreadable_rows=self.unreadable_rows,
        )


def runner_status(
    runner_dir: Path,
    *,
    settings: RunnerSettings,
    clock: Callable[[], float] = time.time,
    last_ticks: int = 5,
) -> RunnerStatus:
    """Read the runner directory and return its state now."""
    paths = RunnerPaths(dir=runner_dir)
    now = clock()
    queue = QueueFile(paths.queue).load()
    read = Ledger(paths.attempted).read()
    window = tuple(r for r in read.rows if r.ts >= now - settings.attempt_window_sec)
    histories = item_histories(read.rows)
    return RunnerStatus(
        dir=runner_dir,
        now=now,
        items=tuple(_item_status(item, histories.get(item.id), settings) for item in queue.items),
        blocked_reason=queue.blocked_reason,
        override=queue.override,
        breaker=evaluate_breaker(
            window,
            now=now,
            limit=settings.breaker_limit,
            cooldown_sec=settings.breaker_cooldown_sec,
        ),
        rate_limit=evaluate_rate_limit(
            window,
            base_sec=settings.rate_limit_backoff_sec,
            max_sec=settings.rate_limit_backoff_max_sec,
        ),
        last_ticks=tuple(TickLog(paths.ticks).read(last=last_ticks)),
        unreadable_rows=read.bad_lines,
    )


def _item_status(
    item: QueueItem, history: ItemHistory | None, settings: RunnerSettings
) -> ItemStatus:
    if history is None:
        return ItemStatus(item=item, state=ItemState.PENDING, runs=0, failures=0, last_outcome=None)
    outcome = history.outcome
    state = ItemState.PENDING
    if outcome == Outcome.RUNNING:
        state = ItemState.RUNNING
    elif outcome is not None and is_parked(outcome):
        state = ItemState.PARKED
    elif 0 < settings.max_attempts <= history.failures:
        state = ItemState.GIVEN_UP
    return ItemStatus(
        item=item,
        state=state,
        runs=history.runs,
        failures=history.failures,
        last_outcome=outcome,
    )


def render_status(status: RunnerStatus) -> str:
    """The snapshot as one screen of text."""
    lines = [f"runner: {status.dir}", _breaker_line(status)]
    lines.append(f"blocked: {status.blocked_reason or 'no'}")
    if status.override:
        lines.append("override: pending (the next tick runs even if the breaker is open)")
    if status.rate_limit.waiting(status.now):
        until = format_ts(status.rate_limit.wait_until or status.now)
        lines.append(
            f"rate limit: {status.rate_limit.consecutive} in a row; no new run until {until}"
        )
    if status.unreadable_rows:
        lines.append(f"attempted.jsonl: {status.unreadable_rows} unreadable line(s) ignored")
    lines.append(f"queue: {len(status.items)} item(s)")
    for s in status.items:
        last = f", last {s.last_outcome}" if s.last_outcome else ""
        lines.append(
            f"  {s.item.id:<24} {s.state:<9} {s.runs} run(s), {s.failures} failed{last}  "
            f"{s.item.plan}"
        )
    lines.append(f"last ticks: {len(status.last_ticks)}")
    lines.extend(f"  {_tick_line(tick)}" for tick in status.last_ticks)
    return "\n".join(lines)


def _breaker_line(status: RunnerStatus) -> str:
    breaker = status.breaker
    count = f"{breaker.consecutive_failures} consecutive failed attempt(s)"
    if breaker.state is BreakerState.DISABLED:
        return f"breaker: disabled (limit 0); {count}"
    line = f"breaker: {breaker.state}; {count}, limit {breaker.limit}"
    if breaker.same_failure is not None and breaker.consecutive_failures > 1:
        line += f", the same failure each time (signature {breaker.same_failure})"
    if breaker.opened_by is not None:
        line += f"; opened by {breaker.opened_by.outcome!r} of {breaker.opened_by.item}"
    if breaker.next_probe_at is not None:
        when = "now" if breaker.next_probe_at <= status.now else format_ts(breaker.next_probe_at)
        line += f"; next probe allowed: {when}"
    return line


def _tick_line(tick: TickReport) -> str:
    parts = [format_ts(tick.ts), str(tick.action)]
    if tick.item:
        parts.append(tick.item)
    if tick.outcome:
        parts.append(f"-> {tick.outcome}")
    parts.append(f"({tick.duration_sec:.1f}s)")
    parts.append(f"failures before: {tick.consecutive_failures_before}")
    if tick.events:
        parts.append(f"[{', '.join(tick.events)}]")
    return " ".join(parts)
