"""Reverting a worktree agent, and handing an agent's last checkpoint to the merge."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio

from seawall.git import (
    Checkpointer,
    CheckpointMode,
    MergeStatus,
    Workspace,
    agent_change,
    merge_wave,
    prepare_workspaces,
    prune_worktrees,
    revert_agent,
)
from seawall.model import Isolation
from tests.integration.test_git_support import git, head, make_repo


def _worktree(repo: Path, task: str) -> Workspace:
    async def main() -> tuple[Workspace, ...]:
        return await prepare_workspaces(
            repo, session_id="s1", wave=1, base=head(repo), task_ids=[task],
            isolation=Isolation.WORKTREE,
        )  # fmt: skip

    return anyio.run(main)[0]


def test_reverting_a_worktree_agent_resets_it_and_keeps_its_work_on_the_ref(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, {"app.py": "v0\n"})
    base = head(repo)
    workspace = _worktree(repo, "t1")
    root = Path(workspace.path)
    (root / "app.py").write_text("committed\n")
    git(root, "commit", "-qam", "agent commit")
    (root / "extra.txt").write_text("uncommitted\n")
    agent = Checkpointer(root, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.TREE)
    result = revert_agent(agent, reason="spiral")
    assert result.restored == ("app.py", "extra.txt")
    assert head(root) == base and not (root / "extra.txt").exists()
    assert (root / "app.py").read_text() == "v0\n"
    assert result.saved_at is not None
    assert git(repo, "show", f"{result.saved_at}:extra.txt") == "uncommitted\n"
    parents = git(repo, "log", "-1", "--format=%P", result.saved_at).split()
    assert git(repo, "log", "-1", "--format=%s", parents[0]).strip() == "agent commit"
    assert [info.task for info in prune_worktrees(repo).removed] == ["t1"]


def test_agent_change_takes_a_final_checkpoint_of_uncommitted_work(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "v0\n"})
    base = head(repo)
    busy, idle = _worktree(repo, "busy"), _worktree(repo, "idle")
    (Path(busy.path) / "app.py").write_text("never committed by the agent\n")
    changes = [
        agent_change(
            Checkpointer(
                ws.path, session_id="s1", task_id=ws.task_id, base=base, mode=ws.checkpoint_mode
            ),
            title=f"{ws.task_id} work",
        )
        for ws in (busy, idle)
    ]
    assert changes[1].commit == base
    result = merge_wave(repo, base=base, changes=changes, session_id="s1", wave=1)
    assert result.agent("busy").status is MergeStatus.MERGED
    assert result.agent("idle").status is MergeStatus.EMPTY
    assert git(repo, "show", f"{result.integration}:app.py") == "never committed by the agent\n"


def test_prune_removes_check_worktrees_of_dead_processes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "v0\n"})
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = repo / ".seawall" / "checks" / f"check-{dead.stdout.strip()}-abc"
    live = repo / ".seawall" / "checks" / f"check-{os.getpid()}-def"
    for folder in (stale, live):
        git(repo, "worktree", "add", "-q", "--detach", str(folder), "HEAD")
    prune_worktrees(repo)
    listed = git(repo, "worktree", "list")
    assert str(stale) not in listed and not stale.exists()
    assert str(live) in listed
