"""Per-agent history since the wave base: its checkpoints and its own commits.

A change names every path it touches: a rename both its source (deleted) and its
destination, and a copy its destination; a file whose mode alone changed
(``chmod +x``) is a change too, with both modes recorded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum

import pygit2
from pygit2.enums import DeltaStatus

from seawall.git.checkpoints import (
    BASE_TRAILER,
    DISPATCH_TRAILER,
    KIND_TRAILER,
    CheckpointKind,
)
from seawall.git.repo import (
    checkpoint_ref,
    open_repository,
    parse_trailers,
    ref_target,
    resolve_commit,
)

__all__ = [
    "AgentHistory",
    "ChangeKind",
    "EntryKind",
    "FileChange",
    "HistoryEntry",
    "agent_history",
    "commit_changes",
    "tree_changes",
]


class EntryKind(StrEnum):
    CHECKPOINT = "checkpoint"
    WIP = "wip"
    COMMIT = "commit"  # a commit the agent made on its own branch


class ChangeKind(StrEnum):
    ADDED = "added"
    COPIED = "copied"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    TYPE_CHANGED = "type-changed"


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """One path changed by one commit. Blob ids are ``None`` where the file is absent."""

    path: str
    kind: ChangeKind
    old_path: str | None
    old_blob: str | None
    new_blob: str | None
    old_mode: int | None = None
    new_mode: int | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path this change writes: a rename's source (it disappears) and its target."""
        if self.kind is ChangeKind.RENAMED and self.old_path and self.old_path != self.path:
            return (self.old_path, self.path)
        return (self.path,)

    @property
    def mode_changed(self) -> bool:
        return None not in (self.old_mode, self.new_mode) and self.old_mode != self.new_mode


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryEntry:
    commit: str
    kind: EntryKind
    title: str
    time: int
    changes: tuple[FileChange, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentHistory:
    """An agent's checkpoints and branch commits since ``base``, each oldest first."""

    task_id: str
    base: str
    checkpoints: tuple[HistoryEntry, ...]
    commits: tuple[HistoryEntry, ...]

    @property
    def timelines(self) -> tuple[tuple[HistoryEntry, ...], ...]:
        """The non-empty sequences, each read on its own (they record the same edits)."""
        return tuple(line for line in (self.checkpoints, self.commits) if line)

    @property
    def changed_paths(self) -> frozenset[str]:
        """Every path the agent's history changed, both sides of each rename included."""
        return frozenset(
            path
            for line in self.timelines
            for entry in line
            for change in entry.changes
            for path in change.paths
        )


_KINDS = {
    DeltaStatus.ADDED: ChangeKind.ADDED,
    DeltaStatus.DELETED: ChangeKind.DELETED,
    DeltaStatus.MODIFIED: ChangeKind.MODIFIED,
    DeltaStatus.RENAMED: ChangeKind.RENAMED,
    DeltaStatus.COPIED: ChangeKind.COPIED,
    DeltaStatus.TYPECHANGE: ChangeKind.TYPE_CHANGED,
}


def agent_history(
    repo_path: str | os.PathLike[str],
    *,
    session_id: str,
    task_id: str,
    base: str,
    branch: str | None = None,
    dispatch: str | None = None,
) -> AgentHistory:
    """Read the agent's checkpoints of the dispatch based on ``base``, and the commits on
    ``branch`` (its worktree branch, if any) that ``base`` does not contain."""
    repo = open_repository(repo_path)
    base_commit = resolve_commit(repo, base)
    checkpoints = _checkpoint_chain(
        repo, checkpoint_ref(session_id, task_id), base_commit.id, dispatch
    )
    commits: list[pygit2.Commit] = []
    if branch is not None and branch in repo.branches.local:
        tip = ref_target(repo.branches.local[branch])
        walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        walker.hide(base_commit.id)
        commits = list(walker)
    return AgentHistory(
        task_id=task_id,
        base=str(base_commit.id),
        checkpoints=tuple(_entry(repo, commit, _kind(commit)) for commit in checkpoints),
        commits=tuple(_entry(repo, commit, EntryKind.COMMIT) for commit in commits),
    )


def _checkpoint_chain(
    repo: pygit2.Repository, ref: str, base: pygit2.Oid, dispatch: str | None = None
) -> list[pygit2.Commit]:
    """First parents from the ref's tip back to ``base``, oldest first, of one dispatch."""
    reference = repo.references.get(ref)
    if reference is None:
        return []
    chain: list[pygit2.Commit] = []
    commit = repo[ref_target(reference)].peel(pygit2.Commit)
    base_hex = str(base)
    while commit.id != base:
        trailers = parse_trailers(commit.message)
        if trailers.get(BASE_TRAILER) != base_hex or trailers.get(DISPATCH_TRAILER) != dispatch:
            break
        chain.append(commit)
        if not commit.parent_ids:
            break
        commit = repo[commit.parent_ids[0]].peel(pygit2.Commit)
    chain.reverse()
    return chain


def _kind(commit: pygit2.Commit) -> EntryKind:
    if parse_trailers(commit.message).get(KIND_TRAILER) == CheckpointKind.WIP:
        return EntryKind.WIP
    return EntryKind.CHECKPOINT


def _entry(repo: pygit2.Repository, commit: pygit2.Commit, kind: EntryKind) -> HistoryEntry:
    return HistoryEntry(
        commit=str(commit.id),
        kind=kind,
        title=commit.message.split("\n", 1)[0],
        time=commit.commit_time,
        changes=commit_changes(repo, commit),
    )


def commit_changes(repo: pygit2.Repository, commit: pygit2.Commit) -> tuple[FileChange, ...]:
    """The paths ``commit`` changed against its first parent, renames followed."""
    if commit.parents:
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    return _changes(diff)


def tree_changes(repo: pygit2.Repository, base: str, head: str) -> tuple[FileChange, ...]:
    """The paths that differ between commits ``base`` and ``head``, renames followed."""
    old = resolve_commit(repo, base).tree
    new = resolve_commit(repo, head).tree
    return _changes(old.diff_to_tree(new))


def _changes(diff: pygit2.Diff) -> tuple[FileChange, ...]:
    deltas = list(diff.deltas)
    statuses = {delta.status for delta in deltas}
    if DeltaStatus.ADDED in statuses and DeltaStatus.DELETED in statuses:
        diff.find_similar()
        deltas = list(diff.deltas)
    return tuple(_change(delta) for delta in deltas if delta.status in _KINDS)


def _change(delta: pygit2.DiffDelta) -> FileChange:
    kind = _KINDS[delta.status]
    old = None if kind is ChangeKind.ADDED else str(delta.old_file.id)
    new = None if kind is ChangeKind.DELETED else str(delta.new_file.id)
    path = delta.old_file.path if kind is ChangeKind.DELETED else delta.new_file.path
    renamed = kind in (ChangeKind.RENAMED, ChangeKind.COPIED)
    old_path = delta.old_file.path if renamed else None
    return FileChange(
        path=path,
        kind=kind,
        old_path=old_path,
        old_blob=old,
        new_blob=new,
        old_mode=None if kind is ChangeKind.ADDED else int(delta.old_file.mode),
        new_mode=None if kind is ChangeKind.DELETED else int(delta.new_file.mode),
    )
