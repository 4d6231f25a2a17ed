"""The in-memory tracker: conformance, recording and fault injection."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from seawall.adapters.trackers.memory import MemoryTracker
from seawall.errors import TrackerError
from seawall.testing.trackers import TrackerConformance
from seawall.tracker import IssueTracker, TrackerUnavailableError


class TestMemoryConformance(TrackerConformance):
    @pytest.fixture
    def tracker(self) -> Iterator[IssueTracker]:
        with MemoryTracker() as tracker:
            yield tracker


def test_records_every_call_with_its_arguments() -> None:
    tracker = MemoryTracker()
    tracker.ensure_labels(["carryover"])
    issue = tracker.create_issue(title="t", body="b", labels=["carryover"])
    tracker.comment(issue.number, "again")
    tracker.list_issues("carryover")
    assert [call.operation for call in tracker.calls] == [
        "ensure_labels",
        "create_issue",
        "comment",
        "list_issues",
    ]
    assert tracker.calls[1].args["title"] == "t"
    assert tracker.comments(issue.number) == ("again",)


def test_apply_then_fail_keeps_the_write() -> None:
    tracker = MemoryTracker()
    tracker.fail("create_issue", apply=True)
    with pytest.raises(TrackerUnavailableError):
        tracker.create_issue(title="t", body="b", labels=["carryover"])
    assert [issue.title for issue in tracker.issues] == ["t"]
    assert tracker.create_issue(title="u", body="b", labels=[]).number == 2


def test_fault_without_apply_changes_nothing_and_is_used_once() -> None:
    tracker = MemoryTracker()
    error = TrackerError("denied", tracker="memory", operation="create issue", status=403)
    tracker.fail("create_issue", error, times=2)
    for _ in range(2):
        with pytest.raises(TrackerError, match="denied"):
            tracker.create_issue(title="t", body="b", labels=[])
    assert tracker.issues == ()
    assert tracker.create_issue(title="t", body="b", labels=[]).number == 1


def test_closed_issues_are_not_listed() -> None:
    tracker = MemoryTracker()
    issue = tracker.create_issue(title="t", body="b", labels=["carryover"])
    tracker.close_issue(issue.number)
    assert tracker.list_issues("carryover") == []
