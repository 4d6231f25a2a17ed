"""Both schedules against the physical limit of any scheduler, on seeded task graphs.

Each graph (a chain, a fan out and in, diamonds, a wide layer, a deep layered graph)
gets lognormal durations (sigma 0.8) for its tasks, each task a command agent that
sleeps that long and writes one file. The same graph runs as a whole ``seawall run``
session (in this process, real git, real agent processes) under ``schedule = "waves"``
and under ``schedule = "rolling"``, in the same run, with the cap of 4 agents at once.
The lower bound of any schedule is max(critical path, total work / cap); each line
prints the wall time against it, the ratio, and seawall's overhead per agent (the wall
time past the lower bound, spread over the agents). The goal: rolling within 1.1x of
the bound at the median, within 1.2x for every graph.

``SEAWALL_BENCH_SCHEDULE_MEDIAN`` sets the median duration in seconds (default 2.5).
"""

from __future__ import annotations

import heapq
import io
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio

from seawall.plan.loader import parse_plan
from seawall.report.progress import Progress
from seawall.session.engine import Session
from seawall.state.ledger import SessionPhase
from tests.bench.harness import BenchResult
from tests.integration.sessionkit import SPEC_AGENT, make_repo

CAP = 4
SIGMA = 0.8
SEED = 34
MEDIAN_S = float(os.environ.get("SEAWALL_BENCH_SCHEDULE_MEDIAN", "2.5"))
GOAL_MEDIAN, GOAL_EACH = 1.1, 1.2


@dataclass(frozen=True, slots=True)
class Graph:
    """A task graph: each task's dependencies and duration (seconds)."""

    name: str
    deps: dict[str, tuple[str, ...]]
    duration: dict[str, float]

    def critical_path(self) -> float:
        finish: dict[str, float] = {}
        for task in self.deps:  # listed in an order where dependencies come first
            start = max((finish[d] for d in self.deps[task]), default=0.0)
            finish[task] = start + self.duration[task]
        return max(finish.values())

    def lower_bound(self) -> float:
        return max(self.critical_path(), sum(self.duration.values()) / CAP)


def simulate_rolling(graph: Graph, overhead: float = 0.0) -> float:
    """The makespan of the rolling schedule with no cost but ``overhead`` per agent:
    ready tasks start in plan order whenever a slot is free (list scheduling without
    knowing durations, as seawall dispatches)."""
    done_at: dict[str, float] = {}
    running: list[tuple[float, str]] = []
    pending = list(graph.deps)
    now = 0.0
    while pending or running:
        for task in [t for t in pending if all(d in done_at for d in graph.deps[t])]:
            if len(running) == CAP:
                break
            pending.remove(task)
            heapq.heappush(running, (now + graph.duration[task] + overhead, task))
        now, task = heapq.heappop(running)
        done_at[task] = now
    return now


def _chain(rng: random.Random) -> dict[str, tuple[str, ...]]:
    return {f"c{i}": ((f"c{i - 1}",) if i else ()) for i in range(6)}


def _fan(rng: random.Random) -> dict[str, tuple[str, ...]]:
    middle = {f"m{i}": ("root",) for i in range(8)}
    return {"root": (), **middle, "sink": tuple(middle)}


def _diamonds(rng: random.Random) -> dict[str, tuple[str, ...]]:
    deps: dict[str, tuple[str, ...]] = {"d0": ()}
    for k in range(3):
        top = f"d{k}"
        deps[f"l{k}"] = (top,)
        deps[f"r{k}"] = (top,)
        deps[f"d{k + 1}"] = (f"l{k}", f"r{k}")
    return deps


def _wide(rng: random.Random) -> dict[str, tuple[str, ...]]:
    return {f"w{i}": () for i in range(12)}


def _deep(rng: random.Random) -> dict[str, tuple[str, ...]]:
    deps: dict[str, tuple[str, ...]] = {}
    layers = [[f"n{layer}x{i}" for i in range(3)] for layer in range(4)]
    for layer, names in enumerate(layers):
        for name in names:
            before = layers[layer - 1] if layer else []
            count = min(len(before), rng.randint(1, 2))
            deps[name] = tuple(sorted(rng.sample(before, count)))
    return deps


SHAPES: tuple[tuple[str, Callable[[random.Random], dict[str, tuple[str, ...]]]], ...] = (
    ("chain", _chain),
    ("fan", _fan),
    ("diamonds", _diamonds),
    ("wide", _wide),
    ("deep", _deep),
)


def graphs(seed: int = SEED, median: float = MEDIAN_S) -> list[Graph]:
    """The seeded graphs, with lognormal durations (median ``median``, sigma 0.8)."""
    rng = random.Random(seed)
    found: list[Graph] = []
    for name, shape in SHAPES:
        deps = shape(rng)
        duration = {
            task: round(min(rng.lognormvariate(math.log(median), SIGMA), median * 5), 2)
            for task in deps
        }
        found.append(Graph(name=name, deps=deps, duration=duration))
    return found


def _plan_text(graph: Graph, schedule: str, writable: Path) -> str:
    lines = [
        "[session]",
        f'name = "{graph.name}"',
        f'schedule = "{schedule}"',
        f"max_agents = {CAP}",
        'agent = "agent"',
        f"sandbox_writable = [{json.dumps(str(writable))}]",
        "accept_hooks_only = true",
        'session_type = "feature"',
        "",
        "[runners.agent]",
        'kind = "command"',
        f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(SPEC_AGENT))}]",
    ]
    for task, deps in graph.deps.items():
        lines += [
            "",
            "[[task]]",
            f'id = "{task}"',
            f'prompt = "write out/{task}.txt"',
            f'scope = ["out/{task}.txt"]',
            f"depends_on = {json.dumps(list(deps))}",
        ]
    return "\n".join(lines) + "\n"


def run_graph(graph: Graph, schedule: str, tmp: Path) -> float:
    """The wall time of ``graph`` as one whole session under ``schedule``."""
    where = tmp / f"{graph.name}-{schedule}"
    repo = make_repo(where / "repo")
    spec = where / "agents.json"
    spec.write_text(
        json.dumps(
            {
                task: [
                    {
                        "writes": {f"out/{task}.txt": f"{task}\n"},
                        "sleep": graph.duration[task],
                        "final": f"STATUS: done — {task}",
                    }
                ]
                for task in graph.deps
            }
        )
    )
    os.environ["AGENT_SPEC"] = str(spec)
    text = _plan_text(graph, schedule, where)
    session = Session(
        parse_plan(text),
        repo=repo,
        progress=Progress(io.StringIO(), live=False),
        plan_text=text,
    )
    start = time.perf_counter()
    result = anyio.run(session.run)
    wall = time.perf_counter() - start
    if result.phase is not SessionPhase.DONE or len(result.done) != len(graph.deps):
        raise AssertionError(f"{graph.name} ({schedule}): {result.phase}, done {result.done}")
    return wall


def run() -> list[BenchResult]:
    results: list[BenchResult] = []
    rolling_ratios: list[float] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for graph in graphs():
            bound = graph.lower_bound()
            n = len(graph.deps)
            walls = {schedule: run_graph(graph, schedule, tmp) for schedule in ("waves", "rolling")}
            rolling_ratios.append(walls["rolling"] / bound)
            for schedule, wall in walls.items():
                results.append(
                    BenchResult(
                        name=f"{graph.name} ({n} tasks), {schedule}",
                        figure=wall,
                        baseline=bound,
                        unit="s",
                        baseline_name=(
                            f"lower bound max(critical path {graph.critical_path():.2f}, "
                            f"work/{CAP} {sum(graph.duration.values()) / CAP:.2f})"
                        ),
                        target=f"<= {GOAL_EACH}" if schedule == "rolling" else "",
                        note=f"overhead {(wall - bound) / n * 1000:.0f} ms per agent"
                        + (
                            f"; rolling with no overhead {simulate_rolling(graph) / bound:.3f}"
                            if schedule == "rolling"
                            else ""
                        ),
                    )
                )
    median = statistics.median(rolling_ratios)
    results.append(
        BenchResult(
            name="rolling, median over the graphs",
            figure=median,
            baseline=1.0,
            unit="x bound",
            baseline_name="the lower bound",
            target=f"<= {GOAL_MEDIAN} (every graph <= {GOAL_EACH})",
            note="goal met"
            if median <= GOAL_MEDIAN and max(rolling_ratios) <= GOAL_EACH
            else f"goal missed (worst {max(rolling_ratios):.3f})",
        )
    )
    return results
