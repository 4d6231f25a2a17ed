"""One-wave `seawall run` sessions of a real agent CLI, for the tests of each CLI runner.

``plan_text`` writes a plan whose one runner (``runner``: its table's lines) runs every
task in one wave with no re-dispatch; ``run_plan`` runs it and reads ``status --json``;
``run_record`` is an agent's run record of wave 1; ``sleeper`` gives a command line no
other process has, and kills what is left running of it after the test. Import the
fixture into a test module (and name it in its ``__all__``) to use it.
"""

from __future__ import annotations

import json
import os
import random
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.realcli import live_processes
from tests.integration.sessionkit import seawall, status

__all__ = ["plan_text", "run_plan", "run_record", "sleeper"]


def plan_text(name: str, runner: list[str], tasks: list[dict[str, object]], extra: str = "") -> str:
    """A one-wave plan: ``runner`` is the lines of ``[runners.agent]`` (its kind first)."""
    lines = [
        "[session]",
        f'name = "{name}"',
        'type = "feature"',
        'agent = "agent"',
        extra,  # more [session] keys
        "[session.wave_breaker]",
        "max_rework_cycles = 0",  # one wave: no re-dispatch
        "[runners.agent]",
        *runner,
    ]
    for task in tasks:
        lines.append("[[task]]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in task.items()]
    return "\n".join(lines) + "\n"


def run_plan(repo: Path, plan: Path, *, timeout: float = 180) -> tuple[int, str, dict[str, Any]]:
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=timeout)
    return done.returncode, done.stdout + done.stderr, status(repo)


def run_record(repo: Path, data: dict[str, Any], task: str) -> dict[str, Any]:
    path = repo / ".seawall" / str(data["session"]) / "agents" / task / "w1-run.json"
    record: dict[str, Any] = json.loads(path.read_text())
    return record


@pytest.fixture
def sleeper() -> Iterator[str]:
    """A command line no other process has, and the cleanup of what it leaves running."""
    marker = f"sleep {random.randint(50_000, 69_999)}"
    yield marker
    for line in live_processes(marker):
        os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)
