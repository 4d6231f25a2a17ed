"""The post-wave check of the repository state: hooks, config, refs, pushes, renames."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest

from seawall.git.history import ChangeKind, tree_changes
from seawall.model import Enforcement
from seawall.scope.repostate import (
    AgentTrace,
    check_wave_state,
    save_snapshot,
    snapshot,
    snapshot_path,
)
from seawall.scope.verify import changed_paths, verify_changes
from seawall.scope.worktree_link import link_points_at, restore_links

SESSION = "s1"


def git(cwd: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src/db.py").write_text("db = 1\n" * 20)
    (root / "tests/t.py").write_text("t = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def _traces(repo: Path, calls: dict[str, str]) -> list[AgentTrace]:
    return [AgentTrace(task_id=task, workspace=repo, calls=text) for task, text in calls.items()]


def _before(repo: Path) -> Path:
    path = snapshot_path(repo, SESSION, 1)
    save_snapshot(snapshot(repo, session=SESSION), path)
    return path


def test_a_planted_hook_is_removed_kept_and_named(repo: Path) -> None:
    _before(repo)
    hook = repo / ".git/hooks/post-merge"
    hook.write_text("#!/bin/sh\ncurl evil\n")
    hook.chmod(0o755)
    traces = _traces(repo, {"a": "echo ok", "b": "cat > .git/hooks/post-merge"})
    (change,) = check_wave_state(repo, session=SESSION, wave=1, agents=traces, restore_changes=True)
    assert (change.area, change.name, str(change.kind)) == ("hook", "hooks/post-merge", "added")
    assert change.agents == ("b",) and change.restored
    assert not hook.exists()
    kept = Path(change.saved or "")
    assert kept.read_text() == "#!/bin/sh\ncurl evil\n" and not os.access(kept, os.X_OK)
    assert "by b (restored" in change.describe()
    # the check runs once per wave
    again = check_wave_state(repo, session=SESSION, wave=1, agents=traces, restore_changes=True)
    assert again == []


def test_config_and_refs_are_put_back_and_what_was_planted_is_kept(repo: Path) -> None:
    git(repo, "branch", "keep")
    _before(repo)
    original = (repo / ".git/config").read_text()
    git(repo, "config", "core.fsmonitor", "touch /tmp/x")
    git(repo, "branch", "planted")
    keep_before = git(repo, "rev-parse", "keep")
    (repo / "src/db.py").write_text("moved\n")
    git(repo, "commit", "-qam", "agent")
    git(repo, "branch", "-f", "keep", "HEAD")
    git(repo, "tag", "v9")
    changes = check_wave_state(
        repo, session=SESSION, wave=1, agents=_traces(repo, {"a": ""}), restore_changes=True
    )
    named = {(c.area, c.name): c for c in changes}
    assert set(named) >= {("config", "config"), ("ref", "refs/heads/planted"),
                          ("ref", "refs/heads/keep"), ("ref", "refs/tags/v9"),
                          ("ref", "refs/heads/main")}  # fmt: skip
    assert all(c.agents == ("a",) for c in changes)
    assert (repo / ".git/config").read_text() == original
    repository = pygit2.Repository(str(repo))
    assert "refs/heads/planted" not in repository.references
    assert git(repo, "rev-parse", "keep") == keep_before
    saved = named[("ref", "refs/heads/keep")].saved
    assert saved is not None and saved.startswith(f"refs/seawall/{SESSION}/quarantine/w1/")
    assert saved in repository.references  # the agent's commit is still reachable


def test_warn_reports_without_restoring(repo: Path) -> None:
    _before(repo)
    git(repo, "branch", "planted")
    (change,) = check_wave_state(repo, session=SESSION, wave=1, agents=[], restore_changes=False)
    assert change.name == "refs/heads/planted" and not change.restored
    assert "planted" in pygit2.Repository(str(repo)).branches.local


def test_a_push_to_a_local_remote_is_reported(repo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    _before(repo)
    git(repo, "push", "-q", "origin", "main:pushed")
    changes = check_wave_state(repo, session=SESSION, wave=1, agents=[], restore_changes=True)
    remote_changes = [c for c in changes if c.area == "remote"]
    assert [c.name for c in remote_changes] == ["origin:refs/heads/pushed"]
    assert remote_changes[0].restored
    assert "refs/heads/pushed" not in pygit2.Repository(str(remote)).references
    assert any(c.name == "refs/remotes/origin/pushed" for c in changes)


def test_a_forced_push_to_a_local_remote_is_undone_and_the_pushed_commit_kept(
    repo: Path, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    published = git(repo, "rev-parse", "main")
    _before(repo)
    (repo / "src/db.py").write_text("rewritten\n")
    git(repo, "commit", "-q", "--amend", "-am", "history rewritten")
    git(repo, "push", "-q", "--force", "origin", "main")
    pushed = git(repo, "rev-parse", "main")
    changes = check_wave_state(repo, session=SESSION, wave=1, agents=[], restore_changes=True)
    (change,) = [c for c in changes if c.area == "remote"]
    assert (change.name, change.restored) == ("origin:refs/heads/main", True)
    assert git(remote, "rev-parse", "refs/heads/main") == published
    assert git(repo, "rev-parse", "main") == published  # the local branch too
    assert change.saved is not None and git(repo, "rev-parse", change.saved) == pushed


def test_a_push_the_remote_moved_past_is_reported_with_the_command(
    repo: Path, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    _before(repo)
    git(repo, "push", "-q", "origin", "main:pushed")
    git(repo, "commit", "-q", "--allow-empty", "-m", "someone else")
    git(repo, "push", "-q", "origin", "main:pushed")  # moved on past what was seen
    from seawall.scope.repostate import compare, load_snapshot, restore

    path = snapshot_path(repo, SESSION, 1)
    before = load_snapshot(path)
    stale = snapshot(repo, session=SESSION)
    git(repo, "commit", "-q", "--allow-empty", "-m", "later still")
    git(repo, "push", "-q", "origin", "main:pushed")
    changes = [c for c in compare(before, stale) if c.area == "remote"]
    (done,) = restore(repo, before, changes, save_dir=tmp_path / "saved", quarantine_ref="refs/q")
    assert not done.restored
    assert "moved again" in done.note and "git push origin --delete refs/heads/pushed" in done.note
    assert "not restored" in done.describe() and done.note in done.describe()


def test_head_moved_to_another_branch_is_checked_out_back(repo: Path) -> None:
    git(repo, "branch", "other")
    _before(repo)
    git(repo, "checkout", "-q", "other")
    (repo / "src/db.py").write_text("on other\n")
    git(repo, "commit", "-qam", "work on other")
    moved = git(repo, "rev-parse", "other")
    changes = check_wave_state(repo, session=SESSION, wave=1, agents=[], restore_changes=True)
    named = {c.name: c for c in changes}
    assert named["HEAD"].restored, named["HEAD"].note
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert (repo / "src/db.py").read_text() == "db = 1\n" * 20  # main's file is back
    saved = named["refs/heads/other"].saved
    assert saved is not None and git(repo, "rev-parse", saved) == moved


def test_a_detached_head_is_restored_and_its_commit_kept(repo: Path) -> None:
    _before(repo)
    git(repo, "checkout", "-q", "--detach")
    git(repo, "commit", "-q", "--allow-empty", "-m", "detached work")
    detached = git(repo, "rev-parse", "HEAD")
    (change,) = check_wave_state(repo, session=SESSION, wave=1, agents=[], restore_changes=True)
    assert change.name == "HEAD" and change.restored
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert change.saved is not None and git(repo, "rev-parse", change.saved) == detached


def test_a_head_move_git_refuses_to_undo_is_reported_and_nothing_is_overwritten(
    repo: Path,
) -> None:
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "src/db.py").write_text("other's version\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    _before(repo)
    git(repo, "checkout", "-q", "other")
    (repo / "src/db.py").write_text("uncommitted edit\n")  # checkout main would lose it
    changes = check_wave_state(repo, session=SESSION, wave=1, agents=[], restore_changes=True)
    (change,) = [c for c in changes if c.name == "HEAD"]
    assert not change.restored
    assert "git checkout main" in change.note and "refused" in change.note
    assert (repo / "src/db.py").read_text() == "uncommitted edit\n"
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/other"


def test_seawall_own_refs_and_agent_branches_are_not_findings(repo: Path) -> None:
    _before(repo)
    git(repo, "update-ref", f"refs/seawall/{SESSION}/a", "HEAD")
    git(repo, "branch", f"seawall/{SESSION}/w1/a")
    assert check_wave_state(repo, session=SESSION, wave=1, agents=[], restore_changes=True) == []


def test_a_rename_out_of_scope_names_both_sides(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "mv", "src/db.py", "tests/db.py")
    (repo / "tests/t.py").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "move")
    changes = {c.path: c for c in tree_changes(pygit2.Repository(str(repo)), base, "HEAD")}
    renamed = changes["tests/db.py"]
    assert renamed.kind is ChangeKind.RENAMED and renamed.paths == ("src/db.py", "tests/db.py")
    assert changes["tests/t.py"].mode_changed
    paths = changed_paths(repo, base, "HEAD")
    verdict = verify_changes("a", paths, scope=("tests/",), enforcement=Enforcement.STRICT)
    assert verdict.out_of_scope == ("src/db.py",)  # the deletion of the source is seen


@pytest.mark.parametrize("planted", ["decoy", "relative", "symlink", "folder", "removed"])
def test_a_worktree_link_that_names_another_git_directory_is_put_back(
    repo: Path, tmp_path: Path, planted: str
) -> None:
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "agent", str(worktree))
    link = worktree / ".git"
    made = link.read_text()
    decoy = tmp_path / "decoy"
    git(tmp_path, "init", "-q", str(decoy))
    if planted == "relative":  # the same git directory, spelled relative: not a change
        admin = made.removeprefix("gitdir:").strip()
        link.write_text(f"gitdir: {os.path.relpath(admin, worktree)}\n")
    else:
        link.unlink()
    if planted == "decoy":
        link.write_text(f"gitdir: {decoy / '.git'}\n")
    elif planted == "symlink":
        link.symlink_to(decoy / ".git")
    elif planted == "folder":
        (link / "refs").mkdir(parents=True)
    save = tmp_path / "planted"
    changes = restore_links(repo, [("a", worktree), ("in-place", repo)], save_dir=save)
    if planted == "relative":
        assert changes == [] and link_points_at(link, Path(made.split(":", 1)[1].strip()))
        return
    (change,) = changes
    assert (change.area, change.agents, change.restored) == ("worktree", ("a",), True)
    assert link.read_text() == made  # what git wrote, so git itself reads it as before
    assert git(worktree, "rev-parse", "--git-common-dir") == str(repo / ".git")
    if planted == "removed":
        assert str(change.kind) == "removed" and change.saved is None
    else:
        kept = Path(str(change.saved))
        assert str(change.kind) == "changed" and kept.is_relative_to(save)
        assert kept.is_symlink() == (planted == "symlink") and kept.is_dir() == (planted != "decoy")
    assert restore_links(repo, [("a", worktree)], save_dir=save) == []
