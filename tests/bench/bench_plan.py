"""Planning a 10,000-task DAG, against networkx's own topological generations."""

from __future__ import annotations

import random

import networkx as nx

from coordinator.model import SessionConfig, Task
from coordinator.plan.waves import build_graph, plan_task_waves
from tests.bench.harness import BenchResult, best_of


def _tasks(count: int, seed: int = 7) -> list[Task]:
    rng = random.Random(seed)
    tasks = []
    for index in range(count):
        deps = {f"t{rng.randrange(index)}" for _ in range(rng.randint(0, 3))} if index else set()
        tasks.append(Task(id=f"t{index}", prompt="x", depends_on=tuple(sorted(deps))))
    return tasks


def run() -> list[BenchResult]:
    tasks = _tasks(10_000)
    session = SessionConfig(max_agents_per_wave=8)
    graph = build_graph(tasks)
    ours = best_of(3, lambda: plan_task_waves(tasks, session))
    baseline = best_of(3, lambda: list(nx.topological_generations(graph)))
    waves = plan_task_waves(tasks, session)
    return [
        BenchResult(
            name="plan 10,000-task DAG into waves",
            figure=ours * 1000,
            baseline=baseline * 1000,
            unit="ms",
            baseline_name="nx.topological_generations",
            note=f"{len(waves)} waves; ours includes graph build, ordering, caps, isolation",
        )
    ]
