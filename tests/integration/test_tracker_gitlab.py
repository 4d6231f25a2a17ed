"""The GitLab tracker: the real python-gitlab client against the local GitLab v4 fake."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from seawall.adapters.trackers.gitlab import GitLabTracker
from seawall.carryover import Carryover, CarryoverFiler, CarryoverKind, RetryPolicy
from seawall.errors import ConfigurationError, TrackerError
from seawall.testing.http import FakeServer, Fault
from seawall.testing.trackers import FaultHook, TrackerConformance
from seawall.tracker import IssueTracker, TrackerUnavailableError
from tests.fakes.filing import Sleeps, quick_filer
from tests.fakes.gitlab_server import GitLabService, gitlab_server, too_many_requests

TOKEN = "glpat-fake-token-never-printed"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with gitlab_server(token=TOKEN) as running:
        yield running


def service(server: FakeServer) -> GitLabService:
    assert isinstance(server.service, GitLabService)
    return server.service


def tracker_for(server: FakeServer, **kwargs: Any) -> GitLabTracker:
    options: dict[str, Any] = {"token": TOKEN, "url": server.origin, "timeout": 0.5, **kwargs}
    return GitLabTracker("group/demo", **options)


WORK = Carryover(plan="demo", task_id="parser", kind=CarryoverKind.SPIRAL, session="s1", wave=3)


class TestGitLabConformance(TrackerConformance):
    secret = TOKEN
    client_timeout = 0.5

    @pytest.fixture
    def tracker(self, server: FakeServer) -> Iterator[IssueTracker]:
        with tracker_for(server, per_page=3) as tracker:
            yield tracker

    @pytest.fixture
    def fault_hook(self, server: FakeServer) -> FaultHook:
        return service(server)

    @pytest.fixture
    def second_tracker(self, server: FakeServer) -> Iterator[IssueTracker]:
        with tracker_for(server) as tracker:
            yield tracker

    def rate_limit_faults(self) -> list[tuple[Fault, float]]:
        return [(too_many_requests(7), 7.0)]


def test_lists_250_issues_in_three_pages(server: FakeServer) -> None:
    for i in range(250):
        service(server).add_issue(f"t{i}", f"body {i}", ["carryover"])
    service(server).add_issue("closed", "x", ["carryover"], state="closed")
    service(server).add_issue("other", "x", ["bug"])
    with tracker_for(server) as tracker:
        issues = tracker.list_issues("carryover")
    assert len(issues) == 250 and {i.state for i in issues} == {"open"}
    assert service(server).count() == service(server).count("GET", "issues") == 3
    first = service(server).requests[0]
    assert first.path == "/api/v4/projects/group%2Fdemo/issues"
    assert first.query["labels"] == ["carryover"] and first.query["state"] == ["opened"]


def test_labels_are_ensured_before_the_issue(server: FakeServer) -> None:
    with tracker_for(server) as tracker:
        result = quick_filer(tracker).file(WORK)
    assert result.created and result.url and result.url.endswith("/group/demo/-/issues/1")
    log = [(r.method, r.route) for r in service(server).requests]
    claim = ("POST", "labels")  # the claim on the fingerprint, a label the host holds
    release = ("DELETE", "label")  # the claim, released once the issue exists
    relist = ("GET", "issues")  # listed again once the claim is ours
    assert log == [("GET", "issues"), claim, relist, ("GET", "labels")] + [
        ("POST", "labels")
    ] * 3 + [
        ("POST", "issues"),
        release,
    ]
    assert not [name for name in service(server).labels if name.startswith("claim:")]
    assert service(server).issues[1]["labels"] == ["carryover", "priority:high", "status:spiral"]


@pytest.mark.parametrize(
    "fault",
    [
        Fault(status=502, apply=True),
        Fault(drop=True, apply=True),
        Fault(delay=0.8, apply=True),
    ],
    ids=["apply-then-502", "apply-then-drop", "apply-then-timeout"],
)
def test_a_lost_create_answer_makes_no_duplicate(server: FakeServer, fault: Fault) -> None:
    service(server).inject("POST", "issues", fault)
    with tracker_for(server) as tracker:
        result = quick_filer(tracker).file(WORK)
    assert result.created and result.number == 1, result
    assert len(service(server).issues) == 1
    assert service(server).count("POST", "issues") == 1, "python-gitlab must not retry the POST"
    # listed before the claim, once it is ours, and again before any retry
    assert service(server).count("GET", "issues") == 3, "listed again before any retry"


def test_the_client_itself_does_not_retry_a_post_or_a_429(server: FakeServer) -> None:
    service(server).inject("POST", "issues", Fault(status=503))
    service(server).inject("POST", "issues", too_many_requests(retry_after=0))
    with tracker_for(server) as tracker:
        with pytest.raises(TrackerUnavailableError):
            tracker.create_issue(title="t", body="b", labels=[])
        with pytest.raises(TrackerError, match="rate limited"):
            tracker.create_issue(title="t", body="b", labels=[])
    assert service(server).count("POST", "issues") == 2
    assert service(server).issues == {}


def test_a_429_with_retry_after_is_waited_out_by_the_filer(server: FakeServer) -> None:
    service(server).inject("POST", "issues", too_many_requests(retry_after=2))
    sleeps = Sleeps()
    with tracker_for(server) as tracker:
        result = quick_filer(tracker, sleeps).file(WORK)
    assert result.created and sleeps == [2.0]
    assert service(server).count("POST", "issues") == 2


@pytest.mark.parametrize("status", [401, 403, 404, 500])
def test_http_faults_become_error_results(server: FakeServer, status: int) -> None:
    service(server).inject("GET", "issues", Fault(status=status), times=3)
    with tracker_for(server) as tracker:
        result = quick_filer(tracker).file(WORK)
    assert result.skipped == "error"
    assert result.error is not None
    assert result.error.startswith(f"gitlab: list issues failed: HTTP {status}")
    assert TOKEN not in result.error


def test_a_bad_token_and_a_missing_project(server: FakeServer) -> None:
    with tracker_for(server, token="nope-123") as tracker:
        result = quick_filer(tracker).file(WORK)
    assert (
        result.error == "gitlab: list issues failed: HTTP 401: 401 Unauthorized (check the token)"
    )
    with GitLabTracker("group/missing", token=TOKEN, url=server.origin) as tracker:
        result = quick_filer(tracker).file(WORK)
    assert result.error == "gitlab: list issues failed: HTTP 404: 404 Project Not Found"


def test_a_timeout_is_an_error_naming_the_operation(server: FakeServer) -> None:
    service(server).inject("GET", "issues", Fault(delay=0.8))
    with tracker_for(server) as tracker:
        result = CarryoverFiler(
            tracker, session="s1", retry=RetryPolicy(attempts=1, sleep=Sleeps())
        ).file(WORK)
    assert result.error == "gitlab: list issues failed: timed out; a write may have been applied"


def test_duplicate_gets_one_note(server: FakeServer) -> None:
    with tracker_for(server) as tracker:
        first = quick_filer(tracker).file(WORK)
        later = quick_filer(tracker)
        assert later.file(WORK).skipped == "duplicate"
        assert later.file(WORK).skipped == "duplicate"
    assert first.number is not None and len(service(server).notes[first.number]) == 1
    assert service(server).count("GET", "issue") == 0


def test_token_from_the_environment(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITLAB_TOKEN", TOKEN)
    with tracker_for(server, token=None) as tracker:
        assert tracker.list_issues("carryover") == []
        assert TOKEN not in repr(tracker)
    monkeypatch.delenv("GITLAB_TOKEN")
    with pytest.raises(ConfigurationError, match="GITLAB_TOKEN"):
        tracker_for(server, token=None)
