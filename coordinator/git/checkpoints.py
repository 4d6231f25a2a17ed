"""Shadow checkpoints: an agent's files as commits on its private ref.

A checkpoint is built from the working tree into an in-memory index (a pygit2 ``Index``
bound to no repository index file), written as a tree and committed on
``refs/seawall/<session>/<task>``. It never reads or writes the repository's index
file, HEAD, the stash or any branch, so an agent's own git use (and a stale
``index.lock``) cannot collide with it.

Each checkpoint is the child of the previous one; the first of a dispatch is the child
of the wave's base commit (with the ref's earlier tip as a second parent when the task
was dispatched before, so no earlier attempt becomes unreachable). Following first
parents from the ref's tip back to the base yields the dispatch's checkpoints.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path

import anyio.to_thread
import pygit2

from seawall.errors import GitError
from seawall.git.repo import (
    checkpoint_ref,
    open_repository,
    parse_trailers,
    ref_target,
    repo_relative,
    resolve_commit,
    seawall_signature,
)
from seawall.git.tree_state import disk_blob, worktree_status
from seawall.git.trees import BlobEntry, update_tree

__all__ = ["CheckpointKind", "CheckpointMode", "Checkpointer", "save_worktree", "snapshot_tree"]

KIND_TRAILER = "Seawall-Kind"
BASE_TRAILER = "Seawall-Base"
TASK_TRAILER = "Seawall-Task"
SESSION_TRAILER = "Seawall-Session"
DISPATCH_TRAILER = "Seawall-Dispatch"


class CheckpointMode(StrEnum):
    """What a checkpoint holds: the agent's whole worktree, or only the paths it touched."""

    TREE = "tree"
    PATHS = "paths"


class CheckpointKind(StrEnum):
    CHECKPOINT = "checkpoint"
    WIP = "wip"


class Checkpointer:
    """Records shadow checkpoints of one agent. Safe to call from several threads.

    ``repo_path`` is the agent's working directory: its worktree (mode ``TREE``, the whole
    tree is snapshot) or the repository itself for an in-place agent (mode ``PATHS``, only
    the paths the dispatcher reports as touched, laid over the base tree).
    """

    def __init__(
        self,
        repo_path: str | os.PathLike[str],
        *,
        session_id: str,
        task_id: str,
        base: str,
        mode: CheckpointMode,
        dispatch: str | None = None,
    ) -> None:
        """``dispatch`` names this dispatch of the task (e.g. ``w3``): a re-dispatch on an
        unchanged base starts a new chain instead of continuing the previous one."""
        self._dispatch = dispatch
        self._repo = open_repository(repo_path)
        if not self._repo.workdir:
            raise GitError(f"{repo_path} has no working tree to checkpoint")
        self._root = Path(self._repo.workdir)
        self._session_id = session_id
        self._task_id = task_id
        self._base = resolve_commit(self._repo, base)
        self._mode = mode
        self._ref = checkpoint_ref(session_id, task_id)
        self._paths: set[str] = set()
        self._lock = threading.Lock()
        self._tip: pygit2.Commit | None = self._resume()

    @property
    def ref(self) -> str:
        return self._ref

    @property
    def task_id(self) -> str:
        return self._task_id

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def base(self) -> str:
        return str(self._base.id)

    @property
    def mode(self) -> CheckpointMode:
        return self._mode

    @property
    def root(self) -> Path:
        """The working directory this checkpointer snapshots."""
        return self._root

    def changed_paths(self, *, whole_tree: bool = False) -> frozenset[str]:
        """Paths whose content differs from the base: in the latest checkpoint, or with
        ``whole_tree`` in the working tree right now (mode ``TREE``)."""
        with self._lock:
            if whole_tree:
                tree = self._repo[snapshot_tree(self._repo)].peel(pygit2.Tree)
            else:
                tree = (self._tip or self._base).tree
            paths: set[str] = set()
            for delta in self._base.tree.diff_to_tree(tree).deltas:
                paths.update((delta.old_file.path, delta.new_file.path))
            return frozenset(paths)

    @property
    def tip(self) -> str | None:
        """The latest checkpoint of this dispatch, or ``None`` before the first."""
        return str(self._tip.id) if self._tip is not None else None

    @property
    def touched_paths(self) -> frozenset[str]:
        """Every path reported as touched so far (mode ``PATHS``)."""
        return frozenset(self._paths)

    def checkpoint(self, touched_paths: Iterable[str] | None = None) -> str | None:
        """Snapshot the agent's files; return the new commit id, or ``None`` if nothing changed.

        ``touched_paths`` (relative to the working directory, or absolute inside it) add to
        the set of paths an in-place agent owns; paths outside it are ignored.
        """
        with self._lock, _object_writes(self._task_id):
            tree = self._snapshot(touched_paths)
            if tree == self._previous_tree():
                return None
            return self._commit(tree, CheckpointKind.CHECKPOINT, f"checkpoint: {self._task_id}")

    def wip(self, reason: str, touched_paths: Iterable[str] | None = None) -> str | None:
        """Record the state of an agent that did not stop cleanly, marked as unverified.

        Writes a ``wip:`` commit even when the files equal the last checkpoint (the stop is
        itself worth recording); returns ``None`` only if the agent changed nothing at all.
        """
        with self._lock, _object_writes(self._task_id):
            tree = self._snapshot(touched_paths)
            if tree == self._base.tree.id and self._tip is None:
                return None
            title = (
                f"wip: {self._task_id} stopped ({reason}); unverified work, not checked or reviewed"
            )
            return self._commit(tree, CheckpointKind.WIP, title)

    async def acheckpoint(self, touched_paths: Iterable[str] | None = None) -> str | None:
        """:meth:`checkpoint` in a worker thread, so libgit2 work stays off the event loop."""
        paths = None if touched_paths is None else tuple(touched_paths)
        return await anyio.to_thread.run_sync(self.checkpoint, paths)

    async def awip(self, reason: str, touched_paths: Iterable[str] | None = None) -> str | None:
        """:meth:`wip` in a worker thread."""
        paths = None if touched_paths is None else tuple(touched_paths)
        return await anyio.to_thread.run_sync(self.wip, reason, paths)

    def _resume(self) -> pygit2.Commit | None:
        """Continue this dispatch's chain after a restart; ignore an earlier dispatch's."""
        try:
            ref = self._repo.references[self._ref]
        except KeyError:
            return None
        tip = self._repo[ref_target(ref)].peel(pygit2.Commit)
        trailers = parse_trailers(tip.message)
        same_base = trailers.get(BASE_TRAILER) == str(self._base.id)
        if same_base and trailers.get(DISPATCH_TRAILER) == self._dispatch:
            return tip
        return None

    def _previous_tree(self) -> pygit2.Oid:
        return (self._tip or self._base).tree.id

    def _snapshot(self, touched_paths: Iterable[str] | None) -> pygit2.Oid:
        for path in touched_paths or ():
            relative = repo_relative(self._root, path)
            if relative is not None:
                self._paths.add(relative)
        if self._mode is CheckpointMode.TREE:
            return snapshot_tree(self._repo)
        previous = self._repo[self._previous_tree()].peel(pygit2.Tree)
        return update_tree(self._repo, previous, disk_entries(self._repo, self._root, self._paths))

    def _commit(self, tree: pygit2.Oid, kind: CheckpointKind, title: str) -> str:
        parents = [self._tip.id] if self._tip is not None else [self._base.id]
        if self._tip is None:
            earlier = self._repo.references.get(self._ref)
            if earlier is not None:
                parents.append(ref_target(earlier))  # an earlier dispatch stays reachable
        message = (
            f"{title}\n\n"
            f"{SESSION_TRAILER}: {self._session_id}\n"
            f"{TASK_TRAILER}: {self._task_id}\n"
            f"{BASE_TRAILER}: {self._base.id}\n"
            f"{KIND_TRAILER}: {kind}\n"
            + (f"{DISPATCH_TRAILER}: {self._dispatch}\n" if self._dispatch else "")
        )
        signature = seawall_signature()
        oid = self._repo.create_commit(None, signature, signature, message, tree, parents)
        self._repo.references.create(self._ref, oid, force=True)
        self._tip = self._repo[oid].peel(pygit2.Commit)
        return str(oid)


@contextlib.contextmanager
def _object_writes(task_id: str) -> Iterator[None]:
    """A checkpoint whose objects cannot be written (a full disk, a read-only object
    store, an unreadable file) fails with a ``GitError`` that says so, not an ``OSError``."""
    try:
        yield
    except OSError as exc:
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        detail = "the disk is full" if full else (exc.strerror or str(exc))
        raise GitError(
            f"cannot record a checkpoint of {task_id}: {detail}; "
            "the agent's files are untouched in its workspace"
        ) from exc


def snapshot_tree(repo: pygit2.Repository) -> pygit2.Oid:
    """Write the tree of ``repo``'s whole working tree (git's ignore rules apply).

    Starts from HEAD's tree and re-reads every path ``git status`` reports, so unchanged
    files cost nothing. The repository's index file is read, never written.
    """
    root = Path(repo.workdir)
    head = None if repo.head_is_unborn else repo.head.peel(pygit2.Commit).tree
    paths = [path.rstrip("/") for path in worktree_status(repo)]
    return update_tree(repo, head, disk_entries(repo, root, paths))


def save_worktree(
    repo_path: str | os.PathLike[str], *, session_id: str, task_id: str, reason: str
) -> str:
    """Save a worktree's whole state as a ``wip:`` commit on the agent's checkpoint ref.

    The commit's parents are the worktree's HEAD (so its commits stay reachable) and the
    ref's previous tip, if any. Used before a worktree is removed with unmerged work.
    """
    repo = open_repository(repo_path)
    head = repo.head.peel(pygit2.Commit)
    ref = checkpoint_ref(session_id, task_id)
    parents = [head.id]
    earlier = repo.references.get(ref)
    if earlier is not None:
        parents.append(ref_target(earlier))
    message = (
        f"wip: {task_id} saved ({reason}); unverified work, not checked or reviewed\n\n"
        f"{SESSION_TRAILER}: {session_id}\n{TASK_TRAILER}: {task_id}\n"
        f"{BASE_TRAILER}: {head.id}\n{KIND_TRAILER}: {CheckpointKind.WIP}\n"
    )
    signature = seawall_signature()
    oid = repo.create_commit(None, signature, signature, message, snapshot_tree(repo), parents)
    repo.references.create(ref, oid, force=True)
    return str(oid)


def disk_entries(
    repo: pygit2.Repository, root: Path, paths: Iterable[str]
) -> dict[str, BlobEntry | None]:
    """The blobs of ``paths`` as they are on disk now, for :func:`update_tree`.

    A missing path maps to ``None``; a folder maps to ``None`` followed by every file in it
    that git does not ignore (so the folder is replaced by what it holds now).
    """
    entries: dict[str, BlobEntry | None] = {}
    for relative in sorted(paths):
        full = root / relative
        if not full.is_dir() or full.is_symlink():
            entries[relative] = _blob_entry(repo, full)
            continue
        entries[relative] = None
        for child in sorted(full.rglob("*")):
            inner = repo_relative(root, str(child))
            if inner is None or ".git" in child.relative_to(full).parts:
                continue
            if child.is_dir() or repo.path_is_ignored(inner):
                continue
            entry = _blob_entry(repo, child)
            if entry is not None:
                entries[inner] = entry
    return entries


def _blob_entry(repo: pygit2.Repository, full: Path) -> BlobEntry | None:
    """Write the blob of one file or symlink; ``None`` when it is gone (or is a fifo,
    which git cannot hold). An agent may delete a file while it is being read."""
    found = disk_blob(full)
    if found is None:
        return None
    return repo.create_blob(found[0]), found[1]
