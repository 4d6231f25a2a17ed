"""Carryover filing: rendering, fingerprints, dedup, faults and retries (memory tracker)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seawall.adapters.trackers.memory import MemoryTracker
from seawall.carryover import (
    TITLE_LIMIT,
    Carryover,
    CarryoverKind,
    Priority,
    file_carryover,
    find_marker,
    fingerprint,
    render_body,
    render_title,
)
from seawall.errors import ConfigurationError, TrackerError
from seawall.telemetry import CarryoverFiled, EventLog, read_events
from seawall.tracker import Issue, TrackerRateLimitError
from tests.fakes.filing import Sleeps, quick_filer


def work(task: str = "parser", kind: CarryoverKind = CarryoverKind.SPIRAL, **kw: Any) -> Carryover:
    fields: dict[str, Any] = {"plan": "plan-a", "session": "s1", "wave": 2, **kw}
    return Carryover(task_id=task, kind=kind, **fields)


# -- rendering ---------------------------------------------------------------------------


def test_title_names_kind_and_task() -> None:
    assert render_title(work(description="fix the parser")) == "[Carryover] [SPIRAL] fix the parser"
    assert render_title(work(kind=CarryoverKind.FAILED)) == "[Carryover] [FAILED] parser"


@given(st.text(min_size=1, max_size=400))
def test_title_is_one_line_of_at_most_100_characters(description: str) -> None:
    title = render_title(work(description=description))
    assert len(title) <= TITLE_LIMIT
    assert "\n" not in title and title.startswith("[Carryover] [SPIRAL]")


def test_long_title_is_cut_with_an_ellipsis() -> None:
    title = render_title(work(description="x" * 300))
    assert len(title) == TITLE_LIMIT and title.endswith("…")


def test_body_carries_evidence_session_wave_and_marker() -> None:
    carry = work(
        tried="narrowed scope twice",
        spiral_verdict="src/p.py changed in 4 checkpoints",
        error_signature="AssertionError: x",
        remaining="the tokenizer",
        priority=Priority.MEDIUM,
    )
    body = render_body(carry)
    for text in ("narrowed scope twice", "4 checkpoints", "AssertionError: x", "REMAINING"):
        assert text in body
    assert "`s1`, wave 2" in body
    assert find_marker(body) == carry.fingerprint
    assert body.rstrip().endswith(f"<!-- seawall:carryover {carry.fingerprint} -->")


def test_labels_cover_type_priority_and_status() -> None:
    assert work().labels() == ("carryover", "priority:high", "status:spiral")


def test_fingerprint_ignores_wording_but_not_identity() -> None:
    base = work(description="fix it", tried="a").fingerprint
    assert work(description="please fix the thing", tried="b", session="s9").fingerprint == base
    assert work(kind=CarryoverKind.FAILED).fingerprint != base
    assert work(task="other").fingerprint != base
    assert work(plan="plan-b").fingerprint != base
    assert fingerprint(plan="plan-a", task_id="parser", kind="spiral") == base
    assert len(base) == 16


def test_empty_identity_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        work(task=" ")


# -- filing ------------------------------------------------------------------------------


def test_lists_once_per_session_and_stays_current() -> None:
    tracker = MemoryTracker()
    session = quick_filer(tracker)
    results = [session.file(work(task=f"t{i}")) for i in range(5)]
    assert all(r.created for r in results)
    again = session.file(work(task="t3"))
    assert again.skipped == "duplicate" and again.number == results[3].number
    assert tracker.count("list_issues") == 1
    assert tracker.count("create_issue") == 5
    assert tracker.count("ensure_labels") == 1
    assert tracker.count("comment") == 0, "no 'seen again' note on our own issue"


def test_duplicate_from_an_earlier_session_gets_one_comment_per_session() -> None:
    tracker = MemoryTracker()
    first = file_carryover(tracker, work())
    later = quick_filer(tracker)
    a, b = later.file(work()), later.file(work())
    assert (a.skipped, b.skipped) == ("duplicate", "duplicate")
    assert a.number == b.number == first.number
    assert len(tracker.comments(first.number or 0)) == 1
    assert "s1" in tracker.comments(first.number or 0)[0]


def test_closed_issue_does_not_count_as_duplicate() -> None:
    tracker = MemoryTracker()
    first = file_carryover(tracker, work())
    tracker.close_issue(first.number or 0)
    second = file_carryover(tracker, work())
    assert second.created and second.number != first.number


def test_apply_then_502_does_not_make_a_second_issue() -> None:
    tracker, sleeps = MemoryTracker(), Sleeps()
    tracker.fail("create_issue", apply=True)
    result = quick_filer(tracker, sleeps).file(work())
    assert result.created and result.number == 1
    assert len(tracker.issues) == 1
    assert tracker.count("create_issue") == 1
    assert tracker.count("list_issues") == 2, "lists again before retrying"
    assert sleeps == [0.01]


def test_a_lost_502_is_retried_after_listing_again() -> None:
    tracker, sleeps = MemoryTracker(), Sleeps()
    tracker.fail("create_issue")
    result = quick_filer(tracker, sleeps).file(work())
    assert result.created and len(tracker.issues) == 1
    assert tracker.count("create_issue") == 2
    assert tracker.count("list_issues") == 2


def test_retries_are_bounded_with_backoff() -> None:
    tracker, sleeps = MemoryTracker(), Sleeps()
    tracker.fail("create_issue", times=10)
    result = quick_filer(tracker, sleeps).file(work())
    assert result.skipped == "error" and not result.created
    assert tracker.count("create_issue") == 3
    assert sleeps == [0.01, 0.02, 0.01]
    assert result.error is not None and "memory: create_issue failed" in result.error


def test_a_refused_create_is_not_retried() -> None:
    tracker = MemoryTracker()
    tracker.fail(
        "create_issue",
        TrackerError("403 Forbidden", tracker="memory", operation="create issue", status=403),
    )
    result = quick_filer(tracker).file(work())
    assert result.skipped == "error"
    assert result.error == "memory: create issue failed: 403 Forbidden"
    assert tracker.count("create_issue") == 1 and tracker.issues == ()


def test_a_short_rate_limit_is_waited_out_a_long_one_is_an_error() -> None:
    tracker, sleeps = MemoryTracker(), Sleeps()
    limited = TrackerRateLimitError(
        "429", tracker="memory", operation="list issues", status=429, retry_after=2
    )
    tracker.fail("list_issues", limited)
    assert quick_filer(tracker, sleeps).file(work()).created
    assert sleeps == [2]

    tracker, sleeps = MemoryTracker(), Sleeps()
    hour = TrackerRateLimitError(
        "rate limited", tracker="memory", operation="list issues", status=403, retry_after=3600
    )
    tracker.fail("list_issues", hour)
    result = quick_filer(tracker, sleeps).file(work())
    assert result.skipped == "error" and "rate limited" in (result.error or "")
    assert sleeps == [] and tracker.count("list_issues") == 1


def test_a_list_failure_is_an_error_result_and_the_next_filing_lists_again() -> None:
    tracker = MemoryTracker()
    tracker.fail("list_issues", times=3)
    session = quick_filer(tracker)
    assert session.file(work()).skipped == "error"
    assert tracker.count("list_issues") == 3
    assert session.file(work()).created
    assert tracker.count("list_issues") == 4


def test_a_failed_note_keeps_the_duplicate_and_is_not_retried() -> None:
    tracker = MemoryTracker()
    file_carryover(tracker, work())
    tracker.fail(
        "comment", TrackerError("boom", tracker="memory", operation="comment", status=500), times=5
    )
    session = quick_filer(tracker)
    first, second = session.file(work()), session.file(work())
    assert first.skipped == "duplicate" and first.error and "boom" in first.error
    assert second.skipped == "duplicate" and second.error is None
    assert tracker.count("comment") == 1


class Broken(MemoryTracker):
    def list_issues(self, label: str) -> list[Issue]:
        raise KeyError("bug in a third-party adapter")


def test_never_raises_even_on_an_adapter_bug() -> None:
    result = file_carryover(Broken(), work())
    assert result.skipped == "error"
    assert result.error is not None and "KeyError" in result.error and "memory" in result.error


def test_every_filing_is_recorded_in_telemetry(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", session="s1")
    session = quick_filer(MemoryTracker(), events=log)
    session.file(work())
    session.file(work())
    records = list(read_events(tmp_path / "events.jsonl", CarryoverFiled))
    assert [r.outcome for r in records] == ["created", "duplicate"]
    assert records[0].number == 1 and records[0].tracker == "memory"
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["carryover", "carryover"]


def test_issues_without_a_marker_are_ignored() -> None:
    tracker = MemoryTracker()
    tracker.create_issue(title="[Carryover] by hand", body="no marker", labels=["carryover"])
    result = file_carryover(tracker, work())
    assert result.created and result.number == 2
