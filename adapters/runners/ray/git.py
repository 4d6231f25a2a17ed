"""Git for the ray runner: bundles both ways, the worker's clone, the local mirror.

The coordinator's side sends the agent's branch as a git bundle (the history up to the
wave's base once per base, shared by every agent of the wave, plus a small bundle of
what an agent has beyond it). The worker clones those into a temporary repository and
sends back bundles of the commits the coordinator lacks. The coordinator's side then
stores the objects (``git bundle unbundle``: no ref is touched), moves the agent's
branch and checkpoint ref, and makes the local worktree's files what the remote
agent's are, path by path (never touching another path, the index or the stash).

All functions are synchronous (git CLI and pygit2); the driver calls them in a thread.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import DeltaStatus, FileMode

from seawall.errors import GitError
from seawall.git.repo import open_repository, run_git

__all__ = [
    "EMPTY_BUNDLE",
    "apply_tree",
    "bundle",
    "commit_tree",
    "compare_and_swap_ref",
    "git_identity",
    "init_clone",
    "move_branch",
    "unbundle",
]

EMPTY_BUNDLE = "Refusing to create empty bundle"
_ZERO = "0" * 40


def bundle(repo: Path, refs: Sequence[str], *, known: Iterable[str] = ()) -> bytes | None:
    """A bundle of ``refs`` without the history of the ``known`` commits; None when the
    other side already has every object (git refuses an empty bundle)."""
    excluded = sorted({commit for commit in known if commit})
    with tempfile.TemporaryDirectory(prefix="seawall-bundle-") as scratch:
        path = Path(scratch) / "out.bundle"
        args = ["bundle", "create", "-q", str(path), *refs]
        if excluded:
            args += ["--not", *excluded]
        done = run_git(args, cwd=repo, check=False)
        if not done.ok:
            if EMPTY_BUNDLE in done.stderr:
                return None
            raise GitError(f"`git bundle create` failed in {repo}: {done.stderr.strip()}")
        return path.read_bytes()


def unbundle(repo: Path, data: bytes) -> None:
    """Store a bundle's objects in ``repo``; refs are left alone (the caller moves them)."""
    with tempfile.TemporaryDirectory(prefix="seawall-bundle-") as scratch:
        path = Path(scratch) / "in.bundle"
        path.write_bytes(data)
        run_git(["bundle", "unbundle", str(path)], cwd=repo)


def git_identity(workspace: Path) -> dict[str, str]:
    """The ``user.name`` / ``user.email`` git uses in ``workspace`` (those that are set)."""
    identity: dict[str, str] = {}
    for key in ("user.name", "user.email"):
        done = run_git(["config", "--get", key], cwd=workspace, check=False)
        if done.ok and done.stdout.strip():
            identity[key] = done.stdout.strip()
    return identity


def init_clone(
    root: Path,
    bundles: Sequence[bytes],
    *,
    gitdir: Path,
    branch: str,
    head: str,
    checkpoint_ref: str,
    checkpoint: str | None,
    identity: dict[str, str],
) -> None:
    """Make ``root`` a work tree with ``branch`` at ``head`` checked out (and the
    checkpoint ref at ``checkpoint``), from the coordinator's bundles. The repository
    itself is ``gitdir``, outside the work tree (``root/.git`` is a file naming it), as a
    linked worktree's is: a sandbox granting the work tree leaves objects, refs, hooks
    and configuration read-only, as on the coordinator."""
    root.mkdir(parents=True, exist_ok=True)
    run_git(["init", "-q", f"--separate-git-dir={gitdir}", str(root)], cwd=root)
    # said outright, so a reader that opens the git directory itself (pygit2, after
    # discovering it) finds this work tree, not the git directory's parent
    run_git(["config", "core.worktree", str(root.resolve())], cwd=root)
    for key, value in identity.items():
        run_git(["config", key, value], cwd=root)
    for data in bundles:
        unbundle(root, data)
    run_git(["update-ref", f"refs/heads/{branch}", head], cwd=root)
    if checkpoint:
        run_git(["update-ref", checkpoint_ref, checkpoint], cwd=root)
    run_git(["symbolic-ref", "HEAD", f"refs/heads/{branch}"], cwd=root)
    run_git(["reset", "-q", "--hard", head], cwd=root)


def compare_and_swap_ref(repo: Path, ref: str, new: str, old: str | None) -> bool:
    """Point ``ref`` at ``new`` if it is still at ``old`` (None: absent); False if it moved."""
    done = run_git(["update-ref", ref, new, old or _ZERO], cwd=repo, check=False)
    return done.ok


def move_branch(worktree: Path, tip: str) -> None:
    """Point the worktree's checked-out branch and its index at ``tip``; files untouched."""
    run_git(["reset", "-q", tip], cwd=worktree)


def commit_tree(repo: Path, commit: str) -> str:
    """The tree id of ``commit``."""
    repository = open_repository(repo)
    return str(repository.revparse_single(commit).peel(pygit2.Commit).tree_id)


def apply_tree(root: Path, old_tree: str, new_tree: str) -> tuple[str, ...]:
    """Make the files under ``root`` that differ between ``old_tree`` and ``new_tree``
    what they are in ``new_tree``; return the paths written or removed."""
    if old_tree == new_tree:
        return ()
    repo = open_repository(root)
    old = repo[old_tree].peel(pygit2.Tree)
    new = repo[new_tree].peel(pygit2.Tree)
    changed: list[str] = []
    deltas = list(old.diff_to_tree(new).deltas)
    for delta in deltas:  # removals first: a file may become a directory
        if delta.status is DeltaStatus.DELETED:
            _remove(root, delta.old_file.path)
            changed.append(delta.old_file.path)
    for delta in deltas:
        if delta.status is DeltaStatus.DELETED:
            continue
        target = delta.new_file
        if target.mode == FileMode.COMMIT:
            continue  # a submodule: not content a worktree holds
        _write(repo, root, target.path, target.id, target.mode)
        changed.append(target.path)
    return tuple(changed)


def _remove(root: Path, relative: str) -> None:
    path = root / relative
    if path.is_symlink() or path.is_file():
        path.unlink()
    parent = path.parent
    while parent != root and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


def _write(repo: pygit2.Repository, root: Path, relative: str, blob: pygit2.Oid, mode: int) -> None:
    path = root / relative
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        raise GitError(f"cannot write {relative}: a directory is in the way")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = repo[blob].peel(pygit2.Blob).data
    if mode == FileMode.LINK:
        path.symlink_to(os.fsdecode(data))
        return
    path.write_bytes(data)
    if mode == FileMode.BLOB_EXECUTABLE:
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
