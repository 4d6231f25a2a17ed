"""Failure signatures of session runs, and the runner breaker telling one failure
repeated from failures of their own."""

from __future__ import annotations

import itertools

from seawall.session.limits import format_reset
from seawall.unattended.breaker import BreakerState, breaker_reason, evaluate_breaker
from seawall.unattended.failure import resume_after, run_failure
from seawall.unattended.ledger import AttemptRow, read_row, row_line

_ids = itertools.count()

EXPIRED = (
    "seawall: session fix-{item}-20261201-0930{n} on /srv/{item}\n"
    "seawall: wave 1: 1 agent(s), worktree, enforcement warn\n"
    "seawall: W1 {item}: finished after 0 turns, 0 tool calls, $0.00, 0.{n}s\n"
    "error: W1 {item}: the agent could not start: claude exited 1: "
    "Invalid API key · token expired at 2026-12-01T09:3{n}:00Z\n"
)


def test_the_same_failure_of_different_items_has_one_signature() -> None:
    first = run_failure(EXPIRED.format(item="parser", n=1))
    second = run_failure(EXPIRED.format(item="docs-site", n=7))
    assert first is not None and second is not None
    assert first.signature == second.signature
    assert first.line.startswith("the agent could not start: claude exited 1: Invalid API key")


def test_different_failures_have_different_signatures() -> None:
    expired = run_failure(EXPIRED.format(item="parser", n=1))
    disk = run_failure("seawall: wave 1: 2 agent(s)\nerror: No space left on device\n")
    assert expired is not None and disk is not None
    assert expired.signature != disk.signature
    assert disk.line == "No space left on device"


def test_output_with_no_error_line_has_no_signature() -> None:
    assert run_failure("seawall: session s on /r\nseawall: wave 1: merged 1 agent(s)\n") is None
    assert run_failure("") is None


def failed(ts: float, signature: str | None, item: str) -> AttemptRow:
    return AttemptRow(
        item=item, task=f"t{next(_ids)}", outcome="failed", ts=ts, signature=signature
    )


def test_an_open_breaker_says_when_every_failure_was_the_same() -> None:
    rows = [failed(float(n), "abc123", f"item-{n}") for n in range(3)]
    status = evaluate_breaker(rows, now=5.0, limit=3, cooldown_sec=100.0)
    assert status.state is BreakerState.OPEN
    assert status.same_failure == "abc123" and status.distinct_failures == 1
    reason = breaker_reason(status, window_sec=86_400.0)
    assert "3 consecutive failed attempts (limit 3, window 1 days), the same failure each" in (
        reason
    )


def test_different_failures_still_count_and_are_called_different() -> None:
    rows = [failed(1.0, "aaa", "x"), failed(2.0, "bbb", "y"), failed(3.0, "aaa", "z")]
    status = evaluate_breaker(rows, now=5.0, limit=3, cooldown_sec=100.0)
    assert status.state is BreakerState.OPEN  # every failure counts, the same or not
    assert status.same_failure is None and status.distinct_failures == 2
    assert ", 2 different failures; opened by" in breaker_reason(status, window_sec=86_400.0)


def test_a_failure_without_a_signature_leaves_the_sameness_unknown() -> None:
    rows = [failed(1.0, "aaa", "x"), failed(2.0, None, "y"), failed(3.0, "aaa", "z")]
    status = evaluate_breaker(rows, now=5.0, limit=3, cooldown_sec=100.0)
    assert status.same_failure is None and status.distinct_failures == 0
    reason = breaker_reason(status, window_sec=86_400.0)
    assert "failures;" not in reason and "same failure" not in reason


def test_the_signature_survives_the_ledger_row() -> None:
    row = failed(1.0, "abc123", "x")
    assert read_row(row_line(row).decode()).signature == "abc123"
    assert read_row(row_line(failed(1.0, None, "x")).decode()).signature is None


def test_the_reset_a_limit_halt_names_is_read_back() -> None:
    reset = 1796508960.0
    output = (
        "seawall: wave 1: a met openai's usage limit, which resets at "
        f"{format_reset(reset)} (180 minutes away, past max_wait (30 minutes)); halted. "
        f"Next: `seawall resume` after {format_reset(reset)}: the paused agents run again\n"
    )
    assert resume_after(output) == reset
    assert resume_after("halted: the wave breaker tripped\n") is None
