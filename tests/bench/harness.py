"""The benchmark harness: every benchmark reports a figure against a baseline from the same run."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
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
