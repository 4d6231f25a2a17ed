"""``seawall worktrees list|prune`` on a real repository, through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio

from seawall.git import prepare_workspaces
from seawall.git.workspaces import default_worktree_root
from seawall.model import Isolation
from tests.integration.test_git_support import head, make_repo


def _seawall(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "seawall", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_list_and_prune_report_owner_and_keep_dirty_work(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "v0\n"})

    async def prepare() -> None:
        await prepare_workspaces(
            repo,
            session_id="s9",
            wave=3,
            base=head(repo),
            task_ids=["clean", "busy"],
            isolation=Isolation.WORKTREE,
        )

    anyio.run(prepare)
    folder = default_worktree_root(repo) / "s9" / "w3"
    (folder / "busy" / "app.py").write_text("wip\n")

    listed = _seawall("worktrees", "list", "--json", cwd=repo)
    assert listed.returncode == 0, listed.stderr
    rows = {row["task"]: row for row in json.loads(listed.stdout)["worktrees"]}
    assert rows["busy"]["state"] == "dirty" and rows["busy"]["wave"] == 3
    assert rows["clean"]["state"] == "merged"

    table = _seawall("worktrees", "list", "--repo", str(repo), cwd=tmp_path)
    assert "owner s9/w3/busy" in table.stdout

    pruned = _seawall("worktrees", "prune", cwd=repo)
    assert pruned.returncode == 0, pruned.stderr
    assert f"removed {folder / 'clean'}" in pruned.stdout
    assert f"kept {folder / 'busy'}" in pruned.stdout
    assert "--force" in pruned.stdout

    forced = _seawall("worktrees", "prune", "--force", cwd=repo)
    assert f"removed {folder / 'busy'}" in forced.stdout
    assert "saved unmerged work as checkpoint" in forced.stdout
    assert _seawall("worktrees", "list", cwd=repo).stdout.strip() == "no seawall worktrees"


def test_outside_a_repository_the_error_is_clear(tmp_path: Path) -> None:
    done = _seawall("worktrees", "list", "--repo", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1
    assert "not inside a git repository" in done.stderr
