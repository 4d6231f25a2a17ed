"""The session's task queue: the pending tasks of the ledger and the next wave's choice."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from seawall.model import Task
from seawall.state.ledger import SessionState

__all__ = ["add_pending", "ready_tasks", "remove_pending"]


def ready_tasks(state: SessionState) -> list[Task]:
    """Pending tasks whose dependencies are all settled (no longer pending), in queue order.

    A dependency that was abandoned (escalated with a carryover issue) counts as settled:
    its dependents still run, and their prompt says what is missing.
    """
    return ready_of(state.pending)


def ready_of(pending: Sequence[Task]) -> list[Task]:
    """The tasks of ``pending`` none of whose dependencies is pending, in queue order."""
    pending_ids = {task.id for task in pending}
    return [task for task in pending if not pending_ids.intersection(task.depends_on)]


def remove_pending(state: SessionState, task_ids: Iterable[str]) -> None:
    ids = set(task_ids)
    state.pending = [task for task in state.pending if task.id not in ids]


def add_pending(state: SessionState, tasks: Sequence[Task]) -> None:
    """Queue ``tasks`` (replacing any pending entry with the same id), in front of the rest."""
    ids = {task.id for task in tasks}
    rest = [task for task in state.pending if task.id not in ids]
    state.pending = [*tasks, *rest]
