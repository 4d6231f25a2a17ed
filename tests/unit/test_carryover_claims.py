"""Claims of one filing attempt: taken, waited for while valid, renewed, released.

The in-memory claims host and the filer share one fake clock, so leases run out and
waits add up without any real sleeping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from seawall.adapters.trackers.memory import MemoryClaimsTracker
from seawall.carryover import Carryover, CarryoverFiler, CarryoverKind, RetryPolicy
from seawall.errors import ConfigurationError, TrackerError
from seawall.testing.trackers import TrackerConformance
from seawall.tracker import IssueTracker

WORK = Carryover(plan="demo", task_id="parser", kind=CarryoverKind.FAILED, session="s1", wave=1)
FP = WORK.fingerprint


class Clock:
    """Wall and monotonic time in one; ``sleep`` moves it on and records the wait."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.waits: list[float] = []
        self.on_sleep: Callable[[int], None] = lambda n: None

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds
        self.on_sleep(len(self.waits))


class TestMemoryClaimsConformance(TrackerConformance):
    @pytest.fixture
    def tracker(self) -> Iterator[IssueTracker]:
        with MemoryClaimsTracker() as tracker:
            yield tracker


def setup(**policy: Any) -> tuple[MemoryClaimsTracker, CarryoverFiler, Clock]:
    clock = Clock()
    tracker = MemoryClaimsTracker(clock=clock)
    retry = RetryPolicy(sleep=clock.sleep, clock=clock, **policy)
    return tracker, CarryoverFiler(tracker, session="s1", retry=retry), clock


def operations(tracker: MemoryClaimsTracker) -> list[str]:
    return [call.operation for call in tracker.calls]


def test_a_new_filing_claims_lists_again_and_releases_once_the_issue_exists() -> None:
    tracker, filer, clock = setup()
    result = filer.file(WORK)
    assert result.created and result.error is None
    assert operations(tracker) == [
        "list_issues",
        "take_claim",
        "list_issues",  # nobody can file it now: this listing decides
        "ensure_labels",
        "create_issue",
        "release_claim",
    ]
    assert tracker.claims == {} and clock.waits == []


def test_each_filing_attempt_claims_with_its_own_holder_and_the_policys_lease() -> None:
    tracker, filer, _ = setup(settle=10)
    filer.file(WORK)
    tracker.close_issue(1)
    filer.forget()
    filer.file(WORK)
    takes = [call.args for call in tracker.calls if call.operation == "take_claim"]
    assert [args["ttl"] for args in takes] == [50.0, 50.0]  # 2 * settle + 30
    assert takes[0]["holder"] != takes[1]["holder"]
    assert len(tracker.issues) == 2 and tracker.claims == {}


def test_a_duplicate_in_the_index_takes_no_claim() -> None:
    tracker, filer, _ = setup()
    filer.file(WORK)
    again = CarryoverFiler(tracker, session="s2", retry=filer.retry).file(WORK)
    assert again.skipped == "duplicate"
    assert operations(tracker).count("take_claim") == 1


def test_another_sessions_claim_is_waited_for_only_while_it_is_valid() -> None:
    tracker, filer, clock = setup()
    assert tracker.take_claim(FP, holder="other", ttl=5.0) == 0  # it died holding it
    result = filer.file(WORK)
    assert result.created, result.error
    assert sum(clock.waits) == pytest.approx(5.0), "waited until the claim ran out, no longer"
    assert max(clock.waits) <= filer.retry.max_delay
    assert tracker.claims == {}


def test_a_claim_released_meanwhile_is_taken_at_once_and_the_issue_found() -> None:
    tracker, filer, clock = setup()
    filer.known()  # this session listed long ago
    other = CarryoverFiler(tracker, session="s2", retry=filer.retry).file(WORK)
    assert other.created
    result = filer.file(WORK)
    assert result.skipped == "duplicate" and result.number == other.number
    assert clock.waits == [] and len(tracker.issues) == 1 and tracker.claims == {}


def test_a_claim_left_behind_long_ago_is_taken_over_at_once() -> None:
    tracker, filer, clock = setup()
    tracker.take_claim(FP, holder="crashed", ttl=60.0)
    clock.now += 86_400
    assert filer.file(WORK).created
    assert clock.waits == [] and tracker.claims == {}


def test_a_claim_held_past_the_bound_is_an_error_not_a_second_issue() -> None:
    tracker, filer, clock = setup(settle=1, attempts=2)
    tracker.take_claim(FP, holder="other", ttl=10_000.0)
    result = filer.file(WORK)
    assert result.skipped == "error" and tracker.issues == ()
    assert result.error is not None and "another session has held the claim" in result.error
    assert sum(clock.waits) == pytest.approx(2 * 32.0), "at most attempts leases"
    assert "release_claim" not in operations(tracker)


def test_the_holder_renews_its_lease_before_a_late_retry() -> None:
    tracker, filer, _ = setup(settle=30, attempts=3)
    tracker.fail("create_issue", times=2)  # each answer lost: a settle window each
    result = filer.file(WORK)
    assert result.created, result.error
    assert tracker.count("create_issue") == 3
    # 90 s lease: the second try starts with ~59 s left, the third with ~28 s: renewed
    assert tracker.count("take_claim") == 2
    assert tracker.claims == {}


def test_a_lease_lost_while_retrying_ends_the_filing_without_a_create() -> None:
    tracker, filer, clock = setup(settle=30, attempts=3)
    tracker.fail("create_issue", times=2)

    def stall(waits: int) -> None:
        if waits == 1:  # this process stalls; its claim runs out and another takes it
            clock.now += 1_000
            assert tracker.take_claim(FP, holder="other", ttl=600.0) == 0

    clock.on_sleep = stall
    result = filer.file(WORK)
    assert result.skipped == "error" and result.error is not None
    assert "expired and another session took it" in result.error
    assert tracker.count("create_issue") == 1, "no create without a valid claim"
    assert tracker.count("release_claim") == 0, "an expired claim may be another's"
    assert tracker.claims[FP][0] == "other"


def test_a_failed_release_is_reported_and_the_claim_runs_out() -> None:
    tracker, filer, clock = setup()
    tracker.fail("release_claim")
    result = filer.file(WORK)
    assert result.created and result.error is not None
    assert result.error.startswith("releasing the claim failed: ")
    assert tracker.count("release_claim") == 1, "a delete is sent once"
    tracker.close_issue(result.number or 0)
    clock.now += filer.retry.lease
    again = CarryoverFiler(tracker, session="s2", retry=filer.retry).file(WORK)
    assert again.created and clock.waits == [] and tracker.claims == {}


def test_a_claim_whose_answer_was_lost_is_still_this_attempts() -> None:
    tracker, filer, _ = setup()
    tracker.fail("take_claim", apply=True)
    result = filer.file(WORK)
    assert result.created, result.error
    assert tracker.count("take_claim") == 2 and len(tracker.issues) == 1
    assert tracker.claims == {}


def test_a_failed_listing_after_the_claim_releases_it() -> None:
    tracker, filer, _ = setup(attempts=1)
    filer.known()
    tracker.fail("list_issues", TrackerError("boom", tracker="memory", operation="list issues"))
    result = filer.file(WORK)
    assert result.skipped == "error" and "boom" in (result.error or "")
    assert tracker.count("release_claim") == 1 and tracker.claims == {}


def test_the_lease_is_twice_the_settle_window_and_a_margin() -> None:
    assert RetryPolicy().lease == 90.0
    assert RetryPolicy(settle=0).lease == 30.0
    assert RetryPolicy(settle=1, claim_ttl=5).lease == 5
    with pytest.raises(ConfigurationError, match="claim_ttl"):
        RetryPolicy(settle=30, claim_ttl=60)
