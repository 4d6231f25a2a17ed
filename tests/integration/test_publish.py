"""Publishing: the session's branch pushed to a real bare remote and exactly one pull
request (GitHub) or merge request (GitLab) opened, across a kill and a resume.

Real ``seawall run`` / ``seawall resume`` processes, the real PyGithub and
python-gitlab clients against the local fakes, and a local bare repository as remote.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from seawall.testing.http import FakeServer, FakeService, Fault
from tests.fakes.github_server import GitHubService
from tests.fakes.gitlab_server import GitLabService
from tests.integration.hostkit import TOKEN, Host, host, server
from tests.integration.sessionkit import git, make_repo, seawall, write_plan

__all__ = ["host", "server"]


def requests_of(service: FakeService) -> list[dict[str, object]]:
    if isinstance(service, GitHubService):
        return list(service.pulls.values())
    assert isinstance(service, GitLabService)
    return list(service.merge_requests.values())


def setup(
    tmp_path: Path, host: Host, server: FakeServer
) -> tuple[Path, Path, Path, dict[str, str]]:
    repo = make_repo(tmp_path / "repo")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    spec = tmp_path / "agents.json"
    spec.write_text(json.dumps({"report": [{"writes": {"report.txt": "ok\n"}}]}))
    extra = host.plan_tables(server) + (
        f'[session.publish]\nremote = "{remote}"\nbranch = "seawall/report"\nbase = "main"\n'
    )
    tasks = [{"id": "report", "prompt": "write the report", "scope": ["report.txt"]}]
    plan = write_plan(tmp_path / "plan.toml", session='name = "pub"', tasks=tasks, extra=extra)
    return repo, remote, plan, {host.token_env: TOKEN, "AGENT_SPEC": str(spec)}


@pytest.mark.slow
@pytest.mark.parametrize("point", ["after-push", "after-pull-request"])
def test_a_kill_then_resume_never_opens_a_second_request(
    tmp_path: Path, host: Host, server: FakeServer, point: str
) -> None:
    if point == "after-push" and host.kind == "gitlab":
        pytest.skip("the push does not depend on the host: checked on GitHub only")
    repo, remote, plan, env = setup(tmp_path, host, server)
    killed = seawall("run", str(plan), cwd=repo, env={**env, "SEAWALL_KILL_AT": point})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(requests_of(server.service)) == 1
    expected = "found open" if point == "after-pull-request" else "opened"
    assert f"published seawall/report: {expected} #" in resumed.stderr
    assert git(remote, "rev-parse", "refs/heads/seawall/report") == git(repo, "rev-parse", "main")


@pytest.mark.slow
def test_a_session_pushes_its_branch_and_opens_one_request_even_when_the_answer_is_lost(
    tmp_path: Path, host: Host, server: FakeServer
) -> None:
    repo, remote, plan, env = setup(tmp_path, host, server)
    server.service.inject_operation("open_pull_request", Fault(status=502, apply=True))
    done = seawall("run", str(plan), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert server.service.count_operation("open_pull_request") == 1, "found, not opened again"
    head = git(repo, "rev-parse", "main")
    assert git(remote, "rev-parse", "refs/heads/seawall/report") == head
    (opened,) = requests_of(server.service)
    assert opened["title"] == "seawall: pub"
    body = str(opened.get("body") or opened.get("description"))
    assert "`report`" in body and "### Done" in body
    assert "published seawall/report: opened #" in done.stderr
    session = json.loads(seawall("status", "--json", cwd=repo).stdout)["session"]
    record = json.loads((repo / ".seawall" / session / "publish.json").read_text())
    assert record["commit"] == head and record["request"]["url"] and record["error"] is None


def test_a_failed_push_is_reported_and_the_session_still_finishes(
    tmp_path: Path, host: Host, server: FakeServer
) -> None:
    if host.kind == "gitlab":
        pytest.skip("a failed push never reaches the host: checked on GitHub only")
    repo, remote, plan, env = setup(tmp_path, host, server)
    plan.write_text(plan.read_text().replace(str(remote), str(tmp_path / "missing.git")))
    done = seawall("run", str(plan), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning: publishing seawall/report failed: push to" in done.stderr
    assert requests_of(server.service) == []


def test_publishing_with_a_tracker_that_cannot_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "pub"\n[session.publish]\nbase = "main"\n'
        '[[task]]\nid = "a"\nprompt = "p"\n'
    )
    done = seawall("plan", str(plan), cwd=tmp_path)
    assert done.returncode == 1
    assert "field 'session.publish'" in done.stderr
    assert "the local tracker cannot open pull requests" in done.stderr
