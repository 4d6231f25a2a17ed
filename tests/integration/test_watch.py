"""``seawall watch`` on a real running session, read in a real pseudo-terminal; and the
progress a run prints when its output is not a terminal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from seawall.state.store import StateStore, latest_session
from tests.integration.sessionkit import make_repo
from tests.waiting import wait_until

Row = tuple[str, float, str]  # an agent's state, elapsed seconds and last tool

# a slow agent whose last tool changes while it runs, and a silent one to stop
SCRIPTS = """
[scripts.busy]
final = "STATUS: done"
steps = [
  { tool = "Bash", arguments = { command = "ls" }, result = "README.md" },
  { sleep = 4 },
  { tool = "Read", arguments = { file_path = "README.md" }, result = "# project" },
  { sleep = 4 },
  { edit = "src/busy.py", content = "busy = 1\\n" },
]

[[scripts.silent]]
steps = [
  { tool = "Grep", arguments = { pattern = "todo" }, result = "" },
  { sleep = 120 },
]
[[scripts.silent]]
final = "STATUS: done"
steps = [{ edit = "src/silent.py", content = "silent = 1\\n" }]
"""

HEARTBEAT = r"W1 busy: running ([\d.]+)s, .*last tool (\w+)"
ANSI = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>78])")


def write_plan(tmp_path: Path, tasks: list[str]) -> Path:
    scripts = tmp_path / "scripts.toml"
    scripts.write_text(SCRIPTS)
    lines = [
        '[session]\nname = "slow"\nagent = "s"\naccept_hooks_only = true',
        f'[runners.s]\nkind = "scripted"\noptions = {{ script = "{scripts}" }}',
    ]
    lines += [f'[[task]]\nid = "{t}"\nprompt = "{t}"\nscope = ["src/{t}.py"]' for t in tasks]
    plan = tmp_path / "plan.toml"
    plan.write_text("\n".join(lines) + "\n")
    return plan


@contextmanager
def running(args: list[str], *, cwd: Path, log: IO[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """``seawall ARGS`` in the background, its stdout and stderr into ``log`` (no terminal)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "seawall", *args], cwd=cwd, stdout=log, stderr=log
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


class Terminal:
    """A process in a real pseudo-terminal of 200 x 40, and what it has drawn so far."""

    def __init__(self, args: list[str], *, cwd: Path) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "40"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "seawall", *args],
            cwd=cwd,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.output = ""

    def pump(self) -> str:
        """Everything drawn so far, without the terminal's control sequences."""
        while select.select([self.master], [], [], 0.05)[0]:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # the process ended and closed its side
                break
            if not data:
                break
            self.output += data.decode("utf-8", errors="replace")
        return ANSI.sub("", self.output)

    def row(self, wave: int, task: str) -> Row | None:
        """The agent's state, elapsed seconds and last tool as last drawn."""
        pattern = rf"W{wave}\s+{task}\s+(\S+)\s+([\d.]+)s\s+\d+\s+\d+\s+[\d,]+\s+~?\$[\d.]+ +(\w*)"
        found = re.findall(pattern, self.pump())
        if not found:
            return None
        state, elapsed, tool = found[-1]
        return state, float(elapsed), tool

    def row_where(self, task: str, wanted: Callable[[Row], bool]) -> Callable[[], Row | None]:
        """A probe: the agent's wave-1 row once it is as ``wanted``."""

        def probe() -> Row | None:
            row = self.row(1, task)
            return row if row is not None and wanted(row) else None

        return probe

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        os.close(self.master)


def test_watch_in_a_terminal_moves_and_stops_an_agent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = write_plan(tmp_path, ["busy", "silent"])
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
        terminal = Terminal(["watch", "--repo", str(repo)], cwd=repo)
        try:
            # first read: the busy agent is in its first sleep, after a Bash call
            busy1 = wait_until(
                terminal.row_where("busy", lambda r: r[2] == "Bash"), timeout=30, what="Bash"
            )
            silent1 = wait_until(
                lambda: terminal.row(1, "silent"), timeout=30, what="the silent agent"
            )
            # second read: the busy agent has moved on to Read; the silent one printed
            # nothing since its Grep, and its elapsed time moved all the same
            busy2 = wait_until(
                terminal.row_where("busy", lambda r: r[2] == "Read"), timeout=30, what="Read"
            )
            silent2 = wait_until(
                terminal.row_where("silent", lambda r: r[1] > silent1[1] + 1),
                timeout=30,
                what="the silent agent's elapsed time to move",
            )
            assert busy1[0] == busy2[0] == "running"
            assert busy2[1] > busy1[1]
            assert silent1[2] == silent2[2] == "Grep"
            assert silent2[0] == "running"

            terminal.send("\x1b[B")  # down: from the first running agent to the silent one
            time.sleep(0.3)
            terminal.send("s")
            stopped = wait_until(
                terminal.row_where("silent", lambda r: r[0] != "running"),
                timeout=30,
                what="the silent agent to stop",
            )
            assert stopped[1] < 60  # stopped long before its 120 s sleep ended
            # the session ends (the busy agent finishes, the silent one runs again
            # and is done): watch exits by itself
            # (the screen is read all along: a terminal nobody reads blocks its writer)
            wait_until(
                lambda: terminal.pump() and run.poll() is not None,
                timeout=90,
                what="the run to end",
            )
            assert run.returncode == 0, (tmp_path / "run.log").read_text()
            wait_until(
                lambda: terminal.pump() and terminal.process.poll() is not None,
                timeout=30,
                what="watch to exit when the session ended",
            )
            assert terminal.process.returncode == 0
            terminal.pump()
        finally:
            terminal.close()
    state = store.load()
    silent = state.waves[0].agent("silent")
    assert silent.run is not None
    assert silent.run.truncated
    assert silent.run.stop_reason == "stopped by the user (seawall watch)"
    finished = [
        json.loads(line)
        for line in store.paths.events.read_text().splitlines()
        if '"agent_finished"' in line and '"silent"' in line
    ]
    assert finished[0]["stop_reason"] == "stopped by the user (seawall watch)"
    # the session's last view stays on the terminal once the live screen is gone
    last = ANSI.sub("", terminal.output.rsplit("\x1b[?1049l", 1)[-1])
    assert re.search(r"seawall watch \S+\s+done", last), last


def test_a_run_without_a_terminal_prints_heartbeats_of_running_agents(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = write_plan(tmp_path, ["busy"])
    log_path = tmp_path / "log.txt"
    with (
        log_path.open("wb") as log,
        running(
            ["run", str(plan), "--repo", str(repo), "--heartbeat", "0.5"], cwd=repo, log=log
        ) as run,
    ):

        def heartbeats() -> list[tuple[str, str]]:
            return re.findall(HEARTBEAT, log_path.read_text())

        beats = wait_until(heartbeats, timeout=30, what="a heartbeat", process=run)
        assert "finished after" not in log_path.read_text()  # seen while it runs

        def after_read() -> list[tuple[str, str]] | None:
            found = heartbeats()
            return found if found and found[-1][1] == "Read" else None

        later = wait_until(
            after_read, timeout=30, what="a heartbeat naming the later tool", process=run
        )
        assert float(later[-1][0]) > float(beats[0][0])
        assert run.wait(timeout=90) == 0
    assert "W1 busy: finished after" in log_path.read_text()


def test_run_json_progress_is_one_object_a_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = write_plan(tmp_path, ["busy"])
    err_path = tmp_path / "progress.jsonl"
    with err_path.open("wb") as err:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "seawall",
                "run",
                str(plan),
                "--repo",
                str(repo),
                "--json",
                "--heartbeat",
                "1",
            ],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=err,
            timeout=90,
        )
    assert done.returncode == 0
    assert json.loads(done.stdout)["session"]  # stdout: the outcome document alone
    lines = [json.loads(line) for line in err_path.read_text().splitlines()]
    assert {line["schema"] for line in lines} == {"seawall.progress/1"}
    events = [line["event"] for line in lines]
    assert "wave_started" in events and "agent_finished" in events
    beats = [line for line in lines if line["event"] == "heartbeat"]
    assert beats and beats[0]["agent"] == "busy" and beats[0]["status"] == "running"
    assert {"elapsed_s", "turns", "tool_calls", "cost_usd", "last_tool"} <= set(beats[0])
