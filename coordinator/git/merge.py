"""The sequential, in-memory merge of a wave.

Agents merge in agent order onto an integration commit that starts at the wave base.
Each merged agent becomes one commit (or, for the first agent whose own branch sits
directly on the base, a fast-forward to its commit). Nothing touches the working tree,
the index or any branch: the target branch moves later, in ``target``.

Conflict policy, every case recorded as a :class:`Resolution`:

- a file both agents added: the two versions merged line by line when their union is
  unambiguous (``line_union``); otherwise the earlier agent's version, the later one set
  aside in a fix task;
- an existing file both modified (overlapping hunks): the earlier agent's version; the
  later agent's conflicting change becomes a fix task carrying the conflicting hunks;
- delete/modify, binary, rename/rename, mode: the earlier version stays in the tree, the
  later one stays on its branch or checkpoint and goes into a fix task.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import pygit2
from pygit2.enums import DeltaStatus, FileMode

from seawall.git.checkpoints import KIND_TRAILER, Checkpointer
from seawall.git.cleanup import SOURCE_TREE_TRAILER
from seawall.git.line_union import line_union
from seawall.git.repo import (
    open_repository,
    parse_trailers,
    resolve_commit,
    seawall_signature,
)
from seawall.git.trees import BlobEntry, ancestors, update_tree

__all__ = [
    "AgentChange",
    "AgentMerge",
    "FixTask",
    "MergeResult",
    "MergeRule",
    "MergeStatus",
    "Resolution",
    "agent_change",
    "merge_wave",
]


class MergeRule(StrEnum):
    BOTH_ADDED = "both-added: earlier agent's version, fix task"
    BOTH_ADDED_MERGED = "both-added: merged line by line"
    BOTH_MODIFIED = "both-modified: earlier agent's version, fix task"
    DELETE_MODIFY = "delete/modify: earlier version kept, fix task"
    BINARY = "binary: earlier version kept, fix task"
    RENAME_RENAME = "rename/rename: earlier version kept, fix task"
    MODE = "mode: earlier version kept, fix task"
    FILE_FOLDER = "file/folder: earlier version kept, fix task"


class MergeStatus(StrEnum):
    MERGED = "merged"
    EMPTY = "empty"  # the agent changed nothing
    DROPPED = "dropped"  # left out on purpose (reverted, or it broke the checks)
    CONFLICTED = "conflicted"  # every change conflicted; all of it went to a fix task


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentChange:
    """An agent's work to merge: the commit holding its final files.

    For a worktree agent that is its last checkpoint (the whole tree, committed or not)
    or its branch tip; for an in-place agent its last checkpoint.
    """

    task_id: str
    commit: str
    title: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution:
    """One conflict and how the policy resolved it."""

    path: str
    rule: MergeRule
    kept_task: str  # whose version is in the integration ("base" for the wave base)
    other_task: str  # whose version was set aside (or, merged line by line, the earlier)
    fix_task: str | None  # None: nothing was set aside


@dataclass(frozen=True, slots=True, kw_only=True)
class FixTask:
    """Work for the next wave: a later agent's change the policy kept out of the tree."""

    id: str
    source_task: str
    against_tasks: tuple[str, ...]
    files: tuple[str, ...]
    source_commit: str
    hunks: str

    def prompt(self) -> str:
        """A task text for the next wave."""
        return (
            f"Re-apply the changes of task {self.source_task} to {', '.join(self.files)}. "
            f"They conflicted with the merged work of {', '.join(self.against_tasks)}, whose "
            f"version is now in the tree. The set-aside version is in commit "
            f"{self.source_commit}.\n\n{self.hunks}"
        ).rstrip()


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMerge:
    task_id: str
    status: MergeStatus
    source: str
    commit: str | None  # the integration commit after this agent, if it added one
    resolutions: tuple[Resolution, ...] = ()
    reason: str = ""

    @property
    def merged(self) -> bool:
        return self.status is MergeStatus.MERGED


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeResult:
    base: str
    integration: str
    agents: tuple[AgentMerge, ...]
    fix_tasks: tuple[FixTask, ...] = field(default_factory=tuple)

    @property
    def resolutions(self) -> tuple[Resolution, ...]:
        return tuple(r for agent in self.agents for r in agent.resolutions)

    @property
    def sequence(self) -> tuple[AgentMerge, ...]:
        """The agents that added a commit, in merge order (what bisection walks)."""
        return tuple(agent for agent in self.agents if agent.commit is not None)

    def agent(self, task_id: str) -> AgentMerge:
        for agent in self.agents:
            if agent.task_id == task_id:
                return agent
        raise KeyError(task_id)


def agent_change(checkpointer: Checkpointer, *, title: str = "") -> AgentChange:
    """Take the agent's last checkpoint and describe it for :func:`merge_wave`.

    For a worktree agent the checkpoint holds its whole tree, committed or not; for an
    in-place agent, its touched files over the base. An agent without any change maps to
    the base (merged as ``empty``).
    """
    checkpointer.checkpoint()
    return AgentChange(
        task_id=checkpointer.task_id, commit=checkpointer.tip or checkpointer.base, title=title
    )


def merge_wave(
    repo_path: str | os.PathLike[str],
    *,
    base: str,
    changes: Sequence[AgentChange],
    session_id: str,
    wave: int,
    drop: Mapping[str, str] | None = None,
    on_merged: Callable[[AgentMerge], None] | None = None,
    onto: str | None = None,
) -> MergeResult:
    """Merge ``changes`` in order onto ``base`` in memory and return the integration.

    ``drop`` maps task ids to leave out to the reason. ``on_merged`` is called after each
    agent (for progress events). ``onto`` is a later commit of the target branch (it
    moved while the wave ran): the agents' changes against ``base`` are merged onto it,
    the branch's own changes counting as an earlier merge ("the target branch"). Raises
    ``GitError`` only for unknown commits.
    """
    repo = open_repository(repo_path)
    state = _MergeState(repo, resolve_commit(repo, base), session_id, wave)
    if onto is not None:
        state.start_at(resolve_commit(repo, onto))
    agents: list[AgentMerge] = []
    for change in changes:
        if drop and change.task_id in drop:
            merged = AgentMerge(
                task_id=change.task_id,
                status=MergeStatus.DROPPED,
                source=change.commit,
                commit=None,
                reason=drop[change.task_id],
            )
        else:
            merged = state.merge(change)
        agents.append(merged)
        if on_merged is not None:
            on_merged(merged)
    return MergeResult(
        base=str(state.start.id),
        integration=str(state.head.id),
        agents=tuple(agents),
        fix_tasks=tuple(state.fix_tasks),
    )


Entry = pygit2.IndexEntry | None


class _MergeState:
    """The integration commit being built, and who last changed each path in it."""

    def __init__(
        self, repo: pygit2.Repository, base: pygit2.Commit, session_id: str, wave: int
    ) -> None:
        self.repo = repo
        self.base = base
        self.start = base  # what the integration is built on: the base, or a later tip
        self.head = base
        self.session_id = session_id
        self.wave = wave
        self.owner: dict[str, str] = {}
        self.fix_tasks: list[FixTask] = []
        self.changed: set[str] = set()  # paths any merged agent changed
        self.changed_folders: set[str] = set()

    def merge(self, change: AgentChange) -> AgentMerge:
        source = resolve_commit(self.repo, change.commit)
        if source.tree.id == self.base.tree.id:
            return AgentMerge(
                task_id=change.task_id, status=MergeStatus.EMPTY, source=str(source.id),
                commit=None, reason="no changes against the wave base",
            )  # fmt: skip
        delta = _delta(self.base.tree, source.tree)
        paths = set(delta)
        if self._can_fast_forward(source):
            self.head = source
            self._own(paths, change.task_id)
            self._mark_changed(paths)
            return AgentMerge(
                task_id=change.task_id, status=MergeStatus.MERGED, source=str(source.id),
                commit=str(source.id), reason="fast-forward",
            )  # fmt: skip
        conflicts = _Conflicts(self, change.task_id, source)
        if self._overlaps(paths):
            index = self.repo.merge_trees(self.base.tree, self.head.tree, source.tree)
            if index.conflicts is not None:
                conflicts.resolve(index)
            tree = index.write_tree(self.repo)
        else:  # nothing merged so far touches these paths: apply them as they are
            tree = update_tree(self.repo, self.head.tree, delta)
        self._mark_changed(paths)
        resolutions = tuple(conflicts.resolutions)
        if conflicts.files:
            self.fix_tasks.append(conflicts.fix_task())
        if tree == self.head.tree.id:
            return AgentMerge(
                task_id=change.task_id, status=MergeStatus.CONFLICTED, source=str(source.id),
                commit=None, resolutions=resolutions,
                reason="every change conflicted and went to a fix task",
            )  # fmt: skip
        self.head = self._write_commit(change, source, tree)
        self._own(paths - conflicts.set_aside, change.task_id)
        return AgentMerge(
            task_id=change.task_id, status=MergeStatus.MERGED, source=str(source.id),
            commit=str(self.head.id), resolutions=resolutions,
        )  # fmt: skip

    def start_at(self, tip: pygit2.Commit) -> None:
        """Build the integration on ``tip``, a later commit of the target branch: what it
        changed since the base is treated as merged already, so overlapping agent changes
        go through the conflict policy against it."""
        self.start = self.head = tip
        paths = set(_delta(self.base.tree, tip.tree))
        self._own(paths, "the target branch")
        self._mark_changed(paths)

    def _mark_changed(self, paths: set[str]) -> None:
        self.changed.update(paths)
        self.changed_folders.update(ancestors(paths))

    def _overlaps(self, paths: Collection[str]) -> bool:
        """Whether ``paths`` meet what is merged already: same path, or file vs folder."""
        if not self.changed:
            return False
        return bool(
            self.changed.intersection(paths)
            or self.changed_folders.intersection(paths)
            or self.changed.intersection(ancestors(paths))
        )

    def _can_fast_forward(self, source: pygit2.Commit) -> bool:
        """The integration is still the base and the agent's own commit sits right on it."""
        return (
            self.head.id == self.base.id
            and list(source.parent_ids) == [self.base.id]
            and KIND_TRAILER not in parse_trailers(source.message)
        )

    def _own(self, paths: set[str], task_id: str) -> None:
        for path in paths:
            self.owner[path] = task_id

    def _write_commit(
        self, change: AgentChange, source: pygit2.Commit, tree: pygit2.Oid
    ) -> pygit2.Commit:
        title = change.title.strip().splitlines()[0] if change.title.strip() else "agent changes"
        # the task id leads the message once, even when the title already starts with it
        title = title.removeprefix(f"{change.task_id}:").strip() or "agent changes"
        message = (
            f"{change.task_id}: {title}\n\n"
            f"Seawall-Session: {self.session_id}\n"
            f"Seawall-Wave: {self.wave}\n"
            f"Seawall-Task: {change.task_id}\n"
            f"Seawall-Source: {source.id}\n"
            f"{SOURCE_TREE_TRAILER}: {source.tree.id}\n"
        )
        signature = seawall_signature()
        oid = self.repo.create_commit(None, signature, signature, message, tree, [self.head.id])
        return self.repo[oid].peel(pygit2.Commit)


class _Conflicts:
    """Applies the conflict policy to one agent's merge index."""

    def __init__(self, state: _MergeState, task_id: str, source: pygit2.Commit) -> None:
        self.state = state
        self.repo = state.repo
        self.task_id = task_id
        self.source = source
        self.resolutions: list[Resolution] = []
        self.files: list[str] = []
        self.against: set[str] = set()
        self.hunks: list[str] = []
        self.set_aside: set[str] = set()
        self.moved_away: list[str] = []

    @property
    def fix_id(self) -> str:
        return f"{self.task_id}-fix-w{self.state.wave}"

    def resolve(self, index: pygit2.Index) -> None:
        assert index.conflicts is not None
        keep: list[pygit2.IndexEntry] = []
        doomed: set[str] = set()
        conflicts = list(index.conflicts)
        self.moved_away = [_path(a) for a, o, t in conflicts if a and o is None and t is None]
        for ancestor, ours, theirs in conflicts:
            doomed.update(_path(e) for e in (ancestor, ours, theirs) if e is not None)
            chosen = self._decide(index, ancestor, ours, theirs)
            if chosen is not None:
                keep.append(chosen)
        for path in doomed:
            if path in index.conflicts:
                del index.conflicts[path]
        for entry in keep:
            self._clear_folder(index, _path(entry))
            index.add(entry)

    def _clear_folder(self, index: pygit2.Index, path: str) -> None:
        """A kept file wins over a later agent's folder of the same name."""
        prefix = path + "/"
        for inner in [_path(e) for e in index if _path(e).startswith(prefix)]:
            index.remove(inner)
            self._set_aside(inner, MergeRule.FILE_FOLDER, owner_of=path)
            self.hunks.append(f"{inner}: its folder collides with the file {path}")

    def _decide(self, index: pygit2.Index, ancestor: Entry, ours: Entry, theirs: Entry) -> Entry:
        """The entry to keep in the tree for one conflict, recording the resolution."""
        if ancestor is None and ours is not None and theirs is not None:
            return self._both_added(ours, theirs)
        if ancestor is not None and ours is not None and theirs is not None:
            rule = self._modified_rule(ancestor, ours, theirs)
            self._set_aside(_path(ours), rule)
            if rule is MergeRule.BOTH_MODIFIED:
                self.hunks.append(self._hunks(ancestor, ours, theirs))
            else:
                self.hunks.append(f"{_path(ours)}: {rule.split(':')[0]} conflict")
            return ours
        if ancestor is not None and (ours is None) != (theirs is None):
            self._set_aside(_path(ancestor), MergeRule.DELETE_MODIFY)
            side = "kept" if ours is not None else "deleted"
            self.hunks.append(f"{_path(ancestor)}: the earlier change {side} the file")
            return ours
        if theirs is not None and _has_folder(index, _path(theirs)):
            self._set_aside(_path(theirs), MergeRule.FILE_FOLDER)
            self.hunks.append(f"{_path(theirs)}: the file collides with a folder of that name")
            return None
        if theirs is not None:  # a later rename destination that collides with the earlier's
            origin = self.moved_away[0] if self.moved_away else None
            self._set_aside(_path(theirs), MergeRule.RENAME_RENAME, owner_of=origin)
            self.hunks.append(f"{_path(theirs)}: rename/rename conflict")
            return None
        return ours  # the earlier side of a rename/rename, or a path both sides moved away

    def _both_added(self, ours: pygit2.IndexEntry, theirs: pygit2.IndexEntry) -> Entry:
        """Both added the file: merged line by line if unambiguous, else the later set aside."""
        path = _path(ours)
        rule = self._modified_rule(None, ours, theirs, text=MergeRule.BOTH_ADDED)
        if rule is MergeRule.BOTH_ADDED:
            union = line_union(self.repo, ours.id, theirs.id)
            if union is not None:
                self._record(path, MergeRule.BOTH_ADDED_MERGED, later_wins=True)
                return pygit2.IndexEntry(path, union, ours.mode)
            self.hunks.append(self._hunks(None, ours, theirs))
        else:
            self.hunks.append(f"{path}: both added it, {rule.split(':')[0]} conflict")
        self._set_aside(path, rule)
        return ours

    def _modified_rule(
        self,
        ancestor: Entry,
        ours: pygit2.IndexEntry,
        theirs: pygit2.IndexEntry,
        *,
        text: MergeRule = MergeRule.BOTH_MODIFIED,
    ) -> MergeRule:
        """MODE, BINARY, or ``text`` when all versions are text files of one mode."""
        entries = [e for e in (ancestor, ours, theirs) if e is not None]
        if ours.mode != theirs.mode:
            return MergeRule.MODE
        if any(e.mode in (FileMode.LINK, FileMode.COMMIT) for e in entries):
            return MergeRule.BINARY
        if any(self.repo[e.id].peel(pygit2.Blob).is_binary for e in entries):
            return MergeRule.BINARY
        return text

    def _record(
        self, path: str, rule: MergeRule, *, later_wins: bool, owner_of: str | None = None
    ) -> None:
        earlier = self.state.owner.get(owner_of or path, "base")
        self.resolutions.append(
            Resolution(
                path=path,
                rule=rule,
                kept_task=self.task_id if later_wins else earlier,
                other_task=earlier if later_wins else self.task_id,
                fix_task=None if later_wins else self.fix_id,
            )
        )

    def _set_aside(self, path: str, rule: MergeRule, *, owner_of: str | None = None) -> None:
        self._record(path, rule, later_wins=False, owner_of=owner_of)
        self.files.append(path)
        self.set_aside.add(path)
        self.against.add(self.state.owner.get(owner_of or path, "base"))

    def _hunks(self, ancestor: Entry, ours: pygit2.IndexEntry, theirs: pygit2.IndexEntry) -> str:
        """The conflicting regions, labelled with the agents that wrote them."""
        earlier = self.state.owner.get(_path(ours), "base")
        merged = self.repo.merge_file_from_index(ancestor, ours, theirs)
        blocks: list[str] = []
        current: list[str] | None = None
        for line in merged.contents.splitlines():
            if line.startswith("<<<<<<<"):
                current = [f"<<<<<<< {earlier} (kept in the tree)"]
            elif line.startswith(">>>>>>>") and current is not None:
                current.append(f">>>>>>> {self.task_id} (this fix task)")
                blocks.append("\n".join(current))
                current = None
            elif current is not None:
                current.append(line)
        body = "\n".join(blocks)
        return f"--- {ours.path}\n{body}"

    def fix_task(self) -> FixTask:
        return FixTask(
            id=self.fix_id,
            source_task=self.task_id,
            against_tasks=tuple(sorted(self.against)),
            files=tuple(self.files),
            source_commit=str(self.source.id),
            hunks="\n\n".join(self.hunks),
        )


def _delta(old: pygit2.Tree, new: pygit2.Tree) -> dict[str, BlobEntry | None]:
    """Every path that differs between the trees, with its new blob (``None``: removed)."""
    changes: dict[str, BlobEntry | None] = {}
    for delta in old.diff_to_tree(new).deltas:
        if delta.status != DeltaStatus.ADDED:
            changes.setdefault(delta.old_file.path, None)
        if delta.status != DeltaStatus.DELETED:
            changes[delta.new_file.path] = (delta.new_file.id, delta.new_file.mode)
    return changes


def _has_folder(index: pygit2.Index, path: str) -> bool:
    prefix = path + "/"
    return any(_path(entry).startswith(prefix) for entry in index)


def _path(entry: pygit2.IndexEntry) -> str:
    return os.fspath(entry.path)
