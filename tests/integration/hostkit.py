"""GitHub and GitLab as the two values of one test parameter.

``host`` runs a test once per host and ``server`` serves that host's fake on 127.0.0.1.
A ``Host`` builds its fake service, the real client (PyGithub, python-gitlab) against a
server, and the ``[session.tracker]`` tables a plan names it with. Import the fixtures
into a test module (and name them in its ``__all__``) to use them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from seawall.adapters.trackers.github import GitHubTracker
from seawall.adapters.trackers.gitlab import GitLabTracker
from seawall.testing.http import FakeServer, FakeService
from seawall.tracker import IssueTracker
from tests.fakes.github_server import GitHubService
from tests.fakes.gitlab_server import GitLabService

__all__ = ["HOSTS", "TOKEN", "Host", "host", "server"]

TOKEN = "host-token-never-printed"


@dataclass(frozen=True, slots=True)
class Host:
    kind: str
    repository: str
    token_env: str  # the variable a plan's tracker reads its token from
    api: str  # the API path below the server's origin

    def service(self) -> FakeService:
        if self.kind == "github":
            return GitHubService(token=TOKEN, repository=self.repository)
        return GitLabService(token=TOKEN, project=self.repository)

    def tracker(self, server: FakeServer, *, timeout: float) -> IssueTracker:
        """The real client of this host against ``server``, with no pacing."""
        if self.kind == "github":
            return GitHubTracker(
                self.repository,
                token=TOKEN,
                base_url=server.origin + self.api,
                request_interval=0,
                write_interval=0,
                timeout=timeout,
            )
        return GitLabTracker(self.repository, token=TOKEN, url=server.origin, timeout=timeout)

    def options(self, timeout: float = 5) -> str:
        """The ``[session.tracker.options]`` lines: no pacing, a short client timeout."""
        pacing = "request_interval = 0\nwrite_interval = 0\n" if self.kind == "github" else ""
        return f"{pacing}timeout = {timeout}\n"

    def plan_tables(self, server: FakeServer, timeout: float = 5) -> str:
        """``[session.tracker]`` and its options, naming this host served by ``server``."""
        return (
            f'\n[session.tracker]\nkind = "{self.kind}"\nrepository = "{self.repository}"\n'
            f'url = "{server.origin}{self.api}"\n'
            f"[session.tracker.options]\n{self.options(timeout)}"
        )


HOSTS = [
    Host("github", "octo/demo", "GITHUB_TOKEN", "/api/v3"),
    Host("gitlab", "group/demo", "GITLAB_TOKEN", ""),
]


@pytest.fixture(params=HOSTS, ids=[h.kind for h in HOSTS])
def host(request: pytest.FixtureRequest) -> Host:
    chosen = request.param
    assert isinstance(chosen, Host)
    return chosen


@pytest.fixture
def server(host: Host) -> Iterator[FakeServer]:
    with FakeServer(host.service()) as running:
        yield running
