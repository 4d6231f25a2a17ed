"""The third-party Gitea tracker in examples/adapters, installed as its own distribution.

The suite pip-installs ``examples/adapters/seawall-gitea`` (from a copy, so the source
tree gets no build files; its build backend comes from the package index, nothing else
is fetched) into a folder of its own, which this module's tests put on the path of the
interpreter running them and of the processes they start: the interpreter's own
site-packages, shared with the tests running beside these, is left as it is. Then the
package is found through its entry point, passes seawall's kit in its own test suite,
and files and closes a carryover in real ``seawall run`` sessions against its local
Gitea fake.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from seawall.testing.http import FakeServer
from tests.integration.sessionkit import make_repo, seawall, write_plan

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "examples" / "adapters" / "seawall-gitea"
TOKEN = "gitea-session-token"

pytestmark = pytest.mark.slow


def pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args, "--disable-pip-version-check", "-q"],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The example package, installed and on the path; yields the copy it was installed
    from (its installed files are in ``site`` beside it)."""
    root = tmp_path_factory.mktemp("gitea")
    copy, site = root / "seawall-gitea", root / "site"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    done = pip("install", "--no-deps", "--target", str(site), str(copy))  # built by hatchling
    assert done.returncode == 0, done.stdout + done.stderr
    with pytest.MonkeyPatch.context() as patch:
        paths = [str(site), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        patch.setenv("PYTHONPATH", os.pathsep.join(paths))
        patch.syspath_prepend(str(site))
        yield copy


@pytest.fixture
def gitea(installed: Path) -> Iterator[FakeServer]:
    from seawall_gitea.fake import GiteaService

    with FakeServer(GiteaService(token=TOKEN, repository="forge/demo")) as server:
        yield server


def test_the_package_is_a_separate_distribution_found_by_its_entry_point(
    installed: Path, tmp_path: Path
) -> None:
    done = seawall("adapters", "list", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [r for r in json.loads(done.stdout)["adapters"] if r["name"] == "gitea"]
    assert rows == [
        {
            "name": "gitea",
            "kind": "tracker",
            "package": "seawall-gitea",
            "version": "0.1.0",
            "target": "seawall_gitea:GiteaTracker",
            "builtin": False,
            "collides_with": None,
        }
    ]
    where = subprocess.run(
        [sys.executable, "-c", "import seawall_gitea; print(seawall_gitea.__file__)"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert where.startswith(str(installed.parent / "site")), "imported as installed"


def test_the_package_passes_the_kit_in_its_own_suite(installed: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(installed / "tests"), "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_a_real_session_files_and_a_later_one_closes_a_carryover_on_gitea(
    gitea: FakeServer, tmp_path: Path
) -> None:
    from seawall_gitea.fake import GiteaService

    service = gitea.service
    assert isinstance(service, GiteaService)
    repo = make_repo(tmp_path / "repo")
    extra = (
        f'\n[session.tracker]\nkind = "gitea"\nrepository = "forge/demo"\nurl = "{gitea.origin}"\n'
        "[session.tracker.options]\ntimeout = 5\nlimit = 2\n"
        "[session.wave_breaker]\nmax_rework_cycles = 0\n"
    )
    spec = tmp_path / "agents.json"
    env = {"GITEA_TOKEN": TOKEN, "AGENT_SPEC": str(spec)}
    spec.write_text(json.dumps({"parser": [{"final": "STATUS: failed — KeyError: 'user'"}]}))
    tasks = [{"id": "parser", "prompt": "fix the parser", "scope": ["parser.py"]}]
    plan = write_plan(tmp_path / "p1.toml", session='name = "gitea"', tasks=tasks, extra=extra)
    first = seawall("run", str(plan), cwd=repo, env=env)
    assert "→ issue #1" in first.stderr, first.stdout + first.stderr
    issue = service.issues[1]
    assert issue["state"] == "open"
    assert [service.labels[i]["name"] for i in issue["labels"]] == [
        "carryover",
        "priority:high",
        "status:failed",
    ]

    for counter in tmp_path.glob("agents.*.count"):
        counter.unlink()
    spec.write_text(json.dumps({"parser": [{"writes": {"parser.py": "ok\n"}}]}))
    plan = write_plan(tmp_path / "p2.toml", session='name = "gitea"', tasks=tasks, extra=extra)
    second = seawall("run", str(plan), cwd=repo, env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "landed; closed issue #1" in second.stderr
    assert service.issues[1]["state"] == "closed"


_PLANTED_SHORT_PAGE = '''
from collections.abc import Iterator
from typing import Any

import pytest
from seawall_gitea import GiteaTracker
from seawall_gitea.fake import GiteaService

from seawall.testing.http import FakeServer
from seawall.testing.trackers import TrackerConformance
from seawall.tracker import IssueTracker

TOKEN = "planted"


class StopsAtShortPage(GiteaTracker):
    """The planted bug: a page shorter than the limit asked for is taken as the last."""

    def _pages(self, operation: str, url: str) -> list[dict[str, Any]]:
        body, _ = self._request(operation, "GET", url, None)
        items: list[dict[str, Any]] = list(body)
        page = 1
        while len(body) == self._limit:
            page += 1
            body, _ = self._request(operation, "GET", f"{url}&page={page}", None)
            items.extend(body)
        return items


class TestPlanted(TrackerConformance):
    secret = TOKEN
    client_timeout = 0.5

    @pytest.fixture
    def server(self) -> Iterator[FakeServer]:
        with FakeServer(GiteaService(token=TOKEN)) as running:
            yield running

    @pytest.fixture
    def tracker(self, server: FakeServer) -> Iterator[IssueTracker]:
        tracker = StopsAtShortPage(
            "forge/demo", url=server.origin, token=TOKEN, timeout=self.client_timeout, limit=3
        )
        with tracker:
            yield tracker

    @pytest.fixture
    def fault_hook(self, server: FakeServer) -> GiteaService:
        assert isinstance(server.service, GiteaService)
        return server.service
'''


def test_the_kit_names_a_planted_short_page_bug_in_the_gitea_tracker(
    installed: Path, tmp_path: Path
) -> None:
    """Gitea caps its pages at 50 whatever the ``limit``: a tracker that stops at the first
    page shorter than it asked for lists 50 of 60 issues. The kit's host serves shorter
    pages than asked and names that bug; the rest of the kit still passes."""
    (tmp_path / "test_planted.py").write_text(_PLANTED_SHORT_PAGE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "test_planted.py", "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    out = done.stdout
    assert done.returncode == 1, out[-3000:] + done.stderr[-2000:]
    failed = [line.split(" - ")[0] for line in out.splitlines() if line.startswith("FAILED")]
    assert failed == [
        "FAILED test_planted.py::TestPlanted::"
        "test_every_page_is_read_when_the_host_serves_shorter_pages"
    ], out[-3000:]
    assert (
        "with the host serving 2 issues a page, list_issues returned 2 of 7: the tracker "
        "stops at the first page shorter than the size it asked for"
    ) in out, out[-3000:]
