"""``seawall runner status``: one screen from the runner's files; the public namespace."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import seawall.unattended as unattended
from seawall.cli import main
from seawall.unattended.config import RunnerSettings
from seawall.unattended.executor import ExecutionRequest, ExecutionResult
from seawall.unattended.paths import RunnerPaths
from seawall.unattended.queue import QueueFile
from seawall.unattended.status_view import ItemState, render_status, runner_status
from seawall.unattended.tick import run_tick

NOW = 1_800_000_000.0


def at(moment: float) -> Callable[[], float]:
    return lambda: moment


def failing(request: ExecutionRequest) -> ExecutionResult:
    return ExecutionResult(outcome="failed", exit_code=5, detail="exit 5")


def open_breaker(tmp_path: Path) -> tuple[Path, RunnerSettings]:
    runner = tmp_path / "runner"
    queue = QueueFile(RunnerPaths(dir=runner).queue)
    for name in ("a", "b", "c", "d"):
        plan = tmp_path / f"{name}.toml"
        plan.write_text("[session]\n")
        queue.enqueue_plan(plan, now=NOW)
    settings = RunnerSettings(repo=tmp_path, max_attempts=1)
    for i in range(4):
        run_tick(runner, settings=settings, executor=failing, clock=at(NOW + i * 60))
    return runner, settings


def test_status_shows_queue_breaker_reason_and_ticks(tmp_path: Path) -> None:
    runner, settings = open_breaker(tmp_path)
    snapshot = runner_status(runner, settings=settings, clock=lambda: NOW + 600)

    assert snapshot.breaker.consecutive_failures == 3
    assert snapshot.breaker.next_probe_at == NOW + 120 + 1800
    assert [s.state for s in snapshot.items] == [ItemState.GIVEN_UP] * 3 + [ItemState.PENDING]
    text = render_status(snapshot)
    assert "breaker: open; 3 consecutive failed attempt(s), limit 3" in text
    assert "opened by 'failed' of c-3" in text
    assert "next probe allowed: " in text
    assert "blocked: breaker open: 3 consecutive failed attempts" in text
    assert "queue: 4 item(s)" in text and "d-4" in text
    assert "last ticks: 4" in text
    assert "breaker-open d-4 (0.0s) failures before: 3" in text
    assert len(text.splitlines()) <= 24  # one screen


def test_status_json_and_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runner, _ = open_breaker(tmp_path)
    assert main(["runner", "status", "--dir", str(runner), "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert data["breaker"]["state"] in ("open", "half-open")
    assert data["breaker"]["consecutive_failures"] == 3
    assert data["blocked_reason"].startswith("breaker open")
    assert [t["action"] for t in data["last_ticks"]] == ["ran", "ran", "ran", "breaker-open"]

    assert main(["runner", "resume", "--dir", str(runner)]) == 0
    assert main(["runner", "status", "--dir", str(runner)]) == 0
    text = capsys.readouterr().out
    assert "blocked: no" in text and "override: pending" in text


def test_the_public_namespace_does_not_drift() -> None:
    # "@py_builtins"/"@pytest_ar": pytest rewrites the asserts of a plugin's distribution
    exported = {name for name in dir(unattended) if not name.startswith(("_", "@"))}
    modules = {
        "breaker",
        "paths",
        "report",
        "config",
        "executor",
        "failure",
        "ledger",
        "logs",
        "outcomes",
        "queue",
        "status_view",
        "tick",
        "annotations",
    }
    assert exported - modules == set(unattended.__all__)
    assert sorted(unattended.__all__) == unattended.__all__
