"""Kill points: the coordinator is SIGKILLed at each named point, then `seawall resume`.

After each: every agent's work is reachable from a ref, the target branch is fully
merged, no merge or rebase state is left, no issue is duplicated, ``state.json`` is
valid, and STATE.md matches it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from seawall.runtime.processes import process_alive
from seawall.state.render import render_state_md
from seawall.state.store import load_state
from tests.integration.sessionkit import git, make_repo, seawall, show, write_plan
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

CHECK = (
    "import os, pathlib, time\n"
    "mark = pathlib.Path(os.environ['KILL_TEST_DIR']) / 'check-started'\n"
    "if os.environ.get('KILL_TEST_SLOW_CHECK') and not mark.exists():\n"
    "    mark.write_text(str(os.getpid())); time.sleep(60)\n"
)


def _setup(
    tmp_path: Path, *, slow_agent: bool = False, schedule: str = "waves"
) -> tuple[Path, Path, dict[str, str]]:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    (tmp_path / "check.py").write_text(CHECK)
    first_a: dict[str, object] = {"writes": {"src/a.py": "a = 1\n"}, "final": "STATUS: done — a"}
    if slow_agent:
        first_a = {"marker": str(tmp_path / "agent-started"), "sleep": 60, "final": "late"}
    spec = {
        "a": [first_a, {"writes": {"src/a.py": "a = 1\n"}, "final": "STATUS: done — a"}],
        "b": [
            {
                "commits": [{"writes": {"src/b.py": "b = 1\n"}, "message": "b"}],
                "final": "STATUS: done — b",
            }
        ],
        "c": [
            {"final": "STATUS: failed — ValueError: no config"},
            {"writes": {"src/c.py": "c = 1\n"}, "final": "STATUS: done — c"},
        ],
    }
    (tmp_path / "agents.json").write_text(json.dumps(spec))
    check = f"{sys.executable} {tmp_path / 'check.py'}"
    plan = write_plan(
        tmp_path / "plan.toml",
        session=f'name = "kp"\nisolation = "worktree"\nchecks = [{json.dumps(check)}]\n'
        f'schedule = "{schedule}"',
        tasks=[
            {"id": "a", "prompt": "Write a.", "scope": ["src/a.py"]},
            {"id": "b", "prompt": "Write b.", "scope": ["src/b.py"]},
            {"id": "c", "prompt": "Write c.", "scope": ["src/c.py"]},
        ],
    )
    env = {"AGENT_SPEC": str(tmp_path / "agents.json"), "KILL_TEST_DIR": str(tmp_path)}
    return repo, plan, env


def _assert_guarantees(repo: Path) -> None:
    sessions = list((repo / ".seawall").glob("kp-*/state.json"))
    assert len(sessions) == 1
    state = load_state(sessions[0])  # valid, current schema
    assert str(state.phase) == "done"
    assert (sessions[0].parent / "STATE.md").read_text() == render_state_md(state)
    for path, content in (
        ("src/a.py", "a = 1\n"),
        ("src/b.py", "b = 1\n"),
        ("src/c.py", "c = 1\n"),
    ):
        assert show(repo, "main", path) == content, path
    git_dir = repo / ".git"
    for leftover in (
        "MERGE_HEAD",
        "REBASE_HEAD",
        "rebase-merge",
        "rebase-apply",
        "CHERRY_PICK_HEAD",
        "index.lock",
    ):
        assert not (git_dir / leftover).exists(), leftover
    assert git(repo, "status", "--porcelain") == ""
    # nothing merged twice: every advance of the target branch is a different merge
    advances = [w.target_after for w in state.waves if w.target_after not in (None, w.start)]
    assert len(advances) == len(set(advances)), advances
    refs = git(repo, "for-each-ref", "--format=%(refname)", f"refs/seawall/{state.session}/")
    for task in ("a", "b", "c"):
        assert f"refs/seawall/{state.session}/{task}" in refs.splitlines(), task
    issues = sorted((repo / ".seawall" / "issues").glob("*.md"))
    markers = [re.findall(r"seawall:carryover [0-9a-f]+", p.read_text()) for p in issues]
    assert len(markers) == len({tuple(m) for m in markers}), "an issue was filed twice"
    # c's failure files one issue, unless the kill came before its report was read
    # (then c is salvaged as partial, re-dispatched, and no failure was ever seen)
    assert len(issues) <= 1
    if issues:
        assert "[Carryover] [FAILED]" in issues[0].read_text()


@pytest.mark.parametrize(
    "point",
    [
        "after-workspaces",
        "after-agent-finished",
        "after-agent-finished:3",
        "between-merges",
        "before-advance",
        "mid-advance",
        "after-issue-created",
        "while-writing-state:6",
    ],
)
@pytest.mark.parametrize("schedule", ["waves", "rolling"])
def test_kill_at_named_point_then_resume(tmp_path: Path, point: str, schedule: str) -> None:
    repo, plan, env = _setup(tmp_path, schedule=schedule)
    killed = seawall(
        "run", str(plan), "--repo", str(repo), cwd=repo, env={**env, "SEAWALL_KILL_AT": point}
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_guarantees(repo)


def _run_and_kill_when(
    tmp_path: Path, marker: Path, env: dict[str, str], repo: Path, plan: Path
) -> int:
    process = subprocess.Popen(
        [sys.executable, "-m", "seawall", "run", str(plan), "--repo", str(repo)],
        cwd=repo,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_until(marker.exists, timeout=60, what=f"{marker.name} to be written", process=process)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    assert process.returncode == -signal.SIGKILL
    return int(marker.read_text())


@pytest.mark.parametrize("schedule", ["waves", "rolling"])
def test_kill_during_dispatch_then_resume(tmp_path: Path, schedule: str) -> None:
    repo, plan, env = _setup(tmp_path, slow_agent=True, schedule=schedule)
    orphan = _run_and_kill_when(tmp_path, tmp_path / "agent-started", env, repo, plan)
    assert process_alive(orphan)  # the dead coordinator's agent is still running ...
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert not process_alive(orphan)  # ... until resume stops it before salvaging its work
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_guarantees(repo)
    state = load_state(next((repo / ".seawall").glob("kp-*/state.json")))
    first = state.waves[0].agent("a")
    assert first.status == "partial"  # salvaged, carried forward, finished next wave
    assert first.run is not None
    assert first.run.stop_reason == "the coordinator stopped before the agent reported"
    events = (repo / ".seawall" / state.session / "events.jsonl").read_text()
    salvaged = [json.loads(line) for line in events.splitlines() if "agent_salvaged" in line]
    assert "a" in {event["agent"] for event in salvaged}  # b and c may have reported first


def test_kill_during_checks_then_resume(tmp_path: Path) -> None:
    repo, plan, env = _setup(tmp_path)
    env = {**env, "KILL_TEST_SLOW_CHECK": "1"}
    before = git(repo, "rev-parse", "main")
    checker = _run_and_kill_when(tmp_path, tmp_path / "check-started", env, repo, plan)
    with contextlib.suppress(ProcessLookupError):  # a check the dead coordinator left
        os.killpg(os.getpgid(checker), signal.SIGKILL)
    assert git(repo, "rev-parse", "main") == before  # nothing advanced mid-check
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _assert_guarantees(repo)
