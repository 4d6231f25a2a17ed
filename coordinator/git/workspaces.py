"""Agent workspaces: one git worktree per agent, or the repository itself for in place.

Worktrees live outside the repository's working tree, by default in
``../.<repo>.seawall-worktrees/<session>/w<wave>/<task>`` next to it (``[session]
worktree_root`` chooses another folder), on the branch
``seawall/<session>/w<wave>/<task>`` created at the wave's pinned base. A worktree is
used only once its checkout is verified (see :mod:`seawall.git.worktree_admin`); one
that is not ready is removed and made again. If any worktree cannot be created, the
whole wave falls back to in place and says why; the caller records the reason in the
wave's state.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import pygit2

from seawall.errors import ConfigurationError, DirtyWorkingTreeError, GitError
from seawall.git.checkpoints import CheckpointMode
from seawall.git.repo import (
    SEAWALL_DIR,
    agent_branch,
    ensure_excluded,
    open_repository,
    resolve_commit,
    safe_component,
    workdir,
)
from seawall.git.tree_state import checkout_problem, worktree_status
from seawall.git.worktree_admin import (
    add_worktree,
    admin_dir,
    delete_branches,
    is_ready,
    mark_ready,
    remove_worktrees,
)
from seawall.model import Isolation

__all__ = [
    "Workspace",
    "default_worktree_root",
    "ensure_ready",
    "prepare_workspaces",
    "require_clean_worktree",
    "restore_worktree",
    "worktree_path",
    "worktree_root",
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


def default_worktree_root(root: Path) -> Path:
    """Where agent worktrees go by default: a hidden folder next to the repository."""
    return root.parent / f".{root.name}.seawall-worktrees"


def worktree_root(root: Path, configured: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding agent worktrees: ``configured`` (absolute, or relative to the
    repository) or the default. A folder inside the working tree must be one git
    ignores, or the worktrees would show as the user's untracked files."""
    if not configured:
        return default_worktree_root(root)
    chosen = Path(configured).expanduser()
    chosen = chosen if chosen.is_absolute() else root / chosen
    chosen = Path(os.path.normpath(chosen))
    if chosen.is_relative_to(root):
        relative = chosen.relative_to(root).as_posix()
        if relative in ("", ".") or not open_repository(root).path_is_ignored(relative + "/"):
            raise ConfigurationError(
                f"session.worktree_root: {configured} is inside the repository's working "
                f"tree and not ignored by git; choose a folder outside it (or under "
                f"{SEAWALL_DIR}/)"
            )
    return chosen


def worktree_path(
    root: Path, session_id: str, wave: int, task_id: str, *, under: Path | None = None
) -> Path:
    """The folder of an agent's worktree (below ``under``, by default the default
    worktree root); every component is sanitised."""
    return (
        (under or default_worktree_root(root))
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
            for path, flags in worktree_status(repo, untracked_files="no").items()
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
    max_parallel: int | None = None,
    worktrees_under: str | os.PathLike[str] | None = None,
    sparse: Mapping[str, Sequence[str] | None] | None = None,
) -> tuple[Workspace, ...]:
    """Give every task of a wave its workspace, in ``task_ids`` order.

    ``isolation`` is the wave's resolved isolation (``worktree`` or ``none``). At most
    ``max_parallel`` worktrees are checked out at once, by default one per core
    (``os.cpu_count()``). ``worktrees_under`` is the configured worktree root (see
    :func:`worktree_root`). ``sparse`` maps a task to the folders of its sparse checkout
    (see :mod:`seawall.git.sparse`); a task not in it, or mapped to None, gets the
    whole tree. A worktree of the same wave and task that is
    ready is reused (a resumed wave); one that is not is removed and made again at
    ``base``: no agent has run in it. In place, the
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
        under = worktree_root(root, worktrees_under)
        parallel = max_parallel if max_parallel is not None else (os.cpu_count() or 1)
        made = await _make_worktrees(
            repo, root, under, session_id, wave, base_id, task_ids, parallel, sparse or {}
        )
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
    under: Path,
    session_id: str,
    wave: int,
    base: str,
    task_ids: Sequence[str],
    max_parallel: int,
    sparse: Mapping[str, Sequence[str] | None],
) -> tuple[Workspace, ...] | str:
    """Create every worktree; on the first failure undo them all and return the reason."""
    ensure_excluded(repo)
    limiter = anyio.CapacityLimiter(max(1, max_parallel))
    results: dict[str, Workspace | str] = {}

    async def make(task_id: str) -> None:
        async with limiter:
            path = worktree_path(root, session_id, wave, task_id, under=under)
            branch = agent_branch(session_id, wave, task_id)
            results[task_id] = await _make_one(
                root, path, branch, base, task_id, reset=True, sparse=sparse.get(task_id)
            )

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
    root: Path,
    path: Path,
    branch: str,
    commit: str,
    task_id: str,
    *,
    reset: bool,
    sparse: Sequence[str] | None,
) -> Workspace | str:
    """Make (or reuse, when ready) the worktree of ``branch`` at ``path``, checked out
    whole or, with ``sparse``, only those folders.

    With ``reset`` the branch is (re)made at ``commit``; without it the worktree checks
    out the branch's tip, which must be ``commit``."""
    workspace = Workspace(
        task_id=task_id, path=str(path), branch=branch, isolation=Isolation.WORKTREE
    )
    if await anyio.to_thread.run_sync(is_ready, root, path, branch):
        return workspace  # resumed: the verified worktree of this task and wave
    await anyio.to_thread.run_sync(_clear, root, path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create the worktree folder {path.parent}: {exc.strerror or exc}"
    target = await anyio.to_thread.run_sync(_add_args, root, path, branch, commit, reset)
    made = await anyio.to_thread.run_sync(
        functools.partial(add_worktree, root, path, target, sparse=sparse)
    )
    if not made.ok:
        await anyio.to_thread.run_sync(remove_worktrees, root, [path])
        return f"git worktree add for task {task_id!r} failed: {made.stderr.strip()}"
    problem = await anyio.to_thread.run_sync(_verify, root, path, branch, commit, sparse)
    if problem is not None:
        await anyio.to_thread.run_sync(remove_worktrees, root, [path])
        return f"the worktree of task {task_id!r} is not whole: {problem}"
    return workspace


def _clear(root: Path, path: Path) -> None:
    """Remove what a kill or an earlier run left at ``path`` (nothing there: no work)."""
    if path.exists() or admin_dir(root, path) is not None:
        remove_worktrees(root, [path])


def _add_args(root: Path, path: Path, branch: str, commit: str, reset: bool) -> list[str]:
    """``git worktree add`` arguments: a new branch at ``commit``, or the existing branch
    when it is already there (a kill after git made it) and, with ``reset``, at ``commit``.
    A branch of that name elsewhere is someone else's: ``-b`` then fails, changing nothing."""
    reference = open_repository(root).references.get(f"refs/heads/{branch}")
    if reference is None or (reset and str(reference.peel(pygit2.Commit).id) != commit):
        return ["-b", branch, str(path), commit]
    return [str(path), branch]


def _verify(
    root: Path, path: Path, branch: str, commit: str, sparse: Sequence[str] | None
) -> str | None:
    """Check a fresh checkout against ``commit`` and mark it ready; the problem or None."""
    admin = admin_dir(root, path)
    if admin is None:
        return f"git has no record of {path}"
    if (admin / "locked").exists():
        return "its checkout did not finish (the worktree is still locked)"
    if sparse is not None and not (admin / "info" / "sparse-checkout").is_file():
        return "its sparse set was not written"
    worktree = pygit2.Repository(str(path))
    if worktree.head_is_unborn or str(worktree.head.target) != commit:
        return f"HEAD is not {commit[:12]}"
    if worktree.head.name != f"refs/heads/{branch}":
        return f"it is not on branch {branch}"
    problem = checkout_problem(worktree)
    if problem is not None:
        return f"{problem} (checked out at {commit[:12]})"
    mark_ready(admin, branch, commit)
    return None


async def ensure_ready(
    repo_path: str | os.PathLike[str],
    worktrees: Sequence[tuple[str, str | None]],
    *,
    base: str,
    sparse: Mapping[str, Sequence[str] | None] | None = None,
) -> list[str]:
    """Make every ``(path, branch)`` worktree that is not ready again at ``base``; return
    the paths made again. ``sparse`` maps a worktree's path to the folders of its sparse
    checkout (absent: the whole tree). Only for worktrees no agent has run in yet."""
    repo = open_repository(repo_path)
    root = workdir(repo)
    remade: list[str] = []
    for path, branch in worktrees:
        if branch is None or is_ready(root, Path(path), branch):
            continue
        folders = (sparse or {}).get(path)
        made = await _make_one(root, Path(path), branch, base, branch, reset=True, sparse=folders)
        if isinstance(made, str):
            raise GitError(made)
        remade.append(path)
    return remade


async def restore_worktree(
    repo_path: str | os.PathLike[str],
    path: str,
    branch: str,
    *,
    sparse: Sequence[str] | None = None,
) -> bool:
    """Make the worktree of an agent's ``branch`` whole again at ``path`` (its folder was
    deleted or its checkout is not verified), at the branch's tip, with the same sparse
    set (``sparse``; None: the whole tree). False when the branch is gone."""
    repo = open_repository(repo_path)
    root = workdir(repo)
    reference = repo.references.get(f"refs/heads/{branch}")
    if reference is None:
        return False
    tip = str(reference.peel(pygit2.Commit).id)
    made = await _make_one(root, Path(path), branch, tip, branch, reset=False, sparse=sparse)
    if isinstance(made, str):
        raise GitError(made)
    return True


async def _undo(root: Path, workspace: Workspace) -> None:
    await anyio.to_thread.run_sync(remove_worktrees, root, [workspace.path])
    if workspace.branch:
        await anyio.to_thread.run_sync(delete_branches, root, [workspace.branch])
