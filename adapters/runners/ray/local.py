"""The coordinator's side of a remote agent: its worktree, mirrored from the worker.

``LocalWorktree.open`` checks that the workspace is a linked worktree with a branch
checked out and records where the agent starts. ``apply`` takes one ``CheckpointNote``
from the worker: it stores the bundle's objects, moves the agent's checkpoint ref
(compare-and-swap: once someone else, such as the session's own checkpointer, moved it,
the ref is theirs), writes the files that changed and moves the branch. Synchronous
(git CLI and pygit2): the runner calls it in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from seawall.adapters.runners.ray.git import (
    apply_tree,
    commit_tree,
    compare_and_swap_ref,
    git_identity,
    move_branch,
    unbundle,
)
from seawall.adapters.runners.ray.wire import CheckpointNote
from seawall.errors import GitError, RunnerError
from seawall.git.repo import checkpoint_ref, open_repository, ref_target
from seawall.runner import AgentRequest

__all__ = ["LocalWorktree"]


@dataclass(slots=True, kw_only=True)
class LocalWorktree:
    """The agent's workspace on the coordinator and how far the mirror has come."""

    worktree: Path  # root of the linked worktree
    subdir: str  # the workspace relative to it
    branch: str
    head: str
    tree: str
    ref: str
    ref_value: str | None
    identity: dict[str, str] = field(default_factory=dict)
    owns_ref: bool = True
    notes: int = 0

    @classmethod
    def open(cls, request: AgentRequest) -> LocalWorktree:
        workspace = request.workspace
        if not workspace.is_dir():
            raise RunnerError(
                f"task {request.task_id!r}: cannot start the agent: workspace "
                f"{str(workspace)!r} is not a directory"
            )
        try:
            repo = open_repository(workspace)
        except GitError as exc:
            raise RunnerError(
                f"task {request.task_id!r}: the ray runner needs a git worktree: {exc}"
            ) from exc
        if not repo.workdir or not (Path(repo.path) / "commondir").is_file():
            raise RunnerError(
                f"task {request.task_id!r}: the ray runner needs the agent's own worktree "
                f'(isolation = "worktree"), not {str(workspace)!r}'
            )
        if repo.head_is_detached or repo.head_is_unborn:
            raise RunnerError(
                f"task {request.task_id!r}: the worktree {repo.workdir} has no branch checked out"
            )
        root = Path(repo.workdir).resolve()
        ref = checkpoint_ref(request.session or "session", request.task_id)
        existing = repo.references.get(ref)
        head = str(repo.head.target)
        return cls(
            worktree=root,
            subdir=workspace.resolve().relative_to(root).as_posix().strip("."),
            branch=repo.head.shorthand,
            head=head,
            tree=commit_tree(root, head),
            ref=ref,
            ref_value=None if existing is None else str(ref_target(existing)),
            identity=git_identity(root),
        )

    def apply(self, note: CheckpointNote) -> None:
        """Store the note's objects; move the checkpoint ref, the files and the branch."""
        if note.bundle is not None:
            unbundle(self.worktree, note.bundle)
        if note.checkpoint and self.owns_ref and note.checkpoint != self.ref_value:
            if compare_and_swap_ref(self.worktree, self.ref, note.checkpoint, self.ref_value):
                self.ref_value = note.checkpoint
            else:  # someone else (the session's own checkpointer) owns the ref now
                self.owns_ref = False
        apply_tree(self.worktree, self.tree, note.tree)
        self.tree = note.tree
        if note.branch_tip != self.head:
            move_branch(self.worktree, note.branch_tip)
            self.head = note.branch_tip
        self.notes += 1
