"""Checks gate the merge by policy, and what happened is said everywhere, exit code too."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from seawall.exitcodes import ExitCode
from seawall.telemetry import ChecksRun, read_events
from tests.integration.sessionkit import git, make_repo, seawall, show, status, write_plan

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
FAILING_TEST = "def test_old():\n    assert False\n"


def _session(
    tmp_path: Path,
    *,
    files: dict[str, str],
    agents: dict[str, dict[str, str]],
    policy: str | None,
    check: str = PYTEST,
) -> tuple[Path, Any]:
    repo = make_repo(tmp_path / "repo", files)
    spec = tmp_path / "agents.json"
    spec.write_text(
        json.dumps(
            {
                task: [{"writes": writes, "final": f"STATUS: done — {task}"}]
                for task, writes in agents.items()
            }
        )
    )
    config = f'name = "checks"\nisolation = "worktree"\nchecks = [{json.dumps(check)}]'
    if policy is not None:
        config += f"\nchecks_policy = {json.dumps(policy)}"
    plan = write_plan(
        tmp_path / "plan.toml",
        session=config,
        tasks=[
            {"id": task, "prompt": f"Do {task}.", "scope": list(writes)}
            for task, writes in agents.items()
        ],
    )
    done = seawall(
        "run", str(plan), "--repo", str(repo), cwd=repo, env={"AGENT_SPEC": str(spec)}, timeout=240
    )
    return repo, done


def _checks(repo: Path, data: dict[str, Any]) -> list[ChecksRun]:
    return list(read_events(repo / ".seawall" / data["session"] / "events.jsonl", ChecksRun))


def _state_md(repo: Path, data: dict[str, Any]) -> str:
    return (repo / ".seawall" / str(data["session"]) / "STATE.md").read_text()


@pytest.mark.slow
def test_block_checks_the_base_before_anyone_spends(tmp_path: Path) -> None:
    repo, done = _session(
        tmp_path,
        files={"tests/test_old.py": FAILING_TEST},
        agents={"a": {"src/a.py": "a = 1\n"}},
        policy=None,  # block is the default
    )
    base = git(repo, "rev-parse", "main")
    assert done.returncode == ExitCode.CHECKS_FAILED, done.stdout + done.stderr
    assert show(repo, "main", "src/a.py") is None and git(repo, "rev-parse", "main") == base
    assert "before any agent ran" in done.stderr and "nothing was dispatched" in done.stderr
    assert "checks-fail-at-base" in done.stdout
    assert "done: none" in done.stdout  # no task is called done
    assert 'checks_policy = "baseline"' in done.stdout  # the way for tasks that fix them
    assert not (tmp_path / "agents.a.count").exists()  # no agent ran, nothing was spent
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    data = status(repo)
    assert data["phase"] == "halted" and data["halt"]["reason"] == "checks-fail-at-base"
    wave = data["waves"][0]
    assert wave["agents"] == [] and wave["phase"] == "planned"
    checks = wave["checks"]
    assert (checks["policy"], checks["verdict"]) == ("block", "base-fails")
    assert checks["failure"]["command"] == PYTEST and checks["failure"]["returncode"] == 1
    assert checks["commit"] == base
    assert [e.verdict for e in _checks(repo, data)] == ["base-fails"]
    # the user fixes the base; resume checks the fixed base and runs the wave from it
    (repo / "tests" / "test_old.py").write_text("def test_old():\n    assert True\n")
    git(repo, "commit", "-qam", "fix the old test")
    fixed = git(repo, "rev-parse", "main")
    env = {"AGENT_SPEC": str(tmp_path / "agents.json")}
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env, timeout=240)
    assert resumed.returncode == ExitCode.OK, resumed.stdout + resumed.stderr
    assert show(repo, "main", "src/a.py") == "a = 1\n"
    assert git(repo, "merge-base", "--is-ancestor", fixed, "main") == ""
    assert status(repo)["waves"][0]["checks"]["verdict"] == "passed"


@pytest.mark.slow
def test_a_base_without_tests_is_no_baseline_not_a_failing_base(tmp_path: Path) -> None:
    repo, done = _session(
        tmp_path,
        files={"README.md": "# no tests yet\n"},
        agents={
            "good": {"tests/test_good.py": "def test_good():\n    assert True\n"},
            "bad": {"tests/test_bad.py": "def test_bad():\n    assert False\n"},
        },
        policy="block",
    )
    data = status(repo)
    checks = data["waves"][0]["checks"]
    assert checks["verdict"] == "passed", checks
    agents = {a["task"]: a for a in data["waves"][0]["agents"]}
    assert agents["good"]["merged"] and not agents["bad"]["merged"]
    assert show(repo, "main", "tests/test_good.py") is not None
    assert show(repo, "main", "tests/test_bad.py") is None
    assert "its merge breaks the check" in _state_md(repo, data)
    assert done.returncode != ExitCode.CHECKS_FAILED, done.stdout + done.stderr


@pytest.mark.slow
def test_baseline_merges_with_the_base_failures_and_drops_new_ones(tmp_path: Path) -> None:
    repo, done = _session(
        tmp_path,
        files={"tests/test_old.py": FAILING_TEST},
        agents={
            "fine": {"src/fine.py": "fine = 1\n"},
            "breaks": {"tests/test_new.py": "def test_new():\n    assert False\n"},
        },
        policy="baseline",
    )
    assert done.returncode == ExitCode.CHECKS_FAILED, done.stdout + done.stderr
    data = status(repo)
    checks = data["waves"][0]["checks"]
    assert (checks["policy"], checks["verdict"]) == ("baseline", "known-failures")
    assert checks["baseline"]["failure"]["command"] == PYTEST
    assert show(repo, "main", "src/fine.py") == "fine = 1\n"
    assert show(repo, "main", "tests/test_new.py") is None  # a failure the base does not have
    agents = {a["task"]: a for a in data["waves"][0]["agents"]}
    assert agents["fine"]["merged"] and not agents["breaks"]["merged"]
    assert "dropped `breaks`: its merge breaks the check" in _state_md(repo, data)
    assert "fails them the same way" in done.stderr and "fails them the same way" in _state_md(
        repo, data
    )
    assert "merged with failing checks" in done.stdout
    assert [e.verdict for e in _checks(repo, data)] == ["known-failures"]


def test_warn_merges_a_failing_wave_and_says_so(tmp_path: Path) -> None:
    repo, done = _session(
        tmp_path,
        files={"README.md": "# p\n"},
        agents={"breaks": {"broken.txt": "x\n"}},
        policy="warn",
        check="test ! -e broken.txt",
    )
    assert done.returncode == ExitCode.CHECKS_FAILED, done.stdout + done.stderr
    assert show(repo, "main", "broken.txt") == "x\n"
    data = status(repo)
    assert data["phase"] == "done"
    assert data["waves"][0]["checks"]["verdict"] == "failed-merged"
    assert 'under checks_policy = "warn"' in done.stderr
    assert 'under checks_policy = "warn"' in _state_md(repo, data)
    assert [e.verdict for e in _checks(repo, data)] == ["failed-merged"]


def test_passing_checks_exit_zero(tmp_path: Path) -> None:
    # a task meant to make a failing check pass: "baseline" knows the base fails it
    repo, done = _session(
        tmp_path,
        files={"README.md": "# p\n"},
        agents={"fine": {"fine.txt": "x\n"}},
        policy="baseline",
        check="test -e fine.txt",
    )
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    data = status(repo)
    assert data["waves"][0]["checks"]["verdict"] == "passed"
    assert [e.verdict for e in _checks(repo, data)] == ["passed"]


def test_step_mode_review_says_what_the_checks_did(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "lead"\nchecks = ["test ! -e broken.txt"]\nchecks_policy = "warn"\n'
        '[[task]]\nid = "a"\nprompt = "Write it."\nscope = ["broken.txt"]\n'
    )
    prepared = seawall("wave", "prepare", str(plan), "--json", "--repo", str(repo), cwd=repo)
    assert prepared.returncode == 0, prepared.stderr
    (agent,) = json.loads(prepared.stdout)["agents"]
    Path(agent["workspace"], "broken.txt").write_text("x\n")
    outputs = json.dumps({"outputs": {"a": "STATUS: done — wrote it"}})
    reviewed = seawall("wave", "review", "--json", "--repo", str(repo), cwd=repo, stdin=outputs)
    assert reviewed.returncode == 0, reviewed.stderr
    report = json.loads(reviewed.stdout)
    assert report["checks"]["verdict"] == "failed-merged"
    assert report["checks"]["failure"]["command"] == "test ! -e broken.txt"
    assert report["halt"] is None
    assert 'under checks_policy = "warn"' in reviewed.stderr
