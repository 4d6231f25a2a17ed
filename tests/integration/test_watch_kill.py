"""A running session stopped as a whole from outside its coordinator: ``K`` (then ``y``)
in ``seawall watch``, read in a real pseudo-terminal, and ``seawall kill`` from another
shell. The running agents stop, the session ends killed, and the telemetry says who
stopped it and through what."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from seawall.state.store import StateStore, latest_session
from tests.integration.sessionkit import make_repo
from tests.integration.test_watch import ANSI, Terminal, running, write_plan
from tests.waiting import wait_until


def killed_events(store: StateStore) -> list[dict[str, Any]]:
    lines = store.paths.events.read_text().splitlines()
    return [json.loads(line) for line in lines if '"session_killed"' in line]


def start(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo")
    return repo, write_plan(tmp_path, ["silent"])


def test_K_in_watch_stops_the_running_session(tmp_path: Path) -> None:
    repo, plan = start(tmp_path)
    with (
        (tmp_path / "run.log").open("wb") as log,
        running(["run", str(plan), "--repo", str(repo)], cwd=repo, log=log) as run,
    ):
        session = wait_until(
            lambda: latest_session(repo), timeout=30, what="the session to start", process=run
        )
        store = StateStore(repo, session)
        terminal = Terminal(["watch", "--repo", str(repo)], cwd=repo)
        try:
            wait_until(
                terminal.row_where("silent", lambda r: r[0] == "running"),
                timeout=30,
                what="the silent agent running",
            )
            terminal.send("K")
            wait_until(
                lambda: "stop the whole session?" in terminal.pump(),
                timeout=30,
                what="watch to ask for a confirmation",
            )
            assert run.poll() is None  # nothing is stopped before the confirmation
            terminal.send("y")
            # the silent agent would sleep two minutes: the session ends long before
            wait_until(
                lambda: terminal.pump() and run.poll() is not None,
                timeout=60,
                what="the run to end",
            )
            wait_until(
                lambda: terminal.pump() and terminal.process.poll() is not None,
                timeout=30,
                what="watch to exit when the session ended",
            )
            assert terminal.process.returncode == 0
        finally:
            terminal.close()
    output = (tmp_path / "run.log").read_text()
    assert "stopped by the user (seawall watch)" in output, output
    state = store.load()
    assert state.phase.value == "killed"
    silent = state.waves[0].agent("silent")
    assert silent.run is not None and silent.run.truncated
    assert silent.run.stop_reason == "stopped by the user (seawall watch)"
    assert [(e["by"], e["via"]) for e in killed_events(store)] == [("user", "seawall watch")]
    last = ANSI.sub("", terminal.output.rsplit("\x1b[?1049l", 1)[-1])
    assert "killed" in last, last


def test_seawall_kill_of_a_running_session_asks_its_coordinator(tmp_path: Path) -> None:
    repo, plan = start(tmp_path)
    with (
        (tmp_path / "run.log").open("wb") as log,
        running(["run", str(plan), "--repo", str(repo)], cwd=repo, log=log) as run,
    ):
        session = wait_until(
            lambda: latest_session(repo), timeout=30, what="the session to start", process=run
        )
        store = StateStore(repo, session)
        live = store.paths.agent_dir("silent") / "w1-live.json"
        wait_until(live.exists, timeout=30, what="the silent agent's live file", process=run)
        kill = subprocess.run(
            [sys.executable, "-m", "seawall", "kill", "--repo", str(repo)],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert kill.returncode == 0, kill.stderr
        assert "its coordinator was asked to stop it" in kill.stdout
        run.wait(timeout=60)
    state = store.load()
    assert state.phase.value == "killed"
    silent = state.waves[0].agent("silent")
    assert silent.run is not None and silent.run.truncated
    assert silent.run.stop_reason == "stopped by the user (seawall kill)"
    assert [(e["by"], e["via"]) for e in killed_events(store)] == [("user", "seawall kill")]
