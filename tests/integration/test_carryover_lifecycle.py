"""A carryover closes when a later session lands its task, on GitHub and on GitLab.

Real ``seawall run`` processes file and close through the real PyGithub and
python-gitlab clients against the local fakes; the tracker's own settings come from
``[session.tracker.options]`` and ``--tracker-option``.
"""

from __future__ import annotations

import json
from pathlib import Path

from seawall.testing.http import FakeServer, FakeService
from tests.fakes.github_server import GitHubService
from tests.fakes.gitlab_server import GitLabService
from tests.integration.hostkit import TOKEN, Host, host, server
from tests.integration.sessionkit import git, make_repo, seawall, write_plan

__all__ = ["host", "server"]


def plan_for(tmp_path: Path, host: Host, server: FakeServer, name: str) -> Path:
    tracker = host.plan_tables(server) + "[session.wave_breaker]\nmax_rework_cycles = 0\n"
    return write_plan(
        tmp_path / name,
        session='name = "lifecycle"',
        tasks=[{"id": "report", "prompt": "write the report", "scope": ["report.txt"]}],
        extra=tracker,
    )


def issues_of(service: FakeService) -> dict[int, dict[str, object]]:
    assert isinstance(service, GitHubService | GitLabService)
    return service.issues


def comments_of(service: FakeService, number: int) -> list[str]:
    if isinstance(service, GitHubService):
        return service.comments.get(number, [])
    assert isinstance(service, GitLabService)
    return service.notes.get(number, [])


def test_a_later_session_landing_the_task_closes_its_carryover(
    tmp_path: Path, host: Host, server: FakeServer
) -> None:
    repo = make_repo(tmp_path / "repo")
    env = {host.token_env: TOKEN, "AGENT_SPEC": str(tmp_path / "agents.json")}
    failing = {"report": [{"final": "STATUS: failed — ModuleNotFoundError: No module csvkit"}]}
    (tmp_path / "agents.json").write_text(json.dumps(failing))
    first = seawall("run", str(plan_for(tmp_path, host, server, "p1.toml")), cwd=repo, env=env)
    assert first.returncode != 0 and "→ issue #1" in first.stderr, first.stderr
    (number,) = issues_of(server.service)
    assert issues_of(server.service)[number]["state"] in ("open", "opened")

    for counter in tmp_path.glob("agents.*.count"):
        counter.unlink()
    landing = {"report": [{"writes": {"report.txt": "ok\n"}, "final": "STATUS: done — ok"}]}
    (tmp_path / "agents.json").write_text(json.dumps(landing))
    second = seawall("run", str(plan_for(tmp_path, host, server, "p2.toml")), cwd=repo, env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"landed; closed issue #{number}" in second.stderr
    assert issues_of(server.service)[number]["state"] == "closed"
    head = git(repo, "rev-parse", "main")
    (note,) = [c for c in comments_of(server.service, number) if "Landed" in c]
    assert head in note and "`main`" in note

    third = seawall("run", str(plan_for(tmp_path, host, server, "p3.toml")), cwd=repo, env=env)
    assert third.returncode == 0, third.stderr
    assert "closed issue" not in third.stderr, "a closed carryover is never touched again"
    assert len([c for c in comments_of(server.service, number) if "Landed" in c]) == 1


def test_an_unknown_tracker_option_fails_the_plan_naming_the_field(
    tmp_path: Path, host: Host, server: FakeServer
) -> None:
    plan = plan_for(tmp_path, host, server, "p.toml")
    plan.write_text(plan.read_text().replace("timeout = 5", "timout = 5"))
    done = seawall("plan", str(plan), cwd=tmp_path, env={host.token_env: TOKEN})
    assert done.returncode == 1
    assert "session.tracker.options.timout" in done.stderr
    assert "did you mean 'timeout'?" in done.stderr


def test_tracker_option_on_the_command_line_is_typed(
    tmp_path: Path, host: Host, server: FakeServer
) -> None:
    service = server.service
    assert isinstance(service, GitHubService | GitLabService)
    for i in range(5):
        service.add_issue(f"t{i}", f"<!-- seawall:carryover {i:016x} -->", ["carryover"])
    args = ["--tracker", host.kind, "--project", host.repository]
    args += ["--url", server.origin + host.api, "--tracker-option", "per_page=2"]
    if host.kind == "github":
        args += ["--tracker-option", "request_interval=0", "--tracker-option", "write_interval=0"]
    done = seawall("carryover", "list", *args, "--json", cwd=tmp_path, env={host.token_env: TOKEN})
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["issues"]) == 5
    assert service.count("GET", "issues") == 3, "per_page=2 reached the client as an integer"
