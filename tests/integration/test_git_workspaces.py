"""Workspaces: worktrees at the pinned base, fallback to in place, list and prune."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from seawall.errors import ConfigurationError, DirtyWorkingTreeError, GitError
from seawall.git import (
    AgentChange,
    Checkpointer,
    CheckpointMode,
    Workspace,
    advance_target,
    list_worktrees,
    merge_wave,
    pin_base,
    prepare_workspaces,
    prune_worktrees,
)
from seawall.git.workspaces import default_worktree_root
from seawall.git.worktree_admin import REMOVING_FILE, admin_dir
from seawall.model import Isolation
from tests.integration.test_git_support import commit_all, git, head, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"app.py": "v0\n"})


def _prepare(
    repo: Path, base: str, tasks: list[str], isolation: Isolation = Isolation.WORKTREE
) -> tuple[Workspace, ...]:
    async def main() -> tuple[Workspace, ...]:
        return await prepare_workspaces(
            repo, session_id="s1", wave=2, base=base, task_ids=tasks, isolation=isolation
        )

    return anyio.run(main)


def test_pin_base_names_the_branch_and_refuses_a_detached_head(repo: Path) -> None:
    pin = pin_base(repo)
    assert (pin.branch, pin.commit) == ("main", head(repo))
    git(repo, "checkout", "-q", "--detach")
    with pytest.raises(GitError, match="detached"):
        pin_base(repo)


def test_pin_base_refuses_a_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    with pytest.raises(GitError, match="no commits"):
        pin_base(tmp_path)


def test_worktrees_start_at_the_pinned_base_after_the_branch_moved(repo: Path) -> None:
    base = pin_base(repo).commit
    (repo / "app.py").write_text("v1\n")
    moved = commit_all(repo, "the target branch moves on")
    workspaces = _prepare(repo, base, ["t1", "../../escape"])
    for workspace in workspaces:
        path = Path(workspace.path)
        assert workspace.isolation is Isolation.WORKTREE
        assert workspace.fallback_reason is None
        assert head(path) == base != moved
        assert (path / "app.py").read_text() == "v0\n"
        # outside the repository's working tree, in the default folder next to it
        assert not path.resolve().is_relative_to(repo.resolve())
        assert path.resolve().is_relative_to(default_worktree_root(repo.resolve()))
        assert git(path, "branch", "--show-current").strip() == workspace.branch
    assert workspaces[0].branch == "seawall/s1/w2/t1"
    assert git(repo, "status", "--porcelain") == "", "worktrees are not the user's files"


def test_a_failed_worktree_falls_back_to_in_place_with_its_reason(repo: Path) -> None:
    base = head(repo)
    (repo / "app.py").write_text("someone else's\n")
    other = commit_all(repo, "a branch of that name with other work")
    git(repo, "reset", "-q", "--hard", base)
    git(repo, "branch", "seawall/s1/w2/t2", other)  # the name is taken: worktree add fails
    workspaces = _prepare(repo, base, ["t1", "t2"])
    assert [w.isolation for w in workspaces] == [Isolation.NONE, Isolation.NONE]
    assert all(w.path == str(repo) and w.branch is None for w in workspaces)
    reason = workspaces[0].fallback_reason
    assert reason is not None and "t2" in reason
    assert list_worktrees(repo) == ()  # the one that was made is undone
    assert "seawall/s1/w2/t1" not in git(repo, "branch", "--list")


def test_an_in_place_wave_needs_a_clean_working_tree(repo: Path) -> None:
    (repo / "app.py").write_text("user's work in progress\n")
    with pytest.raises(DirtyWorkingTreeError, match=r"app\.py") as caught:
        _prepare(repo, head(repo), ["t1"], Isolation.NONE)
    assert caught.value.paths == ("app.py",)
    assert (repo / "app.py").read_text() == "user's work in progress\n"


def test_list_shows_owner_and_prune_keeps_unmerged_work(repo: Path) -> None:
    base = head(repo)
    merged_ws, dirty_ws, _idle, shadow_ws = _prepare(
        repo, base, ["merged", "dirty", "idle", "shadow"]
    )
    Path(merged_ws.path, "app.py").write_text("merged work\n")
    merged_commit = commit_all(Path(merged_ws.path), "merged work")
    Path(dirty_ws.path, "wip.txt").write_text("not merged\n")
    Path(shadow_ws.path, "shadow.txt").write_text("uncommitted, checkpointed, merged\n")
    shadow = Checkpointer(
        shadow_ws.path, session_id="s1", task_id="shadow", base=base, mode=CheckpointMode.TREE
    ).checkpoint()
    assert shadow is not None
    result = merge_wave(
        repo,
        base=base,
        changes=[
            AgentChange(task_id="merged", commit=merged_commit),
            AgentChange(task_id="shadow", commit=shadow),
        ],
        session_id="s1",
        wave=2,
    )
    advance_target(repo, branch="main", expected_old=base, new=result.integration)
    infos = {info.task: info for info in list_worktrees(repo)}
    assert set(infos) == {"merged", "dirty", "idle", "shadow"}
    assert infos["shadow"].dirty and infos["shadow"].merged
    assert (infos["dirty"].session, infos["dirty"].wave) == ("s1", 2)
    assert infos["dirty"].dirty and not infos["dirty"].merged
    assert infos["merged"].merged and infos["idle"].merged
    assert infos["dirty"].age_seconds >= 0

    report = prune_worktrees(repo)
    assert {info.task for info in report.removed} == {"merged", "idle", "shadow"}
    (kept,) = report.kept
    assert kept.task == "dirty" and "uncommitted" in kept.reason
    assert Path(dirty_ws.path, "wip.txt").exists()
    assert not Path(merged_ws.path).exists()
    assert "seawall/s1/w2/merged" not in git(repo, "branch", "--list")

    forced = prune_worktrees(repo, force=True)
    assert [info.task for info in forced.removed] == ["dirty"]
    (saved,) = forced.salvaged
    assert git(repo, "show", f"{saved}:wip.txt") == "not merged\n"
    assert list_worktrees(repo) == ()


def test_list_and_prune_read_a_worktree_through_gits_record_of_it(
    repo: Path, tmp_path: Path
) -> None:
    """A worktree whose ``.git`` file its agent pointed at another repository is still
    listed and salvaged as itself: its work is not lost, and the other repository is not
    written."""
    base = head(repo)
    (workspace,) = _prepare(repo, base, ["dirty"])
    Path(workspace.path, "wip.txt").write_text("not merged\n")
    decoy = tmp_path / "decoy"
    git(tmp_path, "clone", "-q", str(repo), str(decoy))
    decoy_refs = git(decoy, "for-each-ref")
    Path(workspace.path, ".git").write_text(f"gitdir: {decoy / '.git'}\n")
    (info,) = list_worktrees(repo)
    assert info.dirty and not info.merged and not info.missing, info
    assert info.branch == "seawall/s1/w2/dirty"
    forced = prune_worktrees(repo, force=True)
    (saved,) = forced.salvaged
    assert git(repo, "show", f"{saved}:wip.txt") == "not merged\n"
    assert git(decoy, "for-each-ref") == decoy_refs
    assert list_worktrees(repo) == ()


def test_prune_keeps_the_work_of_a_worktree_whose_git_link_was_deleted(repo: Path) -> None:
    """A worktree that still holds files after its ``.git`` file was deleted is not read
    as gone: its link is written again from git's record, and its work is kept, or saved
    to its checkpoint ref before a forced removal."""
    base = head(repo)
    (workspace,) = _prepare(repo, base, ["dirty"])
    folder = Path(workspace.path)
    (folder / "wip.txt").write_text("not merged\n")
    (folder / "app.py").write_text("edited\n")
    (folder / ".git").unlink()
    report = prune_worktrees(repo)
    assert report.removed == () and report.salvaged == ()
    (kept,) = report.kept
    assert not kept.missing and kept.dirty and not kept.merged, kept
    assert "uncommitted" in kept.reason and "restored" in kept.reason
    assert (folder / "wip.txt").read_text() == "not merged\n"
    assert git(folder, "rev-parse", "--abbrev-ref", "HEAD") == "seawall/s1/w2/dirty\n"

    (folder / ".git").unlink()
    forced = prune_worktrees(repo, force=True)
    assert [info.task for info in forced.removed] == ["dirty"]
    (saved,) = forced.salvaged
    assert git(repo, "show", f"{saved}:wip.txt") == "not merged\n"
    assert git(repo, "show", f"{saved}:app.py") == "edited\n"
    assert git(repo, "rev-parse", "refs/seawall/s1/dirty").strip() == saved
    assert not folder.exists()
    assert list_worktrees(repo) == ()


def test_a_worktree_being_removed_is_not_relinked(repo: Path) -> None:
    """A folder whose removal is under way (git's record marked, its ``.git`` already
    deleted) counts as missing: its link is not written back into it."""
    (workspace,) = _prepare(repo, head(repo), ["going"])
    folder = Path(workspace.path)
    admin = admin_dir(repo, folder)
    assert admin is not None
    (admin / REMOVING_FILE).write_text("")
    (folder / ".git").unlink()
    (info,) = list_worktrees(repo)
    assert info.missing and "being removed" in info.reason, info
    assert not (folder / ".git").exists()
    report = prune_worktrees(repo)
    assert [i.task for i in report.removed] == ["going"]
    assert not folder.exists() and list_worktrees(repo) == ()


def test_duplicate_task_ids_and_auto_isolation_are_caller_mistakes(repo: Path) -> None:
    with pytest.raises(ConfigurationError, match="unique"):
        _prepare(repo, head(repo), ["t1", "t1"])
    with pytest.raises(ConfigurationError, match="resolved isolation"):
        _prepare(repo, head(repo), ["t1"], Isolation.AUTO)
    assert list_worktrees(repo) == ()


def test_preparing_the_same_wave_again_resumes_its_worktrees(repo: Path) -> None:
    base = head(repo)
    (first,) = _prepare(repo, base, ["t1"])
    Path(first.path, "work.txt").write_text("in progress\n")
    (again,) = _prepare(repo, base, ["t1"])
    assert again == first
    assert Path(again.path, "work.txt").read_text() == "in progress\n"
