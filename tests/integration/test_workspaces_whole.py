"""Workspaces are whole or absent: an interrupted checkout is never read as deletions.

A worktree counts only once its checkout is verified; resume makes again what is not
(a checkout a kill interrupted, a folder deleted), and an agent branch that deletes
files the agent never touched is refused rather than merged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio

from seawall.git import list_worktrees, prepare_workspaces, prune_worktrees
from seawall.git.worktree_admin import admin_dir, remove_worktrees
from seawall.model import Isolation
from seawall.state.store import ledger_data
from tests.integration.sessionkit import git, make_repo, seawall, show, status, write_plan
from tests.waiting import wait_until

FILES = {f"pkg/m{i:03}.py": f"n = {i}\n" for i in range(60)}


def _prepare(repo: Path, tasks: list[str], **kwargs: object) -> list[Path]:
    base = git(repo, "rev-parse", "HEAD")

    async def main() -> list[Path]:
        made = await prepare_workspaces(
            repo,
            session_id="s1",
            wave=1,
            base=base,
            task_ids=tasks,
            isolation=Isolation.WORKTREE,
            **kwargs,  # type: ignore[arg-type]
        )
        assert all(w.isolation is Isolation.WORKTREE for w in made), made
        return [Path(w.path) for w in made]

    return anyio.run(main)


def _interrupt_checkout(repo: Path, worktree: Path) -> None:
    """Leave ``worktree`` as a SIGKILL during ``git worktree add`` does: locked
    "initializing", most files not checked out yet, no ready marker."""
    admin = admin_dir(repo, worktree)
    assert admin is not None
    (admin / "locked").write_text("initializing")
    (admin / "seawall-ready").unlink()
    for path in sorted((worktree / "pkg").iterdir())[5:]:
        path.unlink()


def test_an_interrupted_checkout_is_made_again_not_reused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    (worktree,) = _prepare(repo, ["a"])
    _interrupt_checkout(repo, worktree)
    (again,) = _prepare(repo, ["a"])  # what resume does for a wave not yet dispatched
    assert again == worktree
    assert sorted(p.name for p in (again / "pkg").iterdir()) == sorted(Path(p).name for p in FILES)
    assert git(again, "status", "--porcelain") == ""
    admin = admin_dir(repo, again)
    assert admin is not None and not (admin / "locked").exists()


def test_worktree_root_is_configurable_and_must_not_be_user_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    (chosen,) = _prepare(repo, ["a"], worktrees_under=str(tmp_path / "elsewhere"))
    assert chosen == tmp_path / "elsewhere" / "s1" / "w1" / "a"
    (inside,) = _prepare(repo, ["b"], worktrees_under=".seawall/wt")  # ignored: allowed
    assert inside.is_relative_to(repo / ".seawall" / "wt")

    async def refused() -> None:
        await prepare_workspaces(
            repo,
            session_id="s1",
            wave=1,
            base=git(repo, "rev-parse", "HEAD"),
            task_ids=["c"],
            isolation=Isolation.WORKTREE,
            worktrees_under="trees",
        )

    try:
        anyio.run(refused)
    except Exception as exc:
        assert "session.worktree_root" in str(exc) and "not ignored" in str(exc)
    else:
        raise AssertionError("a worktree root in the working tree was accepted")


def test_concurrent_removal_of_many_worktrees_is_safe(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    tasks = [f"t{i}" for i in range(8)]
    made = _prepare(repo, tasks, max_parallel=4)
    halves = [made[:4], made[4:]]
    with ThreadPoolExecutor(max_workers=3) as pool:  # two cleanups and a removal at once
        pruned = [pool.submit(prune_worktrees, repo, paths=[str(p) for p in h]) for h in halves]
        pool.submit(remove_worktrees, repo, made[2:6]).result()
        assert all(len(f.result().kept) == 0 for f in pruned)
    assert list_worktrees(repo) == ()
    assert all(not path.exists() for path in made)
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def _kill_after_workspaces(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", **FILES})
    spec = {
        "a": [{"writes": {"src/a.py": "a = 1\n"}, "final": "STATUS: done — a"}],
        "b": [{"writes": {"src/b.py": "b = 1\n"}, "final": "STATUS: done — b"}],
    }
    (tmp_path / "agents.json").write_text(json.dumps(spec))
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "whole"\nisolation = "worktree"\nenforcement = "warn"',
        tasks=[
            {"id": "a", "prompt": "Write a.", "scope": ["src/a.py"]},
            {"id": "b", "prompt": "Write b.", "scope": ["src/b.py"]},
        ],
    )
    env = {"AGENT_SPEC": str(tmp_path / "agents.json")}
    killed = seawall(
        "run", str(plan), "--repo", str(repo), cwd=repo,
        env={**env, "SEAWALL_KILL_AT": "after-workspaces"},
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    return repo, plan, env


def test_resume_remakes_deleted_and_half_checked_out_worktrees(tmp_path: Path) -> None:
    repo, _plan, env = _kill_after_workspaces(tmp_path)
    workspaces = {a["task"]: a for a in json.loads(_state_json(repo))["waves"][0]["agents"]}
    shutil.rmtree(workspaces["a"]["workspace"])  # a folder deleted before its agent ran
    _interrupt_checkout(repo, Path(workspaces["b"]["workspace"]))
    # a check worktree a kill during the checks left (its process, pid 0x3fffff, is gone)
    stale = repo / ".seawall" / "checks" / "check-4194303-x1"
    git(repo, "worktree", "add", "--quiet", "--detach", str(stale), "HEAD")
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    for path, content in FILES.items():
        assert show(repo, "main", path) == content, path  # nothing deleted from main
    assert show(repo, "main", "src/a.py") == "a = 1\n"
    assert show(repo, "main", "src/b.py") == "b = 1\n"
    assert status(repo)["phase"] == "done"
    assert list_worktrees(repo) == ()
    assert not stale.exists()
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_branch_deleting_files_its_agent_never_touched_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", **FILES})
    marker = tmp_path / "started"
    spec = {
        "a": [
            {
                "marker": str(marker),
                "sleep": 3,
                "writes": {"src/a.py": "a = 1\n"},
                "final": "STATUS: done — a",
            }
        ]
    }
    (tmp_path / "agents.json").write_text(json.dumps(spec))
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "guard"\nisolation = "worktree"\nenforcement = "warn"',
        tasks=[{"id": "a", "prompt": "Write a.", "scope": ["src/a.py"]}],
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "seawall", "run", str(plan), "--repo", str(repo)],
        cwd=repo,
        env={**os.environ, "AGENT_SPEC": str(tmp_path / "agents.json")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until(marker.exists, timeout=60, what="the agent to start", process=process)
    workspace = Path(json.loads(_state_json(repo))["waves"][0]["agents"][0]["workspace"])
    for gone in sorted((workspace / "pkg").iterdir())[10:]:
        gone.unlink()  # files vanish from the checkout under the agent
    out, err = process.communicate(timeout=120)
    for path, content in FILES.items():
        assert show(repo, "main", path) == content, path
    assert show(repo, "main", "src/a.py") is None  # the branch was not merged ...
    assert "deletes 50 file(s)" in out + err and "never touched" in out + err
    dropped = json.loads(_state_json(repo))["waves"][0]["dropped"]
    assert dropped and dropped[0]["task"] == "a" and "never touched" in dropped[0]["reason"]
    session = status(repo)["session"]
    assert git(repo, "show", f"refs/seawall/{session}/a:src/a.py") == "a = 1"  # ... kept


def _state_json(repo: Path) -> str:
    """The ledger (snapshot and journal) of the one session, as JSON text."""
    (path,) = (repo / ".seawall").glob("*/state.json")
    return json.dumps(ledger_data(path))


def test_the_scope_hook_allows_in_scope_edits_in_a_default_worktree(tmp_path: Path) -> None:
    from tests.integration.test_hooks import SESSION, make_manifest, pre, run_hook

    repo = make_repo(tmp_path / "repo", {"src/app/x.py": "x = 1\n", "other/y.py": "y\n"})
    base = git(repo, "rev-parse", "HEAD")

    async def main() -> Path:
        (made,) = await prepare_workspaces(
            repo, session_id=SESSION, wave=1, base=base, task_ids=["t1"],
            isolation=Isolation.WORKTREE,
        )  # fmt: skip
        return Path(made.path)

    worktree = anyio.run(main)
    assert not worktree.resolve().is_relative_to(repo.resolve())
    make_manifest(repo, workspaces={"t1": worktree, "t2": repo})
    env = {  # as Claude Code runs the hook of an agent working in that worktree
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "CLAUDE_PROJECT_DIR": str(worktree),
    }
    allowed = pre(worktree, "Write", {"file_path": str(worktree / "src/app/n.py")})
    _, out, _ = run_hook("pre-tool-use", allowed, env)
    assert out is None  # allowed: not mistaken for seawall's own state
    denied = pre(worktree, "Write", {"file_path": str(worktree / "other/y.py")})
    _, out, _ = run_hook("pre-tool-use", denied, env)
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
