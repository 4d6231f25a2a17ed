"""Shadow checkpoints: private refs, no index/HEAD/stash change, chained, no-op when unchanged."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pygit2
import pytest

from seawall.git import (
    Checkpointer,
    CheckpointMode,
    EntryKind,
    agent_history,
    checkpoint_ref,
)
from tests.integration.test_git_support import git, head, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"src/app.py": "print('v0')\n", "README.md": "readme\n"})


def _repo_state(root: Path) -> tuple[bytes, str, str, str]:
    index = (root / ".git" / "index").read_bytes()
    return index, head(root), git(root, "stash", "list"), git(root, "branch", "--list")


def test_checkpoint_with_stale_index_lock_touches_no_index_head_or_branch(repo: Path) -> None:
    base = head(repo)
    (repo / ".git" / "index.lock").write_text("stale lock of a crashed git\n")
    before = _repo_state(repo)
    checkpointer = Checkpointer(
        repo, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.PATHS
    )
    (repo / "src" / "app.py").write_text("print('v1')\n")
    (repo / "src" / "new.py").write_text("x = 1\n")
    first = checkpointer.checkpoint(["src/app.py", str(repo / "src" / "new.py")])
    assert first is not None
    assert _repo_state(repo) == before
    assert (repo / ".git" / "index.lock").read_text() == "stale lock of a crashed git\n"
    ref_tip = git(repo, "rev-parse", checkpoint_ref("s1", "t1")).strip()
    assert ref_tip == first
    assert git(repo, "show", f"{first}:src/new.py") == "x = 1\n"
    assert git(repo, "rev-parse", f"{first}^").strip() == base
    assert "M src/app.py" in git(repo, "status", "--porcelain")


def test_checkpoints_chain_and_skip_when_nothing_changed(repo: Path) -> None:
    base = head(repo)
    checkpointer = Checkpointer(
        repo, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.PATHS
    )
    assert checkpointer.checkpoint(["src/app.py"]) is None  # unchanged from the base
    (repo / "src" / "app.py").write_text("print('v1')\n")
    first = checkpointer.checkpoint(["src/app.py"])
    assert checkpointer.checkpoint() is None
    (repo / "src" / "app.py").write_text("print('v2')\n")
    second = checkpointer.checkpoint()  # remembered paths are re-read
    assert first is not None and second is not None
    assert git(repo, "rev-parse", f"{second}^").strip() == first


def test_in_place_snapshots_only_the_touched_paths(repo: Path) -> None:
    base = head(repo)
    (repo / "README.md").write_text("someone else's edit\n")
    (repo / "src" / "app.py").write_text("print('mine')\n")
    checkpointer = Checkpointer(
        repo, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.PATHS
    )
    commit = checkpointer.checkpoint(["src/app.py", "../outside.txt", ".git/config"])
    assert commit is not None
    changed = git(repo, "diff", "--name-only", base, commit).split()
    assert changed == ["src/app.py"]
    assert checkpointer.touched_paths == frozenset({"src/app.py"})


def test_worktree_mode_snapshots_the_whole_tree_but_not_ignored_files(repo: Path) -> None:
    base = head(repo)
    (repo / ".gitignore").write_text("build/\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("binary\n")
    (repo / "notes.txt").write_text("untracked note\n")
    (repo / "README.md").unlink()
    (repo / ".git" / "index.lock").write_text("stale\n")
    before = _repo_state(repo)
    checkpointer = Checkpointer(
        repo, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.TREE
    )
    commit = checkpointer.checkpoint()
    assert commit is not None
    assert _repo_state(repo) == before
    paths = set(git(repo, "ls-tree", "-r", "--name-only", commit).split())
    assert paths == {".gitignore", "notes.txt", "src/app.py"}


def test_wip_says_the_work_is_unverified_and_is_recorded_in_history(repo: Path) -> None:
    base = head(repo)
    checkpointer = Checkpointer(
        repo, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.PATHS
    )
    assert checkpointer.wip("cancelled") is None  # nothing changed at all
    (repo / "src" / "app.py").write_text("print('half')\n")
    checkpointer.checkpoint(["src/app.py"])
    wip = checkpointer.wip("turn limit")
    assert wip is not None
    message = git(repo, "log", "-1", "--format=%B", wip)
    assert message.startswith("wip: t1 stopped (turn limit); unverified work")
    history = agent_history(repo, session_id="s1", task_id="t1", base=base)
    assert [entry.kind for entry in history.checkpoints] == [EntryKind.CHECKPOINT, EntryKind.WIP]
    assert history.checkpoints[1].changes == ()


def test_a_new_dispatch_keeps_the_earlier_attempt_reachable(repo: Path) -> None:
    base = head(repo)
    first = Checkpointer(repo, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.PATHS)
    (repo / "src" / "app.py").write_text("print('attempt 1')\n")
    old = first.checkpoint(["src/app.py"])
    git(repo, "checkout", "-q", "--", "src/app.py")
    (repo / "other.txt").write_text("next wave base\n")
    git(repo, "add", "other.txt")
    git(repo, "commit", "-q", "-m", "wave 1 merged")
    new_base = head(repo)
    second = Checkpointer(
        repo, session_id="s1", task_id="t1", base=new_base, mode=CheckpointMode.PATHS
    )
    assert second.tip is None
    (repo / "src" / "app.py").write_text("print('attempt 2')\n")
    new = second.checkpoint(["src/app.py"])
    parents = git(repo, "log", "-1", "--format=%P", str(new)).split()
    assert parents == [new_base, old]
    history = agent_history(repo, session_id="s1", task_id="t1", base=new_base)
    assert [entry.commit for entry in history.checkpoints] == [new]


def test_concurrent_checkpoints_from_threads_keep_one_chain(repo: Path) -> None:
    base = head(repo)
    checkpointer = Checkpointer(
        repo, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.PATHS
    )
    results: list[str | None] = []

    def edit(n: int) -> None:
        (repo / f"f{n}.txt").write_text(f"{n}\n")
        results.append(checkpointer.checkpoint([f"f{n}.txt"]))

    threads = [threading.Thread(target=edit, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    history = agent_history(repo, session_id="s1", task_id="t1", base=base)
    written = [commit for commit in results if commit is not None]
    assert sorted(entry.commit for entry in history.checkpoints) == sorted(written)
    assert len(written) == 6
    tip = pygit2.Repository(str(repo)).revparse_single(checkpoint_ref("s1", "t1"))
    assert {e.name for e in tip.peel(pygit2.Tree)} >= {f"f{n}.txt" for n in range(6)}


def test_async_checkpoint_runs_in_a_worker_thread(repo: Path) -> None:
    base = head(repo)
    checkpointer = Checkpointer(
        repo, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.PATHS
    )
    (repo / "src" / "app.py").write_text("print('async')\n")

    async def main() -> str | None:
        return await checkpointer.acheckpoint(["src/app.py"])

    commit = anyio.run(main)
    assert commit is not None and checkpointer.tip == commit


def test_task_ids_cannot_escape_the_ref_namespace(repo: Path) -> None:
    ref = checkpoint_ref("s1", "../../heads/main")
    assert ref.startswith("refs/seawall/s1/")
    assert ".." not in ref and ref.count("/") == 3
    assert checkpoint_ref("s1", "a/b") != checkpoint_ref("s1", "a-b")


def test_folders_symlinks_and_modes_are_snapshot_like_git_add(repo: Path) -> None:
    base = head(repo)
    checkpointer = Checkpointer(
        repo, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.PATHS
    )
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("a\n")
    (repo / "pkg" / "sub" / "b.py").write_text("b\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("README.md")
    (repo / "src" / "app.py").unlink()
    commit = checkpointer.checkpoint(["pkg", "run.sh", "link", "src/app.py"])
    assert commit is not None
    git(repo, "add", "-A")
    assert git(repo, "write-tree").strip() == git(repo, "rev-parse", f"{commit}^{{tree}}").strip()
    (repo / "pkg" / "sub" / "b.py").unlink()
    (repo / "src").rmdir()
    (repo / "src").write_text("a file where a folder was\n")
    commit = checkpointer.checkpoint(["src"])
    git(repo, "add", "-A")
    assert git(repo, "write-tree").strip() == git(repo, "rev-parse", f"{commit}^{{tree}}").strip()
