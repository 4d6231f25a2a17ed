"""`seawall resume` after a coordinator killed inside git: the lock its git left is
removed and the advance redone; a lock a live git holds is left alone, its holder named.

Real sessions (command-runner agents, real repository, the real CLI in a subprocess).
The first test kills the coordinator's process group while its ``git read-tree -m -u``
runs: a smudge filter on one of the files the advance writes blocks, in the main tree
only, so git has written some files and holds ``index.lock`` when it dies.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from seawall.state.render import render_state_md
from seawall.state.store import load_state
from tests.integration.sessionkit import git, make_repo, seawall, show, write_plan
from tests.integration.test_git_stale_locks import index_written
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


def _session(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    spec = {
        task: [{"writes": {f"src/{task}.py": f"{task} = 1\n"}, "final": f"STATUS: done — {task}"}]
        for task in ("a", "b")
    }
    (tmp_path / "agents.json").write_text(json.dumps(spec))
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "locks"\nisolation = "worktree"',
        tasks=[{"id": t, "prompt": f"Write {t}.", "scope": [f"src/{t}.py"]} for t in ("a", "b")],
    )
    return repo, plan, {"AGENT_SPEC": str(tmp_path / "agents.json")}


def _finished(repo: Path) -> None:
    (state_file,) = (repo / ".seawall").glob("locks-*/state.json")
    state = load_state(state_file)
    assert str(state.phase) == "done"
    assert (state_file.parent / "STATE.md").read_text() == render_state_md(state)
    assert show(repo, "main", "src/a.py") == "a = 1\n"
    assert show(repo, "main", "src/b.py") == "b = 1\n"
    git(repo, "fsck", "--no-dangling", "--no-progress")
    for name in ("index.lock", "HEAD.lock", "packed-refs.lock"):
        assert not (repo / ".git" / name).exists(), name
    assert not list((repo / ".git" / "refs").rglob("*.lock"))


def test_a_lock_a_killed_read_tree_left_is_removed_and_the_advance_redone(
    tmp_path: Path,
) -> None:
    repo, plan, env = _session(tmp_path)
    base = git(repo, "rev-parse", "main")
    blocked = tmp_path / "read-tree-blocked"
    main_tree = shlex.quote(str(repo.resolve()))
    smudge = (
        f'if [ "$(pwd -P)" = {main_tree} ]; then : > {shlex.quote(str(blocked))}; sleep 120; fi; '
        "cat"
    )
    git(repo, "config", "filter.slow.smudge", smudge)
    (repo / ".git" / "info" / "attributes").write_text("src/b.py filter=slow\n")
    run = subprocess.Popen(
        [sys.executable, "-m", "seawall", "run", str(plan), "--repo", str(repo)],
        cwd=repo,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_until(blocked.exists, timeout=120, interval=0.02, what="the advance to start", process=run)
    os.killpg(run.pid, signal.SIGKILL)  # the coordinator, its git read-tree, the filter
    run.communicate(timeout=60)
    lock = repo / ".git" / "index.lock"
    assert lock.exists() and lock.stat().st_size == 0  # what the killed read-tree left
    assert (repo / "src" / "a.py").read_text() == "a = 1\n"  # written before it died
    assert not (repo / "src" / "b.py").exists()
    assert git(repo, "rev-parse", "main") == base  # the branch had not moved yet
    git(repo, "config", "filter.slow.smudge", "cat")

    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "removed .git/index.lock, a lock left by a git process that no longer runs" in (
        resumed.stderr
    )
    _finished(repo)
    assert git(repo, "status", "--porcelain") == ""
    (events,) = (repo / ".seawall").glob("locks-*/events.jsonl")
    removed = [json.loads(line) for line in events.read_text().splitlines() if "git_lock" in line]
    assert [event["path"] for event in removed] == [str(lock.resolve())]
    status = seawall("status", "--repo", str(repo), cwd=repo, check=True)
    assert "seawall resume" not in status.stdout


def test_a_lock_a_live_git_holds_is_left_alone_and_its_holder_named(tmp_path: Path) -> None:
    repo, plan, env = _session(tmp_path)
    killed = seawall(
        "run",
        str(plan),
        "--repo",
        str(repo),
        cwd=repo,
        env={**env, "SEAWALL_KILL_AT": "before-advance"},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    (repo / "README.md").write_text("# p, the user's edit\n")
    user = subprocess.Popen(  # the user's own commit, its editor open: it holds index.lock
        ["git", "commit", "-a"],
        cwd=repo,
        env={**os.environ, "GIT_EDITOR": "sleep 120 #"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    lock = repo / ".git" / "index.lock"
    try:
        wait_until(
            lambda: index_written(lock),
            timeout=30,
            interval=0.02,
            what="git to take index.lock",
            process=user,
        )
        held = lock.read_bytes()

        refused = seawall("resume", "--repo", str(repo), cwd=repo, env=env)

        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert f"pid {user.pid} (`git commit -a`)" in refused.stderr
        assert f"kill {user.pid}" in refused.stderr
        assert "Then run `seawall resume` again" in refused.stderr
        assert "Unable to create" not in refused.stderr
        assert lock.read_bytes() == held and user.poll() is None  # untouched, still running
    finally:
        if user.poll() is None:
            os.killpg(user.pid, signal.SIGKILL)  # the user gives up: git leaves its lock
        user.wait(timeout=30)
    assert lock.exists()

    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "removed .git/index.lock" in resumed.stderr
    _finished(repo)
    assert (repo / "README.md").read_text() == "# p, the user's edit\n"
    assert git(repo, "status", "--porcelain") == "M README.md"
