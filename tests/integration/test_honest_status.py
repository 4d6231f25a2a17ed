"""Status that does not mislead: a dead coordinator's session is interrupted, Ctrl-C
names the resume command, and a finished plan run again says it is finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from seawall.runtime.files import file_lock
from tests.integration.sessionkit import make_repo, seawall, write_plan
from tests.waiting import wait_until


def _plan(
    tmp_path: Path, spec: dict[str, list[dict[str, object]]]
) -> tuple[Path, Path, dict[str, str]]:
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "agents.json").write_text(json.dumps(spec))
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "hs"',
        tasks=[
            {"id": "a", "prompt": "Write a.", "scope": ["src/a.py"]},
            {"id": "b", "prompt": "Write b.", "scope": ["src/b.py"], "depends_on": ["a"]},
            {"id": "c", "prompt": "Write c.", "scope": ["src/c.py"], "depends_on": ["b"]},
        ],
    )
    return repo, plan, {"AGENT_SPEC": str(tmp_path / "agents.json")}


def _writes(name: str) -> list[dict[str, object]]:
    return [{"writes": {f"src/{name}.py": f"{name} = 1\n"}, "final": f"STATUS: done — {name}"}]


SPEC = {name: _writes(name) for name in "abc"}


def test_a_killed_coordinator_leaves_an_interrupted_session(tmp_path: Path) -> None:
    repo, plan, env = _plan(tmp_path, SPEC)
    killed = seawall(
        "run",
        str(plan),
        "--repo",
        str(repo),
        cwd=repo,
        env={**env, "SEAWALL_KILL_AT": "after-agent-finished"},
    )
    assert killed.returncode == -signal.SIGKILL
    text = seawall("status", "--repo", str(repo), cwd=repo, check=True).stdout
    assert "phase: **interrupted: run `seawall resume`**" in text
    assert "RUNNING" not in text
    data = json.loads(seawall("status", "--json", "--repo", str(repo), cwd=repo).stdout)
    assert data["phase"] == "interrupted" and data["next"] == "seawall resume"
    assert {a["status"] for w in data["waves"] for a in w["agents"]} == {"interrupted"}

    # while a coordinator holds the lock, the same ledger reads as running
    lock = next((repo / ".seawall").glob("hs-*/lock"))
    with file_lock(lock, blocking=False):
        live = json.loads(seawall("status", "--json", "--repo", str(repo), cwd=repo).stdout)
    assert live["phase"] == "running" and live["next"] is None

    resumed = seawall("resume", "--json", "--repo", str(repo), cwd=repo, env=env)
    result = json.loads(resumed.stdout)
    assert resumed.returncode == 0 and result["phase"] == "done"
    assert result["report"] and Path(result["report"]).is_file()
    after = json.loads(seawall("status", "--json", "--repo", str(repo), cwd=repo).stdout)
    assert after["phase"] == "done"


def test_ctrl_c_prints_the_resume_command(tmp_path: Path) -> None:
    marker = tmp_path / "agent-started"
    spec = {**SPEC, "a": [{"marker": str(marker), "sleep": 60, "final": "late"}]}
    repo, plan, env = _plan(tmp_path, spec)
    process = subprocess.Popen(
        [sys.executable, "-m", "seawall", "run", str(plan), "--repo", str(repo)],
        cwd=repo,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until(marker.exists, timeout=60, what="the agent to start", process=process)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, out + err
    session = next((repo / ".seawall").glob("hs-*")).name
    assert f"seawall resume --repo {repo} --session {session}" in err
    agent = int(marker.read_text())
    assert not Path(f"/proc/{agent}").exists() or _zombie(agent)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def test_a_finished_plan_run_again_says_it_is_finished(tmp_path: Path) -> None:
    repo, plan, env = _plan(tmp_path, SPEC)
    first = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "already finished" not in first.stdout
    again = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "the plan was already finished" in again.stdout
    assert "breaker" not in again.stdout and "seawall resume" not in again.stdout
    assert "report: " in again.stdout


def test_a_wave_a_lead_dispatched_is_waiting_not_interrupted(tmp_path: Path) -> None:
    repo, plan, _ = _plan(tmp_path, SPEC)
    seawall("wave", "prepare", str(plan), "--json", "--repo", str(repo), cwd=repo, check=True)
    data = json.loads(seawall("status", "--json", "--repo", str(repo), cwd=repo).stdout)
    assert data["phase"] == "running" and data["next"] is None
    assert "interrupted" not in seawall("status", "--repo", str(repo), cwd=repo).stdout
