"""The kit's claim checks catch the claim bugs that duplicate re-filed carryovers.

Each buggy GitHub tracker (the real client against the fake) runs the kit's re-filing
check, which must fail naming the bug; the correct tracker passes the same check.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from seawall.adapters.trackers.github import GitHubTracker
from seawall.testing.http import FakeServer
from seawall.testing.trackers import TrackerConformance
from tests.fakes.github_server import GitHubService

TOKEN = "kit-token"


class KeepsClaims(GitHubTracker):
    """A claim per fingerprint, never released: the first filing's claim stays."""

    def release_claim(self, key: str, *, holder: str) -> None:
        return None


class ClaimsForEveryone(GitHubTracker):
    """A claim anyone takes, whoever holds it."""

    def take_claim(self, key: str, *, holder: str, ttl: float) -> float:
        return 0.0


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(GitHubService(token=TOKEN)) as running:
        yield running


def _client(cls: type[GitHubTracker], server: FakeServer) -> GitHubTracker:
    return cls(
        "octo/demo",
        token=TOKEN,
        base_url=server.origin + "/api/v3",
        request_interval=0,
        write_interval=0,
        timeout=5,
    )


@pytest.mark.parametrize(
    ("buggy", "named"),
    [
        (KeepsClaims, "the holder must release its claim once the issue exists"),
        (ClaimsForEveryone, "a claim must belong to one filing attempt"),
    ],
    ids=["keeps-claims", "claims-for-everyone"],
)
def test_the_refiling_check_fails_a_buggy_claim_naming_the_bug(
    server: FakeServer, tmp_path: Path, buggy: type[GitHubTracker], named: str
) -> None:
    kit = TrackerConformance()
    with (
        _client(buggy, server) as tracker,
        _client(buggy, server) as other,
        pytest.raises(AssertionError) as failure,
    ):
        kit.test_refiling_after_close_two_filers_file_once(tracker, other, tmp_path)
    assert named in str(failure.value)


def test_the_correct_tracker_passes_the_refiling_check(server: FakeServer, tmp_path: Path) -> None:
    with _client(GitHubTracker, server) as tracker, _client(GitHubTracker, server) as other:
        TrackerConformance().test_refiling_after_close_two_filers_file_once(
            tracker, other, tmp_path
        )
    assert isinstance(server.service, GitHubService)
    assert not [name for name in server.service.labels if name.startswith("claim:")]
