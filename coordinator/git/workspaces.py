"""Agent workspaces: one git worktree per agent, or the repository itself for in place.

Worktrees live in ``.seawall/worktrees/<session>/w<wave>/<task>`` (git ignores
``.seawall/`` through ``info/exclude``) on the branch ``seawall/<session>/w<wave>/<task>``
created at the wave's pinned base. If any worktree cannot be created, the whole wave
falls back to in place and says why; the caller records the reason in the wave's state.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import pygit2

from coordinator.errors import ConfigurationError, DirtyWorkingTreeError, GitError
from coordinator.git.checkpoints import CheckpointMode
from coordinator.git.repo import (
    SEAWALL_DIR,
    agent_branch,
    ensure_excluded,
    open_repository,
    resolve_commit,
    run_git_async,
    safe_component,
    workdir,
)
from coordinator.model import Isolation

__all__ = [
    "Workspace",
    "prepare_workspaces",
    "require_clean_worktree",
    "worktree_path",
]

logger = logging.getLogger("seawall.git")


@dataclass(frozen=True, slots=True, kw_only=True)
class Workspace:
    """Where one agent works. ``isolation`` is what was actually used, never ``auto``."""

    task_id: str
    path: str
    branch: str | None
    isolation: Isolation
    fallback_reason: str | None = None

    @property
    def checkpoint_mode(self) -> CheckpointMode:
        """A worktree is snapshot whole; an in-place agent only by its touched paths."""
        if self.isolation is Isolation.WORKTREE:
            return CheckpointMode.TREE
        return CheckpointMode.PATHS


def worktree_path(root: Path, session_id: str, wave: int, task_id: str) -> Path:
    """The folder of an agent's worktree; every component is sanitised."""
    return (
        root
        / SEAWALL_DIR
        / "worktrees"
        / safe_component(session_id)
        / f"w{int(wave)}"
        / safe_component(task_id)
    )


def require_clean_worktree(repo_path: str | os.PathLike[str]) -> None:
    """Raise ``DirtyWorkingTreeError`` if tracked files are modified, staged or deleted.

    Untracked files do not count: in-place checkpoints only read the paths agents touch.
    """
    repo = open_repository(repo_path)
    dirty = tuple(
        sorted(
            path
            for path, flags in repo.status(untracked_files="no").items()
            if flags & ~pygit2.enums.FileStatus.IGNORED
        )
    )
    if dirty:
        shown = ", ".join(dirty[:10]) + (" ..." if len(dirty) > 10 else "")
        raise DirtyWorkingTreeError(
            f"an in-place wave needs a clean working tree, but {len(dirty)} file(s) have "
            f"uncommitted changes: {shown}. Commit or stash them first.",
            paths=dirty,
        )


async def prepare_workspaces(
    repo_path: str | os.PathLike[str],
    *,
    session_id: str,
    wave: int,
    base: str,
    task_ids: Sequence[str],
    isolation: Isolation,
    max_parallel: int = 1,
) -> tuple[Workspace, ...]:
    """Give every task of a wave its workspace, in ``task_ids`` order.

    ``isolation`` is the wave's resolved isolation (``worktree`` or ``none``). At most
    ``max_parallel`` worktrees are checked out at once: one by default, since concurrent
    checkouts slowed each other down several times over on a small shared machine; raise
    it where storage and cores allow. In place, the
    working tree must be clean and HEAD at ``base`` (``DirtyWorkingTreeError`` /
    ``GitError`` otherwise, before anything changes).
    """
    if isolation is Isolation.AUTO:
        raise ConfigurationError(
            "prepare_workspaces needs a resolved isolation (worktree or none), not auto"
        )
    duplicates = sorted({task_id for task_id in task_ids if list(task_ids).count(task_id) > 1})
    if duplicates:
        raise ConfigurationError(f"task ids must be unique in a wave: {', '.join(duplicates)}")
    repo = open_repository(repo_path)
    root = workdir(repo)
    base_id = str(resolve_commit(repo, base).id)
    if isolation is Isolation.WORKTREE:
        made = await _make_worktrees(repo, root, session_id, wave, base_id, task_ids, max_parallel)
        if isinstance(made, tuple):
            return made
        logger.warning("worktree creation failed, wave %s runs in place: %s", wave, made)
        return _in_place(repo, root, base_id, task_ids, reason=made)
    return _in_place(repo, root, base_id, task_ids, reason=None)


def _in_place(
    repo: pygit2.Repository,
    root: Path,
    base: str,
    task_ids: Sequence[str],
    *,
    reason: str | None,
) -> tuple[Workspace, ...]:
    if repo.head_is_unborn or str(repo.head.target) != base:
        raise GitError(
            f"an in-place wave runs on the checked-out commit, but HEAD is not the wave "
            f"base {base[:12]}; pin the base again before preparing the wave"
        )
    require_clean_worktree(root)
    return tuple(
        Workspace(
            task_id=task_id,
            path=str(root),
            branch=None,
            isolation=Isolation.NONE,
            fallback_reason=reason,
        )
        for task_id in task_ids
    )


async def _make_worktrees(
    repo: pygit2.Repository,
    root: Path,
    session_id: str,
    wave: int,
    base: str,
    task_ids: Sequence[str],
    max_parallel: int,
) -> tuple[Workspace, ...] | str:
    """Create every worktree; on the first failure undo them all and return the reason."""
    ensure_excluded(repo)
    limiter = anyio.CapacityLimiter(max(1, max_parallel))
    results: dict[str, Workspace | str] = {}

    async def make(task_id: str) -> None:
        async with limiter:
            results[task_id] = await _make_one(root, session_id, wave, base, task_id)

    async with anyio.create_task_group() as group:
        for task_id in task_ids:
            group.start_soon(make, task_id)
    ordered = [results[task_id] for task_id in task_ids]
    made = [value for value in ordered if isinstance(value, Workspace)]
    if len(made) == len(ordered):
        return tuple(made)
    for workspace in made:
        await _undo(root, workspace)
    return next(value for value in ordered if isinstance(value, str))


async def _make_one(
    root: Path, session_id: str, wave: int, base: str, task_id: str
) -> Workspace | str:
    path = worktree_path(root, session_id, wave, task_id)
    branch = agent_branch(session_id, wave, task_id)
    workspace = Workspace(
        task_id=task_id, path=str(path), branch=branch, isolation=Isolation.WORKTREE
    )
    if (path / ".git").exists():
        head = await run_git_async(["symbolic-ref", "-q", "HEAD"], cwd=path, check=False)
        if head.stdout.strip() == f"refs/heads/{branch}":
            return workspace  # resumed: the worktree of this task and wave already exists
        return f"{path} exists but is not the worktree of branch {branch}"
    path.parent.mkdir(parents=True, exist_ok=True)
    made = await run_git_async(
        ["worktree", "add", "--quiet", "-b", branch, str(path), base], cwd=root, check=False
    )
    if not made.ok:
        return f"git worktree add for task {task_id!r} failed: {made.stderr.strip()}"
    return workspace


async def _undo(root: Path, workspace: Workspace) -> None:
    await run_git_async(["worktree", "remove", "--force", workspace.path], cwd=root, check=False)
    if workspace.branch:
        await run_git_async(["branch", "-D", workspace.branch], cwd=root, check=False)
