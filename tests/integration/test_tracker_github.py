"""The GitHub tracker: the real PyGithub client against the local GitHub REST v3 fake."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from seawall.adapters.trackers.github import GitHubTracker
from seawall.carryover import Carryover, CarryoverFiler, CarryoverKind, RetryPolicy
from seawall.errors import ConfigurationError
from seawall.testing.http import FakeServer, Fault
from seawall.testing.trackers import FaultHook, TrackerConformance
from seawall.tracker import IssueTracker, TrackerUnavailableError
from tests.fakes.filing import Sleeps, quick_filer
from tests.fakes.github_server import GitHubService, github_server, rate_limited_403, secondary_429

TOKEN = "ghp_fake_token_never_printed"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with github_server(token=TOKEN) as running:
        yield running


def service(server: FakeServer) -> GitHubService:
    assert isinstance(server.service, GitHubService)
    return server.service


def tracker_for(server: FakeServer, **kwargs: Any) -> GitHubTracker:
    options: dict[str, Any] = {
        "token": TOKEN,
        "base_url": server.origin + "/api/v3",
        "request_interval": 0,
        "write_interval": 0,
        "timeout": 1,
        **kwargs,
    }
    return GitHubTracker("octo/demo", **options)


WORK = Carryover(plan="demo", task_id="parser", kind=CarryoverKind.FAILED, session="s1", wave=1)


class TestGitHubConformance(TrackerConformance):
    secret = TOKEN
    client_timeout = 1.0

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
        return [(secondary_429(7), 7.0), (rate_limited_403(), 3600.0)]


def test_lists_250_issues_in_three_pages_without_extra_requests(server: FakeServer) -> None:
    for i in range(250):
        service(server).add_issue(f"t{i}", f"body {i}", ["carryover"])
    service(server).add_issue("closed", "x", ["carryover"], state="closed")
    service(server).add_issue("other", "x", ["bug"])
    with tracker_for(server) as tracker:
        issues = tracker.list_issues("carryover")
    assert len(issues) == 250 and {i.state for i in issues} == {"open"}
    assert service(server).count("GET", "issues") == 3
    assert service(server).count() == 3, "no repository or per-issue fetches"


def test_labels_are_created_before_the_issue(server: FakeServer) -> None:
    service(server).add_issue("seed", "x", ["carryover"])
    with tracker_for(server) as tracker:
        result = quick_filer(tracker).file(WORK)
    assert result.created
    log = [(r.method, r.route) for r in service(server).requests]
    assert log == [
        ("GET", "issues"),
        ("POST", "labels"),  # the claim on the fingerprint, a label the host holds
        ("GET", "issues"),  # listed again once the claim is ours
        ("GET", "labels"),
        ("POST", "labels"),
        ("POST", "labels"),
        ("POST", "issues"),
        ("DELETE", "label"),  # the claim, released once the issue exists
    ]
    assert set(service(server).labels) == {"carryover", "priority:high", "status:failed"}


@pytest.mark.parametrize(
    "fault",
    [
        Fault(status=502, apply=True),
        Fault(drop=True, apply=True),
        Fault(delay=1.3, apply=True),
    ],
    ids=["apply-then-502", "apply-then-drop", "apply-then-timeout"],
)
def test_a_lost_create_answer_makes_no_duplicate(server: FakeServer, fault: Fault) -> None:
    service(server).inject("POST", "issues", fault)
    with tracker_for(server) as tracker:
        result = quick_filer(tracker).file(WORK)
    assert result.created and result.number == 1, result
    assert len(service(server).issues) == 1
    assert service(server).count("POST", "issues") == 1, "PyGithub must not retry the POST"
    # listed before the claim, once it is ours, and again before any retry
    assert service(server).count("GET", "issues") == 3, "listed again before any retry"


def test_an_unapplied_502_is_retried_once_after_listing(server: FakeServer) -> None:
    service(server).inject("POST", "issues", Fault(status=502))
    with tracker_for(server) as tracker:
        result = quick_filer(tracker).file(WORK)
    assert result.created and len(service(server).issues) == 1
    assert service(server).count("POST", "issues") == 2


def test_the_client_itself_does_not_retry_a_post(server: FakeServer) -> None:
    service(server).inject("POST", "issues", Fault(status=503), times=5)
    with tracker_for(server) as tracker, pytest.raises(TrackerUnavailableError) as info:
        tracker.create_issue(title="t", body="b", labels=[])
    assert service(server).count("POST", "issues") == 1
    assert str(info.value).startswith("github: create issue failed: HTTP 503")


@pytest.mark.parametrize(
    ("status", "route", "expected"),
    [
        (401, "issues", "github: list issues failed: HTTP 401"),
        (403, "issues", "github: list issues failed: HTTP 403"),
        (404, "issues", "github: list issues failed: HTTP 404"),
        (500, "issues", "github: list issues failed: HTTP 500"),
    ],
)
def test_http_faults_become_error_results(
    server: FakeServer, status: int, route: str, expected: str
) -> None:
    service(server).inject("GET", route, Fault(status=status), times=3)
    with tracker_for(server) as tracker:
        result = quick_filer(tracker).file(WORK)
    assert result.skipped == "error" and not result.created
    assert result.error is not None and result.error.startswith(expected)
    assert TOKEN not in result.error
    assert service(server).count("GET", "issues") == (3 if status >= 500 else 1)


def test_a_bad_token_is_an_error_result_without_the_token(server: FakeServer) -> None:
    with tracker_for(server, token="wrong-token-123") as tracker:
        result = quick_filer(tracker).file(WORK)
    assert result.skipped == "error"
    assert result.error == "github: list issues failed: HTTP 401: Bad credentials (check the token)"
    assert "wrong-token-123" not in repr(tracker)


def test_a_primary_rate_limit_is_reported_not_waited_for(server: FakeServer) -> None:
    service(server).inject("GET", "issues", rate_limited_403())
    sleeps = Sleeps()
    with tracker_for(server) as tracker:
        result = quick_filer(tracker, sleeps).file(WORK)
    assert result.skipped == "error"
    assert (
        result.error is not None
        and "rate limited" in result.error
        and "retry after" in result.error
    )
    assert sleeps == [] and service(server).count("GET", "issues") == 1


def test_a_429_with_retry_after_is_waited_out(server: FakeServer) -> None:
    service(server).inject("POST", "issues", secondary_429(retry_after=1))
    sleeps = Sleeps()
    with tracker_for(server) as tracker:
        result = quick_filer(tracker, sleeps).file(WORK)
    assert result.created and sleeps == [1.0]
    assert service(server).count("POST", "issues") == 2
    # listed before the claim and once it is ours; a refused request needs no re-list
    assert service(server).count("GET", "issues") == 2, "a refused request needs no re-list"


def test_a_secondary_limit_403_with_retry_after_is_waited_out(server: FakeServer) -> None:
    body = {
        "message": "You have exceeded a secondary rate limit. "
        "Please retry your request again later."
    }
    service(server).inject(
        "GET", "issues", Fault(status=403, headers={"Retry-After": "3"}, body=body)
    )
    sleeps = Sleeps()
    with tracker_for(server) as tracker:
        result = quick_filer(tracker, sleeps).file(WORK)
    assert result.created and sleeps == [3.0]
    assert service(server).count("GET", "issues") == 3  # the refused one, its retry, the re-list


def test_a_timeout_on_list_is_an_error_naming_the_operation(server: FakeServer) -> None:
    service(server).inject("GET", "issues", Fault(delay=1.3), times=3)
    with tracker_for(server) as tracker:
        result = CarryoverFiler(
            tracker, session="s1", retry=RetryPolicy(attempts=1, sleep=Sleeps())
        ).file(WORK)
    assert result.error == "github: list issues failed: timed out; a write may have been applied"


def test_duplicate_is_commented_once(server: FakeServer) -> None:
    with tracker_for(server) as tracker:
        first = quick_filer(tracker).file(WORK)
        later = quick_filer(tracker)
        assert later.file(WORK).skipped == "duplicate"
        assert later.file(WORK).skipped == "duplicate"
    assert first.number is not None
    assert len(service(server).comments[first.number]) == 1
    assert service(server).count("GET", "issue") == 0, "commenting does not fetch the issue"


def test_token_from_the_environment(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with tracker_for(server, token=None) as tracker:
        assert tracker.list_issues("carryover") == []
    monkeypatch.delenv("GITHUB_TOKEN")
    with pytest.raises(ConfigurationError, match="GITHUB_TOKEN"):
        tracker_for(server, token=None)
    with pytest.raises(ConfigurationError, match="owner/name"):
        GitHubTracker("just-a-name", token=TOKEN)
