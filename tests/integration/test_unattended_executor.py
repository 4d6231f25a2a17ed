"""The default executor runs a real subprocess and maps its exit code to an outcome."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from seawall.runtime.processes import process_alive
from seawall.unattended.executor import ExecutionRequest, SubprocessExecutor
from seawall.unattended.queue import QueueItem
from tests.waiting import wait_until

# A stand-in for ``seawall run PLAN --repo REPO``: the plan's first line says what to do.
FAKE_SESSION = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    plan, flag, repo = sys.argv[1:4]
    assert flag == "--repo", sys.argv
    action, _, value = open(plan).readline().lstrip("# ").strip().partition(" ")
    print(f"session {os.path.basename(plan)} in {os.getcwd()}", flush=True)
    print("to stderr", file=sys.stderr, flush=True)
    if action == "exit":
        sys.exit(int(value))
    if action == "sleep":
        time.sleep(float(value))
    if action == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(float(value))
    if action == "spawn":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(value, "w").write(str(child.pid))
        time.sleep(60)
    if action == "signal":
        os.kill(os.getpid(), signal.SIGKILL)
    """
)


@pytest.fixture
def session(tmp_path: Path) -> SubprocessExecutor:
    script = tmp_path / "fake_session.py"
    script.write_text(FAKE_SESSION)
    return SubprocessExecutor(command=(sys.executable, str(script)), kill_grace_sec=0.5)


def request(tmp_path: Path, first_line: str, *, timeout: float = 30.0) -> ExecutionRequest:
    plan = tmp_path / "plan.toml"
    plan.write_text(f"# {first_line}\n[session]\n")
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    return ExecutionRequest(
        item=QueueItem(id="plan-1", plan=str(plan)),
        task_id="t1",
        repo=repo,
        log_path=tmp_path / "runner" / "runner.log",
        timeout_sec=timeout,
    )


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (0, "done"),
        (4, "partial"),
        (3, "needs-input"),
        (5, "failed"),
        (6, "rate-limited"),
        (1, "failed"),
        (2, "failed"),
        (9, "failed"),
    ],
)
def test_exit_codes_of_a_real_session(
    tmp_path: Path, session: SubprocessExecutor, code: int, outcome: str
) -> None:
    result = session(request(tmp_path, f"exit {code}"))
    assert (result.outcome, result.exit_code) == (outcome, code)
    log = (tmp_path / "runner" / "runner.log").read_text()
    assert f"session plan.toml in {tmp_path / 'repo'}" in log and "to stderr" in log


def test_death_by_a_signal_is_failed(tmp_path: Path, session: SubprocessExecutor) -> None:
    result = session(request(tmp_path, "signal"))
    assert result.outcome == "failed" and result.exit_code == -9
    assert result.detail == "killed by signal 9"


def test_a_timeout_stops_the_session_and_is_timed_out(
    tmp_path: Path, session: SubprocessExecutor
) -> None:
    started = time.monotonic()
    result = session(request(tmp_path, "sleep 30", timeout=0.5))
    assert result.outcome == "timed-out" and result.exit_code is None
    assert time.monotonic() - started < 10


def test_a_session_ignoring_sigterm_is_killed(tmp_path: Path, session: SubprocessExecutor) -> None:
    started = time.monotonic()
    result = session(request(tmp_path, "stubborn 30", timeout=0.5))
    assert result.outcome == "timed-out"
    assert time.monotonic() - started < 10


def test_a_timeout_stops_the_whole_process_group(
    tmp_path: Path, session: SubprocessExecutor
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    result = session(request(tmp_path, f"spawn {pid_file}", timeout=1.5))
    assert result.outcome == "timed-out"
    pid = int(pid_file.read_text())
    wait_until(lambda: not process_alive(pid), timeout=10, what="the grandchild to end")


def test_a_command_that_cannot_start_is_failed(tmp_path: Path) -> None:
    missing = SubprocessExecutor(command=(str(tmp_path / "no-such-session"),))
    result = missing(request(tmp_path, "exit 0"))
    assert result.outcome == "failed" and result.exit_code is None
    assert result.detail is not None and result.detail.startswith("could not start")


def test_the_default_command_is_seawall_run(tmp_path: Path) -> None:
    req = request(tmp_path, "exit 0")
    assert SubprocessExecutor().argv(req) == [
        sys.executable,
        "-m",
        "seawall",
        "run",
        req.item.plan,
        "--repo",
        str(req.repo),
    ]
