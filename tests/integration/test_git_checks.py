"""Checks in a temporary worktree, bisection of a breaking merge, and dropping it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from seawall.git import AgentChange, integrate_wave, merge_wave, run_checks
from seawall.git.checks import bisect_merges
from seawall.git.merge import MergeStatus
from seawall.model import CheckVerdict
from tests.integration.test_git_support import agent_commit, git, head, make_repo

CHECK = "test ! -e broken.txt"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"app.py": "ok\n"})


def _changes(repo: Path, base: str, count: int, breaker: int | None) -> list[AgentChange]:
    changes = []
    for n in range(count):
        files: dict[str, str | bytes | None] = {f"f{n}.txt": f"{n}\n"}
        if n == breaker:
            files["broken.txt"] = "this breaks the check\n"
        changes.append(AgentChange(task_id=f"t{n}", commit=agent_commit(repo, base, files)))
    return changes


def test_checks_run_in_a_temporary_worktree_and_leave_nothing_behind(repo: Path) -> None:
    commit = head(repo)
    run = run_checks(
        repo, commit, ["test -f app.py", 'pwd; echo "$SEAWALL_CHECK_COMMIT"', "false", "echo never"]
    )
    assert [result.returncode for result in run.results] == [0, 0, 1]
    assert commit in run.results[1].output
    assert not run.passed and run.failure is not None and run.failure.command == "false"
    assert str(repo / ".seawall" / "checks") in run.results[1].output
    assert git(repo, "worktree", "list").count("\n") == 1
    assert git(repo, "status", "--porcelain") == ""


def test_a_check_that_times_out_fails(repo: Path) -> None:
    start = time.monotonic()
    run = run_checks(repo, head(repo), ["sleep 5; echo never"], timeout=0.3)
    assert time.monotonic() - start < 4, "the whole process group must be killed"
    assert run.results[0].returncode is None
    assert "timed out" in run.results[0].output


def test_bisection_finds_the_breaking_merge_in_about_log2_runs(repo: Path) -> None:
    base = head(repo)
    result = merge_wave(
        repo, base=base, changes=_changes(repo, base, 8, breaker=5), session_id="s1", wave=1
    )
    found = bisect_merges(repo, result, [CHECK])
    assert found.culprit == "t5"
    assert len(found.runs) <= 3


def test_integrate_wave_drops_the_breaking_agent_and_merges_the_rest(repo: Path) -> None:
    base = head(repo)
    integration = integrate_wave(
        repo,
        base=base,
        changes=_changes(repo, base, 6, breaker=2),
        session_id="s1",
        wave=1,
        commands=[CHECK],
    )
    assert integration.passed
    assert set(integration.dropped) == {"t2"}
    assert integration.merge.agent("t2").status is MergeStatus.DROPPED
    assert "test ! -e broken.txt" in integration.merge.agent("t2").reason
    merged = [a.task_id for a in integration.merge.agents if a.merged]
    assert merged == ["t0", "t1", "t3", "t4", "t5"]
    files = set(git(repo, "ls-tree", "--name-only", integration.merge.integration).split())
    assert "broken.txt" not in files and "f5.txt" in files
    assert integration.check_runs <= 1 + 3 + 1


def test_a_failure_already_at_the_base_drops_nobody(repo: Path) -> None:
    base = head(repo)
    integration = integrate_wave(
        repo,
        base=base,
        changes=_changes(repo, base, 3, breaker=None),
        session_id="s1",
        wave=1,
        commands=["test -e never-there.txt"],
    )
    assert not integration.passed
    assert integration.dropped == {}
    assert integration.verdict is CheckVerdict.BASE_FAILS and not integration.mergeable
    assert all(agent.merged for agent in integration.merge.agents)
