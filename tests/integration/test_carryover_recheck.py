"""The duplicate check a claim needs, in one small request: what changed since.

A session's filer reads the label once; for each new filing, once its claim is held, it
asks the host only for the issues changed since that read (GitHub's ``since``, GitLab's
``updated_after``), with the real clients against the local fakes. A duplicate another
session filed meanwhile is still found, an issue closed meanwhile is filed again, and a
host that cannot ask by time gets a full listing as before.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from seawall.adapters.trackers.local import LocalTracker
from seawall.carryover import Carryover, CarryoverFiler, CarryoverKind, RetryPolicy
from seawall.testing.http import FakeServer, FakeService
from seawall.tracker import IssueTracker
from tests.integration.hostkit import Host, host, server

__all__ = ["host", "server"]


def _work(task: str) -> Carryover:
    return Carryover(plan="demo", task_id=task, kind=CarryoverKind.FAILED, session="s", wave=1)


def _filer(tracker: IssueTracker, session: str) -> CarryoverFiler:
    return CarryoverFiler(tracker, session=session, retry=RetryPolicy(sleep=lambda s: None))


def _issue_reads(service: FakeService) -> list[bool]:
    """For each request that listed issues: whether it asked by time."""
    return [
        bool(set(r.query) & {"since", "updated_after"})
        for r in service.requests
        if r.method == "GET" and r.route == "issues"
    ]


def test_a_duplicate_filed_meanwhile_is_found_by_the_narrow_recheck(
    host: Host, server: FakeServer
) -> None:
    with host.tracker(server, timeout=5) as ours, host.tracker(server, timeout=5) as theirs:
        filer = _filer(ours, "ours")
        assert filer.file(_work("first")).created  # reads the label once, then files
        other = _filer(theirs, "theirs").file(_work("second"))  # another session files
        assert other.created
        server.service.reset_log()
        again = filer.file(_work("second"))
        assert again.skipped == "duplicate" and again.number == other.number, again
        assert _issue_reads(server.service) == [True], server.service.requests


def test_an_issue_closed_meanwhile_is_filed_again(host: Host, server: FakeServer) -> None:
    with host.tracker(server, timeout=5) as ours, host.tracker(server, timeout=5) as theirs:
        filer = _filer(ours, "ours")
        first = filer.file(_work("flaky"))
        assert first.created and first.number is not None
        theirs.close_issue(first.number)  # fixed and closed in another session
        assert filer.file(_work("other")).created  # the index is refreshed by time here
        server.service.reset_log()
        again = filer.file(_work("flaky"))
        assert again.created and again.number != first.number, again
        assert _issue_reads(server.service) == [True]


def test_a_host_that_cannot_ask_by_time_lists_everything(tmp_path: Path) -> None:
    ours = LocalTracker(tmp_path, issues_dir=tmp_path / "issues")
    theirs = LocalTracker(tmp_path, issues_dir=tmp_path / "issues")
    assert ours.issues_changed_since("carryover", _at_once()) is None
    filer = _filer(ours, "ours")
    assert filer.file(_work("first")).created
    other = _filer(theirs, "theirs").file(_work("second"))
    again = filer.file(_work("second"))
    assert again.skipped == "duplicate" and again.number == other.number, again


def _at_once() -> datetime:
    return datetime.now(UTC)
