"""The Gitea tracker passes seawall's tracker kit against the local Gitea fake."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from seawall_gitea import GiteaTracker
from seawall_gitea.fake import GiteaService

from seawall.testing.http import FakeServer, Fault
from seawall.testing.trackers import TrackerConformance
from seawall.tracker import IssueTracker

TOKEN = "gitea-kit-token"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(GiteaService(token=TOKEN)) as running:
        yield running


class TestGiteaConformance(TrackerConformance):
    secret = TOKEN
    client_timeout = 0.5

    @pytest.fixture
    def tracker(self, server: FakeServer) -> Iterator[IssueTracker]:
        tracker = GiteaTracker(
            "forge/demo", url=server.origin, token=TOKEN, timeout=self.client_timeout, limit=3
        )
        with tracker:
            yield tracker

    @pytest.fixture
    def fault_hook(self, server: FakeServer) -> GiteaService:
        assert isinstance(server.service, GiteaService)
        return server.service

    def rate_limit_faults(self) -> list[tuple[Fault, float]]:
        return [(Fault(status=429, headers={"Retry-After": "7"}), 7.0)]


def test_labels_are_attached_by_id(server: FakeServer) -> None:
    service = server.service
    assert isinstance(service, GiteaService)
    with GiteaTracker("forge/demo", url=server.origin, token=TOKEN) as tracker:
        tracker.ensure_labels(["carryover", "status:failed"])
        issue = tracker.create_issue(title="t", body="b", labels=["carryover", "status:failed"])
    posted = [r.body for r in service.requests if r.method == "POST" and r.route == "issues"]
    assert posted[0]["labels"] == [100, 101]
    assert service.label_names(issue.number) == ["carryover", "status:failed"]
