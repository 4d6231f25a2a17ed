"""The session's task queue: serialising tasks into the ledger and choosing the next wave."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from coordinator.model import CollisionRisk, Task, TaskKind
from coordinator.state.ledger import SessionState

__all__ = ["ready_tasks", "task_from_dict", "task_to_dict"]


def task_to_dict(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "prompt": task.prompt,
        "scope": list(task.scope),
        "depends_on": list(task.depends_on),
        "kind": str(task.kind),
        "agent": task.agent,
        "max_turns": task.max_turns,
        "collision_risk": str(task.collision_risk),
        "may_change_nothing": task.may_change_nothing,
        "reads": list(task.reads),
        "sparse": task.sparse,
    }


def task_from_dict(data: Mapping[str, Any]) -> Task:
    return Task(
        id=str(data["id"]),
        prompt=str(data["prompt"]),
        scope=tuple(data.get("scope", ())),
        depends_on=tuple(data.get("depends_on", ())),
        kind=TaskKind(data.get("kind", TaskKind.IMPLEMENT)),
        agent=data.get("agent"),
        max_turns=data.get("max_turns"),
        collision_risk=CollisionRisk(data.get("collision_risk", CollisionRisk.LOW)),
        may_change_nothing=bool(data.get("may_change_nothing", False)),
        reads=tuple(data.get("reads", ())),
        sparse=data.get("sparse"),
    )


def ready_tasks(state: SessionState) -> list[Task]:
    """Pending tasks whose dependencies are all settled (no longer pending), in queue order.

    A dependency that was abandoned (escalated with a carryover issue) counts as settled:
    its dependents still run, and their prompt says what is missing.
    """
    pending = [task_from_dict(item) for item in state.pending]
    pending_ids = {task.id for task in pending}
    return [task for task in pending if not pending_ids.intersection(task.depends_on)]


def remove_pending(state: SessionState, task_ids: Iterable[str]) -> None:
    ids = set(task_ids)
    state.pending = [item for item in state.pending if item["id"] not in ids]


def add_pending(state: SessionState, tasks: Sequence[Task]) -> None:
    """Queue ``tasks`` (replacing any pending entry with the same id), in front of the rest."""
    ids = {task.id for task in tasks}
    rest = [item for item in state.pending if item["id"] not in ids]
    state.pending = [task_to_dict(task) for task in tasks] + rest
