"""Carryover cost: API requests for a session filing 20 carryovers against 250 open ones.

Measured on the GitHub REST fake with the real PyGithub client (page size 100):

- ours: one ``CarryoverFiler`` for the session (lists the label once, keeps it current);
- naive list: list every page of the label for each carryover, then create;
- naive search: one search request per carryover, then create (and the search index
  lags new issues, so it also misses duplicates filed moments earlier).

Target: at most ceil(250/100) = 3 full listings per session, plus, for each new filing,
one narrow re-check of what changed since (the duplicate check a claim needs: another
session may have filed the same carryover meanwhile), and one create per issue.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import github

from seawall.adapters.trackers.github import GitHubTracker
from seawall.carryover import (
    Carryover,
    CarryoverFiler,
    CarryoverKind,
    RetryPolicy,
    find_marker,
    fingerprint,
    render_body,
    render_title,
)
from seawall.testing.http import FakeServer
from tests.bench.harness import BenchResult
from tests.fakes.github_server import GitHubService

OPEN = 250
_LAST_WEEK = "2026-11-28T09:00:00Z"  # when the open issues were last touched
NEW = 20
TOKEN = "bench-token"


def _work() -> list[Carryover]:
    kinds = (CarryoverKind.SPIRAL, CarryoverKind.FAILED)
    return [
        Carryover(plan="bench", task_id=f"task-{i}", kind=kinds[i % 2], session="s", wave=1)
        for i in range(NEW)
    ]


def _seeded() -> GitHubService:
    service = GitHubService(token=TOKEN)
    for i in range(OPEN):
        fp = fingerprint(plan="older", task_id=f"old-{i}", kind="SPIRAL")
        body = f"old carryover {i}\n<!-- seawall:carryover {fp} -->\n"
        labels = ["carryover", "priority:high"]
        service.add_issue(f"[Carryover] [SPIRAL] old-{i}", body, labels, updated=_LAST_WEEK)
    return service


def _tracker(server: FakeServer) -> GitHubTracker:
    return GitHubTracker(
        "octo/demo",
        token=TOKEN,
        base_url=server.origin + "/api/v3",
        request_interval=0,
        write_interval=0,
    )


def _ours(server: FakeServer) -> None:
    with _tracker(server) as tracker:
        filer = CarryoverFiler(tracker, session="s", retry=RetryPolicy(sleep=lambda s: None))
        for carryover in _work():
            assert filer.file(carryover).created


def _naive_list(server: FakeServer) -> None:
    with _tracker(server) as tracker:
        for carryover in _work():
            fps = {find_marker(issue.body) for issue in tracker.list_issues("carryover")}
            if carryover.fingerprint not in fps:
                labels = carryover.labels()
                tracker.ensure_labels(labels)
                tracker.create_issue(
                    title=render_title(carryover), body=render_body(carryover), labels=labels
                )


def _naive_search(server: FakeServer) -> None:
    client = github.Github(
        auth=github.Auth.Token(TOKEN),
        base_url=server.origin + "/api/v3",
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    with _tracker(server) as tracker:
        for carryover in _work():
            query = f"repo:octo/demo is:issue is:open label:carryover {carryover.fingerprint}"
            if client.search_issues(query).totalCount == 0:
                labels = carryover.labels()
                tracker.ensure_labels(labels)
                tracker.create_issue(
                    title=render_title(carryover), body=render_body(carryover), labels=labels
                )
    client.close()


def _measure(strategy: Callable[[FakeServer], None]) -> tuple[int, int, int]:
    """(total requests, list/search requests, creates) of one strategy on a fresh fake."""
    service = _seeded()
    with FakeServer(service) as server:
        strategy(server)
    reads = service.count("GET", "issues") + service.count("GET", "search")
    return len(service.requests), reads, service.count("POST", "issues")


def _full_lists(service: GitHubService) -> int:
    """List requests that read the whole label (not the re-checks of what changed since)."""
    return sum(
        1
        for r in service.requests
        if r.method == "GET" and r.route == "issues" and "since" not in r.query
    )


def run() -> list[BenchResult]:
    service = _seeded()
    with FakeServer(service) as server:
        _ours(server)
    full = _full_lists(service)
    ours, ours_reads, ours_creates = _measure(_ours)
    naive, naive_reads, naive_creates = _measure(_naive_list)
    search, search_reads, search_creates = _measure(_naive_search)
    assert ours_creates == naive_creates == search_creates == NEW
    pages = math.ceil(OPEN / 100)
    return [
        BenchResult(
            name=f"carryover full listings ({NEW} new vs {OPEN} open)",
            figure=full,
            baseline=naive_reads,
            unit="requests",
            baseline_name="naive list per carryover",
            target=f"<= {pages} (one listing of every page, once per session)",
        ),
        BenchResult(
            name=f"carryover list requests in all ({NEW} new vs {OPEN} open)",
            figure=ours_reads,
            baseline=naive_reads,
            unit="requests",
            baseline_name="naive list per carryover",
            target=f"<= {pages} + {NEW} (one narrow re-check per new claim)",
            note="each new filing, once its claim is held, asks what changed since",
        ),
        BenchResult(
            name="carryover API requests, total",
            figure=ours,
            baseline=naive,
            unit="requests",
            baseline_name="naive list per carryover",
            note=f"ours: {ours_reads} list + {ours_creates} create + labels",
        ),
        BenchResult(
            name="carryover API requests, total",
            figure=ours,
            baseline=search,
            unit="requests",
            baseline_name="naive search per carryover",
            note=f"search: {search_reads} search + {search_creates} create + labels",
        ),
    ]
