"""Listing and pruning seawall's worktrees without losing work.

A worktree's work counts as merged when its current files (committed or not) are what
a merged integration commit took from it (the ``Seawall-Source-Tree`` trailer on a local
branch), when its commits are reachable from a local branch and nothing is uncommitted,
or when it changed nothing. Anything else is kept unless forced; a forced removal first
saves the files as a ``wip:`` checkpoint on the agent's ref.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from seawall.git.checkpoints import save_worktree, snapshot_tree
from seawall.git.repo import (
    SEAWALL_DIR,
    open_repository,
    parse_trailers,
    ref_target,
    workdir,
)
from seawall.git.worktree_admin import (
    READY_FILE,
    admin_dir,
    admin_dirs,
    delete_branches,
    remove_worktrees,
    restore_link,
)
from seawall.runtime.processes import process_alive

__all__ = [
    "PruneReport",
    "WorktreeInfo",
    "list_worktrees",
    "prune_worktrees",
    "remove_stale_check_worktrees",
]

SOURCE_TREE_TRAILER = "Seawall-Source-Tree"
_SCAN_LIMIT = 5000


@dataclass(frozen=True, slots=True, kw_only=True)
class WorktreeInfo:
    """One seawall worktree, its owner, age and whether its work is safe to remove."""

    path: str
    branch: str | None
    session: str
    wave: int | None
    task: str
    age_seconds: float
    dirty: bool
    merged: bool
    missing: bool
    reason: str  # why it may be removed, or why it is kept


@dataclass(frozen=True, slots=True, kw_only=True)
class PruneReport:
    removed: tuple[WorktreeInfo, ...]
    kept: tuple[WorktreeInfo, ...]
    salvaged: tuple[str, ...] = ()  # checkpoint commits written before a forced removal


def list_worktrees(repo_path: str | os.PathLike[str]) -> tuple[WorktreeInfo, ...]:
    """Every agent worktree (on a ``seawall/`` branch, wherever it lives), with owner,
    age and merge state."""
    repo = open_repository(repo_path)
    root = workdir(repo)
    merged_trees = _merged_source_trees(repo)
    infos = []
    for path, admin in admin_dirs(root).items():
        owner = _owner(admin)
        if owner is not None:
            infos.append(_inspect(repo, path, admin, owner, merged_trees))
    return tuple(sorted(infos, key=lambda info: info.path))


def prune_worktrees(
    repo_path: str | os.PathLike[str],
    *,
    force: bool = False,
    paths: Collection[str] | None = None,
) -> PruneReport:
    """Remove merged or unchanged seawall worktrees (and their branches).

    ``paths`` limits the run to those worktrees. Worktrees with unmerged or uncommitted
    work are kept, each with its reason, unless ``force``; forced ones are saved as a
    ``wip:`` checkpoint first.
    """
    repo = open_repository(repo_path)
    root = workdir(repo)
    wanted = None if paths is None else {str(Path(p).resolve()) for p in paths}
    removed: list[WorktreeInfo] = []
    kept: list[WorktreeInfo] = []
    salvaged: list[str] = []
    for info in list_worktrees(root):
        if wanted is not None and str(Path(info.path).resolve()) not in wanted:
            continue
        if not (info.merged or info.missing or force):
            kept.append(info)
            continue
        if not (info.merged or info.missing):
            salvaged.append(_salvage(root, info))
        removed.append(info)
    _remove_all(root, removed, force=force)
    remove_stale_check_worktrees(root)
    return PruneReport(removed=tuple(removed), kept=tuple(kept), salvaged=tuple(salvaged))


def remove_stale_check_worktrees(repo_path: str | os.PathLike[str]) -> list[str]:
    """Remove check worktrees left by a process that died (named ``check-<pid>-...``)."""
    root = workdir(open_repository(repo_path))
    folder = (root / SEAWALL_DIR / "checks").resolve()
    stale = [
        str(path)
        for path in admin_dirs(root)
        if path.parent == folder and not _alive_pid(_pid_of(path.name))
    ]
    remove_worktrees(root, stale)
    return stale


def _pid_of(name: str) -> int | None:
    parts = name.split("-")
    return int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else None


def _alive_pid(pid: int | None) -> bool:
    return pid is not None and process_alive(pid)


def _remove_all(root: Path, infos: Sequence[WorktreeInfo], *, force: bool) -> None:
    """Remove worktrees (their folders concurrently, see ``remove_worktrees``), then
    their branches."""
    remove_worktrees(root, [info.path for info in infos])
    branches = [info.branch for info in infos if info.branch and (info.merged or force)]
    delete_branches(root, branches)


def _owner(admin: Path) -> tuple[str, int | None, str] | None:
    """Session, wave and task of an agent worktree, from the branch it has checked out
    (``seawall/<session>/w<wave>/<task>``); None for any other worktree."""
    try:
        head = (admin / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    parts = head.removeprefix("ref: refs/heads/").split("/")
    if not head.startswith("ref: refs/heads/seawall/") or len(parts) != 4:
        return None
    wave = int(parts[2][1:]) if parts[2][1:].isdigit() else None
    return parts[1], wave, parts[3]


def _inspect(
    repo: pygit2.Repository,
    path: Path,
    admin: Path,
    owner: tuple[str, int | None, str],
    merged_trees: set[pygit2.Oid],
) -> WorktreeInfo:
    session, wave, task = owner
    try:
        age = time.time() - (admin / "commondir").stat().st_mtime
    except FileNotFoundError:
        age = 0.0

    def missing(reason: str = "folder is missing or being removed") -> WorktreeInfo:
        return WorktreeInfo(
            path=str(path), session=session, wave=wave, task=task, branch=None,
            age_seconds=age, dirty=False, merged=False, missing=True, reason=reason,
        )  # fmt: skip

    if (admin / "locked").exists() and not (admin / READY_FILE).exists():
        return missing("its checkout never finished")
    relinked = False
    if not (path / ".git").exists():
        # gone or being removed, or only its link deleted: then its files are work
        if not restore_link(workdir(repo), path, admin):
            return missing()
        relinked = True
    try:  # through git's record of it, not the ``.git`` file its agent could rewrite
        wt_repo = pygit2.Repository(str(admin))
        branch = None if wt_repo.head_is_detached else wt_repo.head.shorthand
        head = wt_repo.head.peel(pygit2.Commit)
        state = snapshot_tree(wt_repo)
    except (pygit2.GitError, OSError):
        if (path / ".git").exists():
            raise
        return missing()  # removed by a concurrent cleanup while it was being read
    dirty = state != head.tree.id
    merged, reason = _merge_state(repo, head, state, dirty, merged_trees)
    if relinked:
        reason = f"{reason} (its deleted .git link was restored from git's record)"
    return WorktreeInfo(
        path=str(path), session=session, wave=wave, task=task, branch=branch,
        age_seconds=age, dirty=dirty, merged=merged, missing=False, reason=reason,
    )  # fmt: skip


def _merge_state(
    repo: pygit2.Repository,
    head: pygit2.Commit,
    state: pygit2.Oid,
    dirty: bool,
    merged_trees: set[pygit2.Oid],
) -> tuple[bool, str]:
    if state in merged_trees:
        return True, "its work was merged"
    targets = _target_tips(repo)
    fork = None
    for tip in targets:
        if not dirty and (tip == head.id or repo.descendant_of(tip, head.id)):
            return True, "its commits are on a local branch"
        base = repo.merge_base(tip, head.id)
        if base is not None and repo[base].peel(pygit2.Commit).tree.id == state:
            fork = base
    if fork is not None:
        return True, "it changed nothing"
    if dirty:
        return False, "uncommitted changes that were not merged"
    return False, "commits that were not merged"


def _target_tips(repo: pygit2.Repository) -> list[pygit2.Oid]:
    tips = []
    for name in repo.branches.local:
        if not name.startswith("seawall/"):
            tips.append(ref_target(repo.branches.local[name]))
    return tips


def _merged_source_trees(repo: pygit2.Repository) -> set[pygit2.Oid]:
    """Trees of agent work recorded as merged on any local non-seawall branch."""
    trees: set[pygit2.Oid] = set()
    tips = _target_tips(repo)
    if not tips:
        return trees
    walker = repo.walk(tips[0], pygit2.enums.SortMode.TOPOLOGICAL)
    for tip in tips[1:]:
        walker.push(tip)
    for count, commit in enumerate(walker):
        if count >= _SCAN_LIMIT:
            break
        value = parse_trailers(commit.message).get(SOURCE_TREE_TRAILER)
        if value:
            trees.add(pygit2.Oid(hex=value))
    return trees


def _salvage(root: Path, info: WorktreeInfo) -> str:
    admin = admin_dir(root, Path(info.path))  # read as in ``_inspect``
    return save_worktree(
        admin or info.path, session_id=info.session, task_id=info.task, reason="pruned with --force"
    )
