"""From a plan's task graph to waves: topological generations split by the wave cap."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

import networkx as nx

from seawall.errors import ConfigurationError
from seawall.model import (
    CollisionRisk,
    Isolation,
    Plan,
    SessionConfig,
    Task,
    Wave,
)

__all__ = ["build_graph", "plan_waves", "task_generations"]

_HIGHEST_FIRST = (CollisionRisk.HIGH, CollisionRisk.MEDIUM)
_collision_risk = attrgetter("collision_risk")


def build_graph(tasks: Sequence[Task]) -> nx.DiGraph[str]:
    """The dependency DAG: an edge ``a -> b`` means b depends on a."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(task.id for task in tasks)
    graph.add_edges_from((dep, task.id) for task in tasks for dep in task.depends_on)
    return graph


def task_generations(tasks: Sequence[Task]) -> list[list[Task]]:
    """Topological generations of ``tasks``, each in plan order (deterministic): a task's
    generation is one more than its latest dependency's.

    Dependencies on tasks not in ``tasks`` (already done) are ignored. Kahn's walk over
    plain lists (the generations ``networkx.topological_generations`` gives, without
    building a graph object first); one pass over the plan then puts each task in its
    generation's list, so every list is in plan order without a sort.
    """
    position = {task.id: at for at, task in enumerate(tasks)}
    waiting = [0] * len(tasks)  # dependencies not yet placed in a generation
    dependents: list[list[int]] = [[] for _ in tasks]
    for at, task in enumerate(tasks):
        for dep in dict.fromkeys(task.depends_on):  # a dependency named twice counts once
            before = position.get(dep)
            if before is not None:
                waiting[at] += 1
                dependents[before].append(at)
    level = [0] * len(tasks)
    frontier = [at for at, count in enumerate(waiting) if not count]
    depth = placed = 0
    while frontier:
        placed += len(frontier)
        following = []
        for at in frontier:
            level[at] = depth
            for later in dependents[at]:
                waiting[later] -= 1
                if not waiting[later]:
                    following.append(later)
        frontier, depth = following, depth + 1
    if placed != len(tasks):
        stuck = sorted(task.id for task, count in zip(tasks, waiting, strict=True) if count)
        raise ConfigurationError(
            f"the tasks' dependencies form a cycle among: {', '.join(stuck[:10])}"
        )
    generations: list[list[Task]] = [[] for _ in range(depth)]
    for task, at in zip(tasks, level, strict=True):
        generations[at].append(task)
    return generations


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
    # One decision per wave shape: its collision risk, then its size. Sizes are looked
    # up by int (an enum's hash is a Python call) and the risk only when it varies.
    decided: dict[CollisionRisk, dict[int, Wave]] = {risk: {} for risk in CollisionRisk}
    # Counted, not put in a set: a list compares members by identity first, in C.
    uniform = list(map(_collision_risk, tasks)).count(CollisionRisk.LOW) == len(tasks)
    low = decided[CollisionRisk.LOW]
    number = first_wave
    for generation in task_generations(tasks):
        row = tuple(generation)
        for start in range(0, len(row), cap):
            chunk = row[start : start + cap]
            shapes = low if uniform else decided[_risk(chunk)]
            like = shapes.get(len(chunk))
            if like is None:
                like = shapes[len(chunk)] = make_wave(
                    chunk, session, number=number, base_is_stale=base_is_stale
                )
                waves.append(like)
            else:
                waves.append(like.renumbered(number, chunk))
            number += 1
    return tuple(waves)


def _risk(tasks: Sequence[Task]) -> CollisionRisk:
    """The highest collision risk among ``tasks`` (LOW for none)."""
    risks = list(map(_collision_risk, tasks))
    for risk in _HIGHEST_FIRST:
        if risk in risks:
            return risk
    return CollisionRisk.LOW


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
    from seawall.isolation import explain_enforcement, explain_isolation

    risk = _risk(tasks)
    if isolation is None:
        resolved = explain_isolation(
            agent_count=len(tasks),
            session_type=session.session_type,
            collision_risk=risk,
            config_isolation=session.isolation,
            base_is_stale=base_is_stale,
        )
        isolation, isolation_reason = resolved.value, resolved.reason
    enforcement = explain_enforcement(isolation=isolation, config_enforcement=session.enforcement)
    return Wave(
        number=number,
        tasks=tasks,
        isolation=isolation,
        enforcement=enforcement.value,
        max_turns=session.resolved_max_turns(),
        isolation_reason=isolation_reason,
        enforcement_reason=enforcement.reason,
    )
