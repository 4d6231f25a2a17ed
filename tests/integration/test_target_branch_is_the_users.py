"""The target branch belongs to the user: a commit or a reset on it while an in-place
wave runs (or while the coordinator is dead) halts the session with exit code 3 naming
both tips; nothing of the user's is undone, and ``seawall resume --rebase`` merges the
wave onto the new tip."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.integration.sessionkit import git, make_repo, seawall, show, status, write_plan
from tests.waiting import wait_until


def _spec(tmp_path: Path, spec: dict[str, object]) -> dict[str, str]:
    path = tmp_path / "agents.json"
    path.write_text(json.dumps(spec))
    return {"AGENT_SPEC": str(path)}


def _start(repo: Path, plan: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "seawall", "run", str(plan), "--repo", str(repo)],
        cwd=repo,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _two_agents(tmp_path: Path, marker: Path, *, sleep: float) -> tuple[Path, dict[str, str]]:
    env = _spec(
        tmp_path,
        {
            "a": [
                {
                    "writes": {"src/a.py": "a = 1\n"},
                    "marker": str(marker),
                    "sleep": sleep,
                    "final": "STATUS: done — a",
                },
                {"writes": {"src/a.py": "a = 1\n"}, "final": "STATUS: done — a"},
            ],
            "b": [{"writes": {"lib/b.py": "b = 1\n"}, "final": "STATUS: done — b"}],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "mine"\nisolation = "none"',
        tasks=[
            {"id": "a", "prompt": "a", "scope": ["src/a.py"]},
            {"id": "b", "prompt": "b", "scope": ["lib/b.py"]},
        ],
    )
    return plan, env


def _user_commit(repo: Path, name: str) -> str:
    (repo / name).write_text("the user's own work\n")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"user: {name}")
    return git(repo, "rev-parse", "main")


def test_a_user_commit_during_an_in_place_wave_halts_and_rebase_keeps_it(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    start = git(repo, "rev-parse", "main")
    marker = tmp_path / "a.started"
    plan, env = _two_agents(tmp_path, marker, sleep=3)
    process = _start(repo, plan, env)
    wait_until(marker.exists, timeout=60, what="agent a to start", process=process)
    user_tip = _user_commit(repo, "USER.txt")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 3, out + err
    # nothing of the user's is undone: the commit is on main, the file on disk
    assert git(repo, "rev-parse", "main") == user_tip
    assert (repo / "USER.txt").read_text() == "the user's own work\n"
    assert start[:12] in out + err and user_tip[:12] in out + err
    assert "resume --rebase" in out + err
    assert "done: none; not merged yet: a, b" in out  # reviewed is not landed
    # the agents' work is still in the tree, not lost
    assert (repo / "src" / "a.py").read_text() == "a = 1\n"
    done = seawall("resume", "--rebase", "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert show(repo, "main", "USER.txt") == "the user's own work\n"
    assert show(repo, "main", "src/a.py") == "a = 1\n"
    assert show(repo, "main", "lib/b.py") == "b = 1\n"
    assert git(repo, "merge-base", "--is-ancestor", user_tip, "main") == ""
    assert git(repo, "status", "--porcelain") == ""


def test_a_reset_while_the_coordinator_is_dead_halts_and_nothing_is_undone(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    first = _user_commit(repo, "EARLIER.txt")
    marker = tmp_path / "a.started"
    plan, env = _two_agents(tmp_path, marker, sleep=30)
    process = _start(repo, plan, env)
    wait_until(marker.exists, timeout=60, what="agent a to start", process=process)
    wait_until(
        lambda: (repo / "lib" / "b.py").exists(), timeout=60, what="agent b", process=process
    )
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    # the agent the coordinator started may outlive it: end it the way a reboot would
    pid = int(marker.read_text())
    with contextlib.suppress(ProcessLookupError):
        os.killpg(os.getpgid(pid), signal.SIGKILL)
    # the user moves main back one commit (a mixed reset: EARLIER.txt stays on disk)
    git(repo, "reset", "-q", "HEAD~1")
    back = git(repo, "rev-parse", "main")
    assert back != first
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr
    text = resumed.stdout + resumed.stderr
    assert first[:12] in text and back[:12] in text
    assert git(repo, "rev-parse", "main") == back  # the user's reset is not undone
    assert (repo / "EARLIER.txt").read_text() == "the user's own work\n"
    assert "deleted" not in git(repo, "status", "--porcelain")
    done = seawall("resume", "--rebase", "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(repo, "merge-base", "--is-ancestor", back, "main") == ""
    assert show(repo, "main", "src/a.py") == "a = 1\n"
    assert show(repo, "main", "lib/b.py") == "b = 1\n"
    assert show(repo, "main", "EARLIER.txt") is None  # the user took it off main ...
    assert (repo / "EARLIER.txt").read_text() == "the user's own work\n"  # ... not off disk
    assert status(repo)["phase"] in ("finished", "done")
