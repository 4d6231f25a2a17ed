"""The runner breaker and the rate-limit backoff, computed from ledger rows."""

from __future__ import annotations

import itertools

import pytest

from seawall.unattended.breaker import (
    BreakerState,
    BreakerStatus,
    consecutive_failures,
    evaluate_breaker,
    evaluate_rate_limit,
)
from seawall.unattended.ledger import AttemptRow, group_runs

_ids = itertools.count()


def row(
    outcome: str, ts: float, *, task: str | None = None, gate: str | None = None, item: str = "a"
) -> AttemptRow:
    return AttemptRow(
        item=item, task=task or f"t{next(_ids)}", outcome=outcome, ts=ts, publish_gate=gate
    )


def count(outcomes: list[str]) -> int:
    rows = [row(o, float(i)) for i, o in enumerate(outcomes)]
    return consecutive_failures(group_runs(rows))[0]


def breaker(
    rows: list[AttemptRow], now: float, *, limit: int = 3, cooldown: float = 100.0
) -> BreakerStatus:
    return evaluate_breaker(rows, now=now, limit=limit, cooldown_sec=cooldown)


def test_three_consecutive_failures_open_the_breaker() -> None:
    rows = [row("failed", 1.0), row("timed-out", 2.0)]
    assert breaker(rows, 3.0).state is BreakerState.CLOSED
    rows.append(row("failed", 3.0))
    status = breaker(rows, 4.0)
    assert status.state is BreakerState.OPEN
    assert status.consecutive_failures == 3
    assert not status.allows_work
    assert status.opened_by is not None and status.opened_by.last_row is rows[-1]
    assert status.next_probe_at == 103.0


def test_a_success_ends_the_chain() -> None:
    assert count(["failed", "failed", "done", "failed"]) == 1
    assert count(["failed", "failed", "partial"]) == 0


@pytest.mark.parametrize("parked", ["needs-input", "awaiting-answer", "verification-failed"])
@pytest.mark.parametrize("position", [0, 1, 2, 3])
def test_parked_rows_end_the_chain_in_every_position(parked: str, position: int) -> None:
    outcomes = ["failed", "failed", "failed"]
    outcomes.insert(position, parked)
    # Only the failures newer than the parked row count.
    assert count(outcomes) == 3 - position


@pytest.mark.parametrize("gate", ["remote", "push", "pr-create"])
@pytest.mark.parametrize("position", [0, 1, 2, 3])
def test_environmental_publish_refusals_count_in_every_position(gate: str, position: int) -> None:
    rows = [row("failed", float(i)) for i in range(3)]
    rows.insert(position, row("verification-failed", 0.5, gate=gate))
    assert consecutive_failures(group_runs(rows))[0] == 4


@pytest.mark.parametrize(
    "skipped", ["blocked-breaker", "blocked-rate-limit", "died", "rate-limited"]
)
@pytest.mark.parametrize("position", [0, 1, 2, 3])
def test_skipped_rows_neither_count_nor_end_a_chain(skipped: str, position: int) -> None:
    outcomes = ["failed", "failed", "failed"]
    outcomes.insert(position, skipped)
    assert count(outcomes) == 3


@pytest.mark.parametrize("skipped", ["blocked-breaker", "died", "rate-limited"])
def test_skipped_rows_do_not_pass_for_the_success_that_ends_a_chain(skipped: str) -> None:
    assert count(["done", "failed", skipped, skipped, "failed"]) == 2
    assert count(["failed", "failed", skipped, "done", skipped]) == 0


def test_one_run_with_two_rows_counts_once() -> None:
    rows = [
        row("running", 1.0, task="x"),
        row("timed-out", 2.0, task="x"),
        row("failed", 3.0, task="y"),
        row("failed", 9.0, task="x"),  # a later tick retired run x with its outcome
    ]
    assert consecutive_failures(group_runs(rows))[0] == 2
    assert breaker(rows, 10.0).state is BreakerState.CLOSED


def test_a_run_retired_with_success_ends_the_chain_at_its_own_position() -> None:
    rows = [
        row("failed", 1.0, task="a"),
        row("timed-out", 2.0, task="x"),
        row("failed", 3.0, task="b"),
        row("failed", 4.0, task="c"),
        row("done", 5.0, task="x"),  # run x started before b and c
    ]
    assert consecutive_failures(group_runs(rows))[0] == 2


def test_the_limit_zero_disables_the_breaker() -> None:
    rows = [row("failed", float(i)) for i in range(10)]
    status = breaker(rows, 11.0, limit=0)
    assert status.state is BreakerState.DISABLED
    assert status.allows_work
    assert status.consecutive_failures == 10


def test_cooldown_half_opens_for_one_probe() -> None:
    rows = [row("failed", float(i)) for i in (1, 2, 3)]
    assert breaker(rows, 102.9).state is BreakerState.OPEN
    half = breaker(rows, 103.0)
    assert half.state is BreakerState.HALF_OPEN and half.allows_work
    # The probe's ``running`` row is the newest attempt: the breaker is open again.
    rows.append(row("running", 103.0, task="probe"))
    assert breaker(rows, 104.0).state is BreakerState.OPEN


def test_a_failed_probe_reopens_for_another_cooldown() -> None:
    rows = [row("failed", float(i)) for i in (1, 2, 3)]
    rows += [row("running", 103.0, task="p"), row("failed", 150.0, task="p")]
    status = breaker(rows, 151.0)
    assert status.state is BreakerState.OPEN
    assert status.consecutive_failures == 4
    assert status.next_probe_at == 250.0
    assert breaker(rows, 250.0).state is BreakerState.HALF_OPEN


def test_a_successful_probe_closes() -> None:
    rows = [row("failed", float(i)) for i in (1, 2, 3)]
    rows += [row("running", 103.0, task="p"), row("done", 150.0, task="p")]
    status = breaker(rows, 151.0)
    assert status.state is BreakerState.CLOSED
    assert status.consecutive_failures == 0
    assert status.next_probe_at is None


def test_blocked_rows_do_not_move_the_cooldown_clock() -> None:
    rows = [row("failed", float(i)) for i in (1, 2, 3)]
    rows += [row("blocked-breaker", t) for t in (10.0, 50.0, 99.0, 102.0)]
    status = breaker(rows, 103.0)
    assert status.clock_ts == 3.0
    assert status.state is BreakerState.HALF_OPEN


def test_rows_outside_the_window_are_not_given_and_blocked_rows_cannot_push_failures_out() -> None:
    # The window is by time, not by a number of rows: many blocked rows change nothing.
    rows = [row("failed", float(i)) for i in (1, 2, 3)]
    rows += [row("blocked-breaker", 3.0 + i / 1000) for i in range(500)]
    assert breaker(rows, 50.0).consecutive_failures == 3


def test_rate_limit_backoff_doubles_per_consecutive_limit() -> None:
    rows: list[AttemptRow] = []
    waits = []
    for i in range(6):
        rows.append(row("rate-limited", 1000.0 * i))
        status = evaluate_rate_limit(rows, base_sec=60.0, max_sec=900.0)
        waits.append(status.backoff_sec)
        assert status.wait_until == 1000.0 * i + status.backoff_sec
    assert waits == [60.0, 120.0, 240.0, 480.0, 900.0, 900.0]


def test_rate_limit_streak_skips_blocked_and_died_and_ends_at_other_outcomes() -> None:
    rows = [
        row("rate-limited", 1.0),
        row("failed", 2.0),
        row("rate-limited", 3.0),
        row("blocked-rate-limit", 4.0),
        row("died", 5.0),
        row("rate-limited", 6.0),
        row("blocked-rate-limit", 7.0),
    ]
    status = evaluate_rate_limit(rows, base_sec=10.0, max_sec=1000.0)
    assert status.consecutive == 2
    assert status.wait_until == 6.0 + 20.0
    assert status.waiting(25.9) and not status.waiting(26.0)
    rows.append(row("done", 8.0))
    assert evaluate_rate_limit(rows, base_sec=10.0, max_sec=1000.0).wait_until is None


def test_a_rate_limited_run_that_named_its_reset_waits_until_then() -> None:
    named = AttemptRow(
        item="a", task="t-reset", outcome="rate-limited", ts=100.0, resume_after=7300.0
    )
    rows = [row("rate-limited", 50.0), named]
    status = evaluate_rate_limit(rows, base_sec=60.0, max_sec=900.0)
    # the reset the session named, not the doubling (120 s) nor its cap
    assert status.consecutive == 2 and status.wait_until == 7300.0
    assert status.backoff_sec == 7200.0
    assert status.waiting(7299.0) and not status.waiting(7300.0)


def test_rate_limits_do_not_count_toward_the_breaker() -> None:
    rows = [row("rate-limited", float(i)) for i in range(10)]
    assert breaker(rows, 11.0).state is BreakerState.CLOSED
