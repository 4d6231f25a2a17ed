"""The ``IssueTracker`` conformance kit: the tests every tracker adapter must pass.

Subclass ``TrackerConformance`` in a test module and provide a ``tracker`` fixture that
yields a fresh, empty tracker (and closes it afterwards)::

    from seawall.testing.trackers import TrackerConformance

    class TestMyTracker(TrackerConformance):
        @pytest.fixture
        def tracker(self, tmp_path):
            with MyTracker(...) as tracker:
                yield tracker

For a tracker that pages its lists, configure a page size below ``many`` so the
pagination test reads several pages. Set ``secret`` to the token the fixture used so
the kit checks it never appears in a repr or an error.

An HTTP adapter also provides ``fault_hook`` (its fake host, e.g. a service built on
``seawall.testing.http.FakeService``) and ``second_tracker`` (another client of the same
host): the fault tests of ``TrackerFaultKit`` then run too (5xx, a lost answer, a
create applied after the client's timeout, rate limits, 401, labels created once,
every page read). A host that holds claims is checked too: leases, take-overs and
releases, and on every tracker a carryover filed, closed and filed again by two filers
at once, with one issue each time and no claim left behind.

The kit ships as a pytest plugin (the ``seawall`` entry point of ``pytest11``), so its
assertions are rewritten and a failure shows the values and a message naming the bug.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import ClassVar, Protocol, runtime_checkable

import pytest

from seawall.carryover import Carryover, CarryoverFiler, CarryoverKind, RetryPolicy, find_marker
from seawall.errors import TrackerError
from seawall.testing.tracker_faults import FaultHook, TrackerFaultKit
from seawall.tracker import Issue, IssueTracker

__all__ = ["FaultHook", "PageCapHook", "TrackerConformance", "TrackerFaultKit"]

_BODY = (
    "Line one\n\n- ümlaut, emoji 🌊, `code`, <b>html</b>\n\n"
    "<!-- seawall:carryover 0123456789abcdef -->\n"
)


def _no_sleep(seconds: float) -> None:
    return None


@runtime_checkable
class PageCapHook(FaultHook, Protocol):
    """A fault hook that also serves shorter pages than asked for (as ``FakeService``)."""

    def cap_pages(self, size: int | None) -> None: ...


class TrackerConformance(TrackerFaultKit):
    """Tests of the ``IssueTracker`` duties. Provide the ``tracker`` fixture."""

    #: The label the tests list by.
    label: ClassVar[str] = "carryover"
    #: How many issues the pagination test creates.
    many: ClassVar[int] = 7
    #: The token the fixture's tracker uses, if any; it must never leak.
    secret: ClassVar[str | None] = None

    @pytest.fixture
    def tracker(self) -> Iterator[IssueTracker]:
        raise NotImplementedError("subclasses provide a `tracker` fixture yielding a fresh tracker")

    def _create(self, tracker: IssueTracker, title: str, *labels: str) -> Issue:
        return tracker.create_issue(
            title=title, body=f"body of {title}\n", labels=list(labels or (self.label,))
        )

    def test_has_a_name(self, tracker: IssueTracker) -> None:
        assert isinstance(tracker.name, str) and tracker.name.strip(), (
            f"the tracker's name is {tracker.name!r}: errors and issues name the tracker by it"
        )

    def test_create_returns_the_open_issue(self, tracker: IssueTracker) -> None:
        tracker.ensure_labels([self.label, "priority:high"])
        issue = tracker.create_issue(
            title="[Carryover] [FAILED] first", body=_BODY, labels=[self.label, "priority:high"]
        )
        made = f"create_issue returned {issue!r}"
        assert issue.number > 0, f"{made}: issue numbers are positive"
        assert issue.title == "[Carryover] [FAILED] first", f"{made}: the title changed"
        assert issue.body == _BODY, (
            f"{made}: the body came back changed (unicode, markdown, the HTML comment that "
            "holds the carryover marker must survive)"
        )
        assert set(issue.labels) == {self.label, "priority:high"}, f"{made}: labels lost"
        assert issue.state == "open", f"{made}: a new issue is open"
        assert issue.url, f"{made}: no URL, and STATE.md links every issue"

    def test_created_issue_is_listed_with_its_exact_body(self, tracker: IssueTracker) -> None:
        tracker.ensure_labels([self.label])
        created = tracker.create_issue(title="listed", body=_BODY, labels=[self.label])
        listed = {issue.number: issue for issue in tracker.list_issues(self.label)}
        assert created.number in listed, (
            f"issue #{created.number} was created with the label and list_issues does not "
            f"return it (it returned {sorted(listed)})"
        )
        assert listed[created.number].body == _BODY, (
            "list_issues returns the body changed: the carryover marker in it is how a "
            "duplicate is found"
        )
        assert find_marker(listed[created.number].body) == "0123456789abcdef", (
            "the carryover marker is not found in the listed body"
        )
        assert listed[created.number].title == "listed", "list_issues changed the title"

    def test_list_only_returns_issues_with_the_label(self, tracker: IssueTracker) -> None:
        tracker.ensure_labels([self.label, "other"])
        wanted = self._create(tracker, "wanted", self.label)
        other = self._create(tracker, "other", "other")
        numbers = {issue.number for issue in tracker.list_issues(self.label)}
        assert wanted.number in numbers, f"the labelled issue #{wanted.number} is not listed"
        assert other.number not in numbers, (
            f"list_issues({self.label!r}) returned #{other.number}, which has another label"
        )
        assert all(self.label in issue.labels for issue in tracker.list_issues(self.label)), (
            "a listed issue does not carry the label it was listed by"
        )

    def test_list_reads_every_page(self, tracker: IssueTracker) -> None:
        tracker.ensure_labels([self.label])
        created = {self._create(tracker, f"issue {i}").number for i in range(self.many)}
        assert len(created) == self.many, "issue numbers must be distinct"
        listed = {issue.number for issue in tracker.list_issues(self.label)}
        assert listed == created, (
            f"list_issues returned {len(listed)} of {self.many} issues: it must read every page"
        )

    def test_every_page_is_read(self, tracker: IssueTracker, fault_hook: FaultHook | None) -> None:
        hook = self._hook(fault_hook)
        many = 7
        made = self._filled(tracker, many)
        before = hook.count_operation("list_issues")
        listed = {issue.number for issue in tracker.list_issues(self.label)}
        pages = hook.count_operation("list_issues") - before
        assert listed == made, (
            f"list_issues returned {len(listed)} of {many} issues in {pages} request(s): "
            "it stops after the first page"
        )
        assert pages > 1, (
            "the tracker fixture reads everything in one page; build it with a page size "
            "below 7 so the kit can check pagination"
        )

    def test_every_page_is_read_when_the_host_serves_shorter_pages(
        self, tracker: IssueTracker, fault_hook: FaultHook | None
    ) -> None:
        hook = self._hook(fault_hook)
        if not isinstance(hook, PageCapHook):
            pytest.skip("the fault hook cannot cap pages (no cap_pages method)")
        many = 7
        made = self._filled(tracker, many)
        hook.cap_pages(2)
        try:
            listed = {issue.number for issue in tracker.list_issues(self.label)}
        finally:
            hook.cap_pages(None)
        assert listed == made, (
            f"with the host serving 2 issues a page, list_issues returned {len(listed)} of "
            f"{many}: the tracker stops at the first page shorter than the size it asked for. "
            "Hosts cap page sizes (Gitea at 50): follow the next-page link or the total, "
            "not the page's length"
        )

    def _filled(self, tracker: IssueTracker, many: int) -> set[int]:
        """The numbers of ``many`` new issues with the kit's label."""
        tracker.ensure_labels([self.label])
        return {
            tracker.create_issue(title=f"p{i}", body="p\n", labels=[self.label]).number
            for i in range(many)
        }

    def test_issues_changed_since_names_new_and_closed_issues(self, tracker: IssueTracker) -> None:
        before = datetime.now(UTC) - timedelta(seconds=2)
        if tracker.issues_changed_since(self.label, before) is None:
            pytest.skip("the tracker cannot ask by time (issues_changed_since is optional)")
        tracker.ensure_labels([self.label])
        kept, gone = self._create(tracker, "kept"), self._create(tracker, "gone")
        tracker.close_issue(gone.number)
        changed = {
            i.number: i.state for i in tracker.issues_changed_since(self.label, before) or ()
        }
        assert changed.get(kept.number) == "open" and changed.get(gone.number) == "closed", (
            f"issues_changed_since gave {changed} for #{kept.number} (opened) and "
            f"#{gone.number} (closed) since {before:%H:%M:%S}: it must return the label's "
            "issues of both states changed since, or the filer misses a duplicate or keeps "
            "a closed issue as open"
        )
        later = datetime.now(UTC) + timedelta(hours=1)
        assert not tracker.issues_changed_since(self.label, later), (
            "issues_changed_since returned issues for a time an hour ahead: it ignores `since`"
        )

    def test_empty_tracker_lists_nothing(self, tracker: IssueTracker) -> None:
        assert tracker.list_issues(self.label) == [], "a fresh tracker lists issues"

    def test_comment_on_an_existing_issue(self, tracker: IssueTracker) -> None:
        tracker.ensure_labels([self.label])
        issue = self._create(tracker, "commented")
        tracker.comment(issue.number, "seen again")
        (listed,) = [i for i in tracker.list_issues(self.label) if i.number == issue.number]
        assert listed.body == issue.body, "a comment must not change the body"

    def test_comment_on_a_missing_issue_is_a_tracker_error(self, tracker: IssueTracker) -> None:
        with pytest.raises(TrackerError) as info:
            tracker.comment(987654, "nobody home")
        assert info.value.tracker == tracker.name, "errors must name the tracker"
        assert info.value.operation, "errors must name the operation that failed"
        self._assert_no_secret(str(info.value))

    def test_close_a_missing_issue_is_a_tracker_error(self, tracker: IssueTracker) -> None:
        with pytest.raises(TrackerError) as info:
            tracker.close_issue(987654)
        assert info.value.tracker == tracker.name, "errors must name the tracker"

    def test_ensure_labels_is_idempotent(self, tracker: IssueTracker) -> None:
        tracker.ensure_labels([self.label, "status:spiral"])
        tracker.ensure_labels([self.label, "status:spiral", "priority:low"])
        issue = self._create(tracker, "labelled", self.label, "status:spiral", "priority:low")
        assert set(issue.labels) == {self.label, "status:spiral", "priority:low"}

    def test_repr_does_not_show_the_token(self, tracker: IssueTracker) -> None:
        self._assert_no_secret(repr(tracker))

    def test_carryover_is_filed_once_across_sessions(self, tracker: IssueTracker) -> None:
        work = Carryover(
            plan="conformance", task_id="t-1", kind=CarryoverKind.SPIRAL, session="s1", wave=2
        )
        retry = RetryPolicy(settle=0, sleep=_no_sleep)
        first = CarryoverFiler(tracker, session="s1", label=self.label, retry=retry).file(work)
        assert first.created and first.number is not None, (
            f"the first filing of a carryover created no issue: {first.error or first}"
        )
        later = CarryoverFiler(tracker, session="s2", label=self.label, retry=retry)
        again = later.file(work)
        assert again.skipped == "duplicate" and again.number == first.number, (
            f"a second session filing the same carryover got {again} instead of the open "
            f"issue #{first.number}: list_issues must return the issue with its exact body, "
            "so its marker is found"
        )
        assert again.error is None, f"the duplicate was found with an error: {again.error}"
        open_ = [i for i in tracker.list_issues(self.label) if find_marker(i.body)]
        assert len(open_) == 1, f"one carryover filed by two sessions left {len(open_)} issues"
