"""The benchmark harness: every benchmark reports a figure against a baseline from the same run."""

from __future__ import annotations

import gc
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchResult:
    """One measurement. ``ratio`` is figure / baseline (lower is better unless stated),
    or ``paired_ratio`` when the benchmark timed the two back to back and gives the
    median of their ratios (a shared machine's slow drifts cancel within a pair)."""

    name: str
    figure: float
    baseline: float
    unit: str
    baseline_name: str
    target: str = ""
    note: str = ""
    paired_ratio: float | None = None

    @property
    def ratio(self) -> float:
        if self.paired_ratio is not None:
            return self.paired_ratio
        return self.figure / self.baseline if self.baseline else float("inf")

    def line(self) -> str:
        return (
            f"{self.name}: {self.figure:.4g} {self.unit} vs {self.baseline_name} "
            f"{self.baseline:.4g} {self.unit} -> ratio {self.ratio:.3f}"
            + (f" (target {self.target})" if self.target else "")
            + (f" [{self.note}]" if self.note else "")
        )


def best_of(repeats: int, func: Callable[[], object]) -> float:
    """The fastest of ``repeats`` runs of ``func``, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def alternating(rounds: int, *funcs: Callable[[], object]) -> list[list[float]]:
    """The CPU times (this process's, in seconds) of each function over ``rounds``
    rounds, run one after the other within a round.

    Each call starts from a collected heap, so one function's garbage is not another's
    collection pause, and the order turns every round: the function that runs right
    after another's large heap was freed is measurably slower (the freed arenas are
    mapped again), so a fixed order would favour one side. Time spent waiting for a
    core on a shared machine is nobody's cost, hence CPU time.
    """
    times: list[list[float]] = [[] for _ in funcs]
    for round_ in range(rounds):
        shift = round_ % len(funcs)
        for index in (*range(shift, len(funcs)), *range(shift)):
            gc.collect()
            start = time.process_time()
            funcs[index]()
            times[index].append(time.process_time() - start)
    return times


@dataclass(frozen=True, slots=True, kw_only=True)
class Paired:
    """Two sides timed back to back (``alternating``): the median of the rounds' ratios,
    its quartiles, and each side's median and best time."""

    ratio: float
    low: float
    high: float
    median: float
    best: float
    baseline_median: float
    baseline_best: float


def paired(measured: Sequence[float], baseline: Sequence[float]) -> Paired:
    """Summarise rounds of ``alternating(measured, baseline)``: on a virtual machine whose
    speed drifts over seconds, the best of each side falls at different moments, while a
    round's two calls see the same machine."""
    ratios = [mine / theirs for mine, theirs in zip(measured, baseline, strict=True)]
    low, ratio, high = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return Paired(
        ratio=ratio,
        low=low,
        high=high,
        median=statistics.median(measured),
        best=min(measured),
        baseline_median=statistics.median(baseline),
        baseline_best=min(baseline),
    )


def empty_repo(path: Path) -> Path:
    """A new repository at ``path`` on branch main, with one empty commit."""
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(
        ["git", "-C", str(path), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q",
         "--allow-empty", "-m", "init"],
        check=True,
    )  # fmt: skip
    return path
