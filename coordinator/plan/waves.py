"""From a plan's task graph to waves: topological generations split by the wave cap."""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from coordinator.model import CollisionRisk, Enforcement, Isolation, Plan, SessionConfig, Task, Wave

__all__ = ["build_graph", "plan_waves", "task_generations"]

_RISK_ORDER = {CollisionRisk.LOW: 0, CollisionRisk.MEDIUM: 1, CollisionRisk.HIGH: 2}


def build_graph(tasks: Sequence[Task]) -> nx.DiGraph[str]:
    """The dependency DAG: an edge ``a -> b`` means b depends on a."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(task.id for task in tasks)
    graph.add_edges_from((dep, task.id) for task in tasks for dep in task.depends_on)
    return graph


def task_generations(tasks: Sequence[Task]) -> list[list[Task]]:
    """Topological generations of ``tasks``, each in plan order (deterministic).

    Dependencies on tasks not in ``tasks`` (already done) are ignored.
    """
    by_id = {task.id: task for task in tasks}
    order = {task.id: index for index, task in enumerate(tasks)}
    graph = build_graph([_local(task, by_id) for task in tasks])
    return [
        [by_id[task_id] for task_id in sorted(generation, key=order.__getitem__)]
        for generation in nx.topological_generations(graph)
    ]


def _local(task: Task, by_id: dict[str, Task]) -> Task:
    if all(dep in by_id for dep in task.depends_on):
        return task
    return Task(
        id=task.id, prompt=task.prompt, depends_on=tuple(d for d in task.depends_on if d in by_id)
    )


def plan_waves(plan: Plan, *, first_wave: int = 1, base_is_stale: bool = False) -> tuple[Wave, ...]:
    """Plan the waves of ``plan``: one per generation, split at the session's wave cap.

    Each wave carries its resolved isolation and enforcement with the reasons.
    """
    return plan_task_waves(
        plan.tasks, plan.session, first_wave=first_wave, base_is_stale=base_is_stale
    )


def plan_task_waves(
    tasks: Sequence[Task],
    session: SessionConfig,
    *,
    first_wave: int = 1,
    base_is_stale: bool = False,
) -> tuple[Wave, ...]:
    """Plan waves for an arbitrary task list (used again for re-planning mid-session)."""
    cap = session.max_agents_per_wave
    waves: list[Wave] = []
    for generation in task_generations(tasks):
        for start in range(0, len(generation), cap):
            chunk = tuple(generation[start : start + cap])
            waves.append(
                make_wave(
                    chunk, session, number=first_wave + len(waves), base_is_stale=base_is_stale
                )
            )
    return tuple(waves)


def make_wave(
    tasks: tuple[Task, ...],
    session: SessionConfig,
    *,
    number: int,
    base_is_stale: bool = False,
    isolation: Isolation | None = None,
    isolation_reason: str = "",
) -> Wave:
    """A wave of ``tasks`` with isolation and enforcement resolved for it."""
    from coordinator.isolation import explain_enforcement, explain_isolation

    risk = max(
        (task.collision_risk for task in tasks),
        key=_RISK_ORDER.__getitem__,
        default=CollisionRisk.LOW,
    )
    if isolation is None:
        resolved = explain_isolation(
            agent_count=len(tasks),
            session_type=session.session_type,
            collision_risk=risk,
            config_isolation=session.isolation,
            base_is_stale=base_is_stale,
        )
        isolation, isolation_reason = Isolation(resolved.value), resolved.reason
    enforcement = explain_enforcement(isolation=isolation, config_enforcement=session.enforcement)
    return Wave(
        number=number,
        tasks=tasks,
        isolation=isolation,
        enforcement=Enforcement(enforcement.value),
        max_turns=session.resolved_max_turns(),
        isolation_reason=isolation_reason,
        enforcement_reason=enforcement.reason,
    )
