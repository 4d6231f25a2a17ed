"""A plan's generations: the same groups networkx's topological generations give, each
in plan order; dependencies on tasks already done ignored; a cycle named."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from seawall.errors import ConfigurationError
from seawall.model import Task
from seawall.plan.waves import task_generations


def _plan(count: int, seed: int) -> list[Task]:
    rng = random.Random(seed)
    tasks = []
    for index in range(count):
        deps = [f"t{rng.randrange(index)}" for _ in range(rng.randint(0, 3))] if index else []
        if index and rng.random() < 0.2:
            deps.append("done-already")  # a task of an earlier session, not in this list
        tasks.append(Task(id=f"t{index}", prompt="x", depends_on=tuple(deps)))
    rng.shuffle(tasks)  # plan order need not be topological
    return tasks


@pytest.mark.parametrize("seed", range(25))
def test_the_generations_are_networkx_s_in_plan_order(seed: int) -> None:
    tasks = _plan(random.Random(seed).randint(1, 300), seed)
    ids = {task.id for task in tasks}
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(ids)
    graph.add_edges_from((d, t.id) for t in tasks for d in t.depends_on if d in ids)
    expected = [set(generation) for generation in nx.topological_generations(graph)]
    got = task_generations(tasks)
    assert [{task.id for task in generation} for generation in got] == expected
    order = {task.id: at for at, task in enumerate(tasks)}
    for generation in got:
        assert [order[t.id] for t in generation] == sorted(order[t.id] for t in generation)


def test_a_dependency_named_twice_counts_once() -> None:
    tasks = [Task(id="a", prompt="x"), Task(id="b", prompt="x", depends_on=("a", "a"))]
    assert [[t.id for t in g] for g in task_generations(tasks)] == [["a"], ["b"]]


def test_a_cycle_is_named() -> None:
    tasks = [
        Task(id="free", prompt="x"),
        Task(id="a", prompt="x", depends_on=("b",)),
        Task(id="b", prompt="x", depends_on=("a",)),
    ]
    with pytest.raises(ConfigurationError, match="cycle among: a, b"):
        task_generations(tasks)


def test_no_tasks_no_generations() -> None:
    assert task_generations([]) == []
