"""Sparse worktrees: an agent's checkout holds its folders, and no reader of a worktree
takes the files left out for deletions (checkpoints, merge, cleanup, the user's repo)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pygit2
import pytest

from seawall.git import (
    AgentChange,
    Checkpointer,
    CheckpointMode,
    list_worktrees,
    merge_wave,
    prepare_workspaces,
    prune_worktrees,
    save_worktree,
)
from seawall.git.tree_state import checkout_problem, skipped_paths, worktree_status
from seawall.git.worktree_admin import admin_dir, is_ready
from seawall.model import Isolation
from tests.integration.sessionkit import git, make_repo, seawall, show, status, write_plan
from tests.waiting import wait_until

FILES = {
    "README.md": "# p\n",
    "pyproject.toml": "[project]\nname = 'p'\n",
    "src/a/x.py": "x = 1\n",
    "src/b/y.py": "y = 1\n",
    **{f"pkg/m{i:03}.py": f"n = {i}\n" for i in range(40)},
}
OUTSIDE = sorted(path for path in FILES if path.startswith(("pkg/", "src/b/")))


def _prepare(repo: Path, sparse: dict[str, tuple[str, ...] | None]) -> list[Path]:
    base = git(repo, "rev-parse", "HEAD")

    async def main() -> list[Path]:
        made = await prepare_workspaces(
            repo, session_id="s1", wave=1, base=base, task_ids=list(sparse),
            isolation=Isolation.WORKTREE, sparse=sparse,
        )  # fmt: skip
        assert all(w.isolation is Isolation.WORKTREE for w in made), made
        return [Path(w.path) for w in made]

    return anyio.run(main)


def _files(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_a_sparse_worktree_holds_its_folders_and_reads_clean(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    config = (repo / ".git" / "config").read_bytes()
    sparse, whole = _prepare(repo, {"a": (".claude", "src/a"), "b": None})
    assert _files(sparse) == {"README.md", "pyproject.toml", "src/a/x.py"}
    assert _files(whole) == set(FILES)
    worktree = pygit2.Repository(str(sparse))
    assert skipped_paths(worktree) == frozenset(OUTSIDE)
    raw = worktree.status(untracked_files="no")  # what libgit2 alone reports
    assert sorted(raw) == OUTSIDE
    assert all(flags & pygit2.enums.FileStatus.WT_DELETED for flags in raw.values())
    assert worktree_status(worktree, untracked_files="no") == {}
    assert git(sparse, "status", "--porcelain") == ""
    assert (repo / ".git" / "config").read_bytes() == config  # the user's config untouched


def test_checkpoints_merges_and_cleanup_keep_the_files_left_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    base = git(repo, "rev-parse", "HEAD")
    one, two = _prepare(repo, {"a": (".claude", "src/a"), "b": (".claude", "src/b")})
    # agent a commits with git itself; agent b leaves its work to the checkpoints, and
    # also writes a file outside its sparse set (it is on disk now: it counts)
    (one / "src/a/x.py").write_text("x = 2\n")
    git(one, "commit", "-q", "-am", "a")
    (two / "src/b/y.py").write_text("y = 2\n")
    (two / "pkg").mkdir()
    (two / "pkg/m007.py").write_text("n = 'b'\n")
    checkpointer = Checkpointer(
        two, session_id="s1", task_id="b", base=base, mode=CheckpointMode.TREE
    )
    checkpoint = checkpointer.checkpoint()
    assert checkpoint is not None
    changed = git(repo, "diff", "--name-status", base, checkpoint).splitlines()
    assert changed == ["M\tpkg/m007.py", "M\tsrc/b/y.py"]
    assert not any(info.dirty for info in list_worktrees(repo) if info.task == "a")
    result = merge_wave(
        repo, base=base, session_id="s1", wave=1,
        changes=[
            AgentChange(task_id="a", commit=git(one, "rev-parse", "HEAD")),
            AgentChange(task_id="b", commit=checkpoint),
        ],
    )  # fmt: skip
    expected = {
        **FILES,
        "src/a/x.py": "x = 2\n",
        "src/b/y.py": "y = 2\n",
        "pkg/m007.py": "n = 'b'\n",
    }
    for path, content in expected.items():
        assert show(repo, result.integration, path) == content, path
    saved = save_worktree(two, session_id="s1", task_id="b", reason="test")
    assert git(repo, "diff", "--name-only", checkpoint, saved) == ""
    report = prune_worktrees(repo, force=True, paths=[str(one), str(two)])
    assert len(report.removed) == 2 and not report.kept
    for path, content in FILES.items():
        assert show(repo, "main", path) == content, path
    assert git(repo, "status", "--porcelain") == ""


KILLER = """\
import anyio, sys
from seawall.git import prepare_workspaces
from seawall.model import Isolation

async def main() -> None:
    await prepare_workspaces(
        sys.argv[1], session_id="s1", wave=1, base=sys.argv[2], task_ids=["a"],
        isolation=Isolation.WORKTREE, sparse={"a": (".claude", "src/a")},
    )

anyio.run(main)
"""


def test_a_kill_during_a_sparse_checkout_is_made_again_on_resume(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    base = git(repo, "rev-parse", "HEAD")
    marker = tmp_path / "checking-out"
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f'#!/bin/sh\n[ -e "{marker}" ] || {{ : > "{marker}"; sleep 60; }}\n')
    hook.chmod(0o755)
    process = subprocess.Popen(
        [sys.executable, "-c", KILLER, str(repo), base],
        cwd=repo,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            marker.exists,
            timeout=60,
            interval=0.02,
            what="the checkout to start",
            process=process,
        )
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    path = repo.parent / f".{repo.name}.seawall-worktrees" / "s1" / "w1" / "a"
    assert admin_dir(repo, path) is not None and not is_ready(repo, path, "seawall/s1/w1/a")
    (again,) = _prepare(repo, {"a": (".claude", "src/a")})
    assert again == path and is_ready(repo, path, "seawall/s1/w1/a")
    assert _files(again) == {"README.md", "pyproject.toml", "src/a/x.py"}
    assert worktree_status(pygit2.Repository(str(again))) == {}
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.slow
def test_a_sparse_session_merges_only_the_agents_work(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    marker = tmp_path / "b-started"
    spec = {
        "a": [
            {
                "commits": [{"writes": {"src/a/x.py": "x = 3\n"}, "message": "a"}],
                "final": "STATUS: done — a",
            }
        ],
        "b": [
            {
                "marker": str(marker),
                "sleep": 2,
                "writes": {"src/b/y.py": "y = 3\n"},
                "final": "STATUS: done — b",
            }
        ],
    }
    (tmp_path / "agents.json").write_text(json.dumps(spec))
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "sparse"\nisolation = "worktree"\nenforcement = "warn"\nsparse = true',
        tasks=[
            {"id": "a", "prompt": "Write a.", "scope": ["src/a/"]},
            {"id": "b", "prompt": "Write b.", "scope": ["src/b/"], "reads": ["src/a/"]},
        ],
    )
    env = {"AGENT_SPEC": str(tmp_path / "agents.json")}
    killed = seawall(
        "run", str(plan), "--repo", str(repo), cwd=repo,
        env={**env, "SEAWALL_KILL_AT": "after-workspaces"},
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    process = subprocess.Popen(
        [sys.executable, "-m", "seawall", "resume", "--repo", str(repo)],
        cwd=repo,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until(marker.exists, timeout=90, what="agent b to start", process=process)
    workspace = Path(marker.read_text() and _workspace(repo, "b"))
    seen = _files(workspace)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, out + err
    assert {"README.md", "pyproject.toml", "src/a/x.py", "src/b/y.py"} <= seen
    assert not any(path.startswith("pkg/") for path in seen), sorted(seen)
    expected = {**FILES, "src/a/x.py": "x = 3\n", "src/b/y.py": "y = 3\n"}
    for path, content in expected.items():
        assert show(repo, "main", path) == content, path
    assert status(repo)["phase"] == "done"
    assert list_worktrees(repo) == ()


def _workspace(repo: Path, task: str) -> str:
    from seawall.state.store import ledger_data

    (path,) = (repo / ".seawall").glob("*/state.json")
    agents = ledger_data(path)["waves"][0]["agents"]
    return str(next(a["workspace"] for a in agents if a["task"] == task))


def test_a_checkout_missing_or_cutting_short_a_file_is_not_whole(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    sparse, whole = _prepare(repo, {"a": (".claude", "src/a"), "b": None})
    for worktree in (sparse, whole):
        assert checkout_problem(pygit2.Repository(str(worktree))) is None
    (whole / "pkg/m003.py").unlink()
    assert checkout_problem(pygit2.Repository(str(whole))) == "pkg/m003.py is missing"
    (sparse / "src/a/x.py").write_text("x")
    assert checkout_problem(pygit2.Repository(str(sparse))) == "src/a/x.py is not whole"
    git(sparse, "read-tree", "--empty")
    assert checkout_problem(pygit2.Repository(str(sparse))) == "its index is not HEAD's tree"
