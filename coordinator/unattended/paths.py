"""Where a runner directory keeps its files, and how the runner writes times."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunnerPaths", "format_ts"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerPaths:
    """The files of one runner directory."""

    dir: Path

    @property
    def queue(self) -> Path:
        return self.dir / "queue.json"

    @property
    def attempted(self) -> Path:
        return self.dir / "attempted.jsonl"

    @property
    def ticks(self) -> Path:
        return self.dir / "ticks.jsonl"

    @property
    def log(self) -> Path:
        return self.dir / "runner.log"

    @property
    def lock(self) -> Path:
        return self.dir / "tick.lock"

    @property
    def plans(self) -> Path:
        return self.dir / "plans"


def format_ts(ts: float) -> str:
    """A unix time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
