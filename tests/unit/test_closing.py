"""Closing carryovers: landed tasks and duplicates, deduplicated and fault-tolerant."""

from __future__ import annotations

import pytest

from seawall.adapters.trackers.memory import MemoryTracker
from seawall.carryover import (
    Carryover,
    CarryoverFiler,
    CarryoverKind,
    RetryPolicy,
    marker,
    render_body,
)
from seawall.carryover.closing import close_duplicates, close_landed
from seawall.errors import TrackerError


def filer(tracker: MemoryTracker) -> CarryoverFiler:
    return CarryoverFiler(tracker, session="s2", retry=RetryPolicy(settle=0, sleep=lambda s: None))


def failed(task: str = "report", plan: str = "demo") -> Carryover:
    return Carryover(plan=plan, task_id=task, kind=CarryoverKind.FAILED, session="s1", wave=2)


def land(one: CarryoverFiler, task: str = "report") -> list[object]:
    return list(close_landed(one, plan="demo", task=task, commit="abc123", wave=3, branch="main"))


def test_a_landed_task_closes_its_open_carryover_with_the_commit() -> None:
    tracker = MemoryTracker()
    filed = filer(tracker).file(failed())
    (result,) = close_landed(
        filer(tracker), plan="demo", task="report", commit="abc123", wave=3, branch="main"
    )
    assert result.closed and result.number == filed.number and result.error is None
    assert tracker.issues[0].state == "closed"
    (comment,) = tracker.comments(filed.number or 0)
    assert "abc123" in comment and "`main`" in comment and "s2" in comment


def test_closing_again_touches_nothing() -> None:
    tracker = MemoryTracker()
    filer(tracker).file(failed())
    one = filer(tracker)
    assert len(land(one)) == 1
    assert land(one) == [], "the same session does not close twice"
    assert land(filer(tracker)) == [], "a closed issue is not listed, so never touched"
    assert tracker.count("comment") == 1 and tracker.count("close_issue") == 1


def test_other_tasks_and_plans_are_left_open() -> None:
    tracker = MemoryTracker()
    filer(tracker).file(failed("other"))
    filer(tracker).file(failed("report", plan="another-plan"))
    assert land(filer(tracker)) == []
    assert {issue.state for issue in tracker.issues} == {"open"}


def test_a_failed_comment_still_closes_and_says_so() -> None:
    tracker = MemoryTracker()
    filer(tracker).file(failed())
    tracker.fail("comment", TrackerError("403", tracker="memory", operation="comment", status=403))
    (result,) = close_landed(
        filer(tracker), plan="demo", task="report", commit="c", wave=3, branch="main"
    )
    assert result.closed and result.error and "closing comment failed" in result.error
    assert tracker.issues[0].state == "closed"


def test_a_transient_close_fault_is_retried_a_refusal_is_a_result() -> None:
    tracker = MemoryTracker()
    filer(tracker).file(failed())
    tracker.fail("close_issue")  # 502
    (result,) = close_landed(
        filer(tracker), plan="demo", task="report", commit="c", wave=3, branch="main"
    )
    assert result.closed and tracker.count("close_issue") == 2

    tracker = MemoryTracker()
    filer(tracker).file(failed())
    refusal = TrackerError("404", tracker="memory", operation="close issue", status=404)
    tracker.fail("close_issue", refusal)
    (result,) = close_landed(
        filer(tracker), plan="demo", task="report", commit="c", wave=3, branch="main"
    )
    assert not result.closed and result.error and "404" in result.error
    assert tracker.count("close_issue") == 1


def test_a_list_failure_is_a_result_not_an_exception() -> None:
    tracker = MemoryTracker()
    tracker.fail("list_issues", times=5)
    (result,) = close_landed(
        filer(tracker), plan="demo", task="report", commit="c", wave=3, branch="main"
    )
    assert not result.closed and result.error and "listing carryovers" in result.error


@pytest.mark.parametrize("copies", [2, 3])
def test_duplicates_are_closed_with_a_link_to_the_oldest(copies: int) -> None:
    tracker = MemoryTracker()
    work = failed()
    for _ in range(copies):
        tracker.create_issue(title="dup", body=render_body(work), labels=["carryover"])
    other = tracker.create_issue(title="x", body=marker("f" * 16), labels=["carryover"])
    results = close_duplicates(filer(tracker))
    assert [r.number for r in results] == list(range(2, copies + 1))
    assert all(r.closed and r.duplicate_of == 1 for r in results)
    open_ = [i.number for i in tracker.issues if i.state == "open"]
    assert open_ == [1, other.number]
    assert all("Duplicate of #1" in tracker.comments(n)[0] for n in range(2, copies + 1))
    assert close_duplicates(filer(tracker)) == []
