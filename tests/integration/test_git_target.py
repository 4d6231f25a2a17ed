"""Advancing the target branch: fast-forward, compare-and-swap, refusals, crash safety."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from seawall.errors import DirtyWorkingTreeError, GitError
from seawall.git import (
    AgentChange,
    Checkpointer,
    CheckpointMode,
    advance_target,
    merge_wave,
    revert_agent,
)
from tests.integration.test_git_support import agent_commit, git, head, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"a.txt": "a0\n", "b.txt": "b0\n", "user.txt": "u0\n"})


def _integration(repo: Path, base: str) -> str:
    first = agent_commit(repo, base, {"a.txt": "a1\n"})
    second = agent_commit(repo, base, {"new.txt": "new\n"})
    return merge_wave(
        repo,
        base=base,
        changes=[AgentChange(task_id="t1", commit=first), AgentChange(task_id="t2", commit=second)],
        session_id="s1",
        wave=1,
    ).integration


def test_advance_fast_forwards_and_keeps_unrelated_user_changes(repo: Path) -> None:
    base = head(repo)
    new = _integration(repo, base)
    (repo / "user.txt").write_text("user edit\n")
    result = advance_target(repo, branch="main", expected_old=base, new=new)
    assert head(repo) == new and result.working_tree_updated
    assert set(result.changed_paths) == {"a.txt", "new.txt"}
    assert (repo / "a.txt").read_text() == "a1\n"
    assert (repo / "new.txt").read_text() == "new\n"
    assert (repo / "user.txt").read_text() == "user edit\n"
    assert git(repo, "status", "--porcelain").splitlines() == [" M user.txt"]


def test_user_changes_in_a_touched_file_stop_everything(repo: Path) -> None:
    base = head(repo)
    new = _integration(repo, base)
    (repo / "a.txt").write_text("user's unsaved idea\n")
    (repo / "new.txt").write_text("user's own new file\n")
    with pytest.raises(DirtyWorkingTreeError) as caught:
        advance_target(repo, branch="main", expected_old=base, new=new)
    assert caught.value.paths == ("a.txt", "new.txt")
    assert head(repo) == base
    assert (repo / "a.txt").read_text() == "user's unsaved idea\n"
    assert (repo / "new.txt").read_text() == "user's own new file\n"


def test_a_branch_that_moved_is_not_advanced(repo: Path) -> None:
    base = head(repo)
    new = _integration(repo, base)
    (repo / "b.txt").write_text("b1\n")
    git(repo, "commit", "-qam", "someone else committed")
    moved = head(repo)
    with pytest.raises(GitError, match="moved"):
        advance_target(repo, branch="main", expected_old=base, new=new)
    assert head(repo) == moved
    assert git(repo, "status", "--porcelain") == ""


def test_a_branch_not_checked_out_moves_without_touching_the_tree(repo: Path) -> None:
    base = head(repo)
    new = _integration(repo, base)
    git(repo, "switch", "-q", "-c", "elsewhere")
    result = advance_target(repo, branch="main", expected_old=base, new=new)
    assert not result.working_tree_updated
    assert git(repo, "rev-parse", "main").strip() == new
    assert (repo / "a.txt").read_text() == "a0\n"


def test_an_in_place_wave_ends_as_one_commit_per_agent(repo: Path) -> None:
    base = head(repo)
    agents = {
        task: Checkpointer(
            repo, session_id="s1", task_id=task, base=base, mode=CheckpointMode.PATHS
        )
        for task in ("t1", "t2", "t3")
    }
    (repo / "a.txt").write_text("a by t1\n")
    agents["t1"].checkpoint(["a.txt"])
    (repo / "b.txt").write_text("b by t2\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("guide by t2\n")
    agents["t2"].checkpoint(["b.txt", "docs"])
    (repo / "loop").mkdir()
    (repo / "loop" / "spiral.txt").write_text("t3 went round in circles\n")
    (repo / "user.txt").write_text("t3 edited this too\n")
    agents["t3"].checkpoint(["loop", "user.txt"])
    reverted = revert_agent(agents["t3"], reason="spiral")
    assert reverted.restored == ("loop/spiral.txt", "user.txt")
    assert not (repo / "loop").exists()
    assert (repo / "user.txt").read_text() == "u0\n"
    saved = git(repo, "show", f"{reverted.saved_at}:loop/spiral.txt")
    assert saved == "t3 went round in circles\n"
    result = merge_wave(
        repo,
        base=base,
        changes=[
            AgentChange(task_id=task, commit=str(agents[task].tip), title=f"work of {task}")
            for task in ("t1", "t2")
        ],
        session_id="s1",
        wave=1,
    )
    touched = agents["t1"].touched_paths | agents["t2"].touched_paths
    advance_target(
        repo, branch="main", expected_old=base, new=result.integration, agent_paths=touched
    )
    assert git(repo, "log", "--format=%s", f"{base}..main").splitlines() == [
        "t2: work of t2",
        "t1: work of t1",
    ]
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "docs" / "guide.md").read_text() == "guide by t2\n"


def test_a_killed_process_between_two_merges_leaves_the_target_untouched(repo: Path) -> None:
    base = head(repo)
    first = agent_commit(repo, base, {"a.txt": "a1\n"})
    second = agent_commit(repo, base, {"b.txt": "b1\n"})
    index_before = (repo / ".git" / "index").read_bytes()
    script = textwrap.dedent(
        f"""
        import sys, time
        from seawall.git import AgentChange, merge_wave, advance_target

        def pause(merged):
            print("merged", merged.task_id, flush=True)
            time.sleep(60)

        result = merge_wave(
            {str(repo)!r}, base={base!r}, session_id="s1", wave=1, on_merged=pause,
            changes=[AgentChange(task_id="t1", commit={first!r}),
                     AgentChange(task_id="t2", commit={second!r})],
        )
        advance_target({str(repo)!r}, branch="main", expected_old={base!r},
                       new=result.integration)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=os.getcwd()
    ) as process:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "merged t1"
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
    assert head(repo) == base
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert not (repo / ".git" / "index.lock").exists()
    assert (repo / ".git" / "index").read_bytes() == index_before
