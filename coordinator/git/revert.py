"""Reverting an agent (SPIRAL recovery): its work leaves the tree but stays on its ref."""

from __future__ import annotations

from dataclasses import dataclass

from seawall.git.checkpoints import Checkpointer, CheckpointMode, save_worktree
from seawall.git.repo import open_repository, resolve_commit, run_git
from seawall.git.target import expand_paths, restore_path

__all__ = ["RevertResult", "revert_agent"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RevertResult:
    """What was put back to the base, and the commit that still holds the discarded work."""

    task_id: str
    restored: tuple[str, ...]
    saved_at: str | None  # a commit on the agent's checkpoint ref, None if it changed nothing


def revert_agent(checkpointer: Checkpointer, *, reason: str = "reverted") -> RevertResult:
    """Save the agent's current files on its ref, then put its files back to the base.

    In place, only the agent's files (every path its checkpoints hold) are restored from
    the base. A worktree is reset to the base and cleaned. Leave the agent out of
    ``merge_wave`` so its changes never reach the integration.
    """
    task_id = checkpointer.task_id
    if checkpointer.mode is CheckpointMode.PATHS:
        checkpointer.checkpoint()
        repo = open_repository(checkpointer.root)
        tree = resolve_commit(repo, checkpointer.base).tree
        touched = checkpointer.changed_paths() | checkpointer.touched_paths
        paths = sorted(expand_paths(repo, checkpointer.root, tree, touched))
        saved = checkpointer.wip(reason)
        for path in paths:
            restore_path(repo, checkpointer.root, tree, path)
        return RevertResult(task_id=task_id, restored=tuple(paths), saved_at=saved)
    paths = sorted(checkpointer.changed_paths(whole_tree=True))
    saved = save_worktree(
        checkpointer.root,
        session_id=checkpointer.session_id,
        task_id=task_id,
        reason=reason,
    )
    run_git(["reset", "-q", "--hard", checkpointer.base], cwd=checkpointer.root)
    run_git(["clean", "-fdq"], cwd=checkpointer.root)
    return RevertResult(task_id=task_id, restored=tuple(paths), saved_at=saved)
