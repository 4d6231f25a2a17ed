"""``seawall runner`` as a timer runs it: real processes, real files, real sessions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from seawall.runtime.processes import process_alive
from tests.waiting import wait_until

FAKE_SESSION = textwrap.dedent(
    """
    import os, sys, time
    plan = sys.argv[1]
    action, value = open(plan).readline().lstrip("# ").split()
    if action == "sleep":  # value: where to write the pid
        open(value, "w").write(str(os.getpid()))
        time.sleep(60)
    if action == "error":  # the plan's second line is the error the session prints
        print(open(plan).readlines()[1].lstrip("# ").strip(), flush=True)
    code = int(value)
    print(f"fake session ran {plan} -> exit {code}", flush=True)
    sys.exit(code)
    """
)

# Keeps runner.log open with O_APPEND, as launchd or a ``>>`` redirect does.
APPEND_WRITER = textwrap.dedent(
    """
    import os, sys, time
    log, stop = sys.argv[1:3]
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    i = 0
    while not os.path.exists(stop):
        os.write(fd, f"writer line {i:07d}\\n".encode())
        i += 1
        time.sleep(0.0005)
    """
)


def seawall(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "seawall", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "fake_session.py"
    script.write_text(FAKE_SESSION)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SEAWALL_RUNNER_")}
    clean["SEAWALL_RUNNER_SESSION_COMMAND"] = f"{sys.executable} {script}"
    clean["SEAWALL_RUNNER_BREAKER_LIMIT"] = "2"
    return clean


def plan(tmp_path: Path, name: str, code: int) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f"# exit {code}\n[session]\n")
    return path


def test_enqueue_tick_status_resume(tmp_path: Path, env: dict[str, str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    state = repo / ".seawall" / "runner"  # the default --dir
    for name in ("one", "two", "three"):
        done = seawall("runner", "enqueue", str(plan(tmp_path, name, 5)), env=env, cwd=repo)
        assert done.returncode == 0, done.stderr
    assert [i["id"] for i in json.loads((state / "queue.json").read_text())["items"]] == [
        "one-1",
        "two-2",
        "three-3",
    ]

    outputs = [
        seawall("runner", "tick", "--repo", str(repo), env=env, cwd=repo).stdout for _ in range(3)
    ]

    assert outputs[0].strip() == "tick: ran item one-1 -> failed (breaker closed)"
    assert outputs[1].strip() == "tick: ran item two-2 -> failed (breaker open)"
    assert outputs[2].strip() == "tick: breaker-open item three-3 (breaker open)"
    log = (state / "runner.log").read_text()
    assert "fake session ran" in log and "opened by outcome 'failed' of item two-2" in log
    status = seawall("runner", "status", env=env, cwd=repo).stdout
    assert "breaker: open; 2 consecutive failed attempt(s), limit 2" in status
    assert "blocked: breaker open" in status

    assert seawall("runner", "resume", env=env, cwd=repo).returncode == 0
    (tmp_path / "three.toml").write_text("# exit 0\n[session]\n")  # the machine is fixed
    resumed = seawall("runner", "tick", env=env, cwd=repo)
    assert resumed.stdout.strip() == "tick: ran item three-3 -> done (breaker closed)"
    rows = [json.loads(line) for line in (state / "attempted.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in rows] == [
        "running",
        "failed",
        "running",
        "failed",
        "blocked-breaker",
        "running",
        "done",
    ]
    ticks = [json.loads(line) for line in (state / "ticks.jsonl").read_text().splitlines()]
    assert [t["action"] for t in ticks] == ["ran", "ran", "breaker-open", "ran"]
    assert ticks[-1]["override"] is True and ticks[-1]["consecutive_failures_before"] == 2


@pytest.mark.parametrize("same", [True, False])
def test_the_open_breaker_says_whether_the_failures_were_one_failure_repeated(
    tmp_path: Path, env: dict[str, str], same: bool
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    errors = {
        "parser": "error: W1 parser: the agent could not start: claude: token expired",
        "docs": "error: W1 docs: the agent could not start: claude: token expired"
        if same
        else "error: W1 docs: checks failed: tests/test_docs.py::test_links",
    }
    for name, error in errors.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(f"# error 5\n# {error}\n[session]\n")
        assert seawall("runner", "enqueue", str(path), env=env, cwd=repo).returncode == 0
    for _ in errors:
        seawall("runner", "tick", "--repo", str(repo), env=env, cwd=repo)
    state = repo / ".seawall" / "runner"
    rows = [json.loads(line) for line in (state / "attempted.jsonl").read_text().splitlines()]
    failed = [r for r in rows if r["outcome"] == "failed"]
    assert len(failed) == 2 and failed[0]["detail"] == (
        "exit 5: the agent could not start: claude: token expired"
    )
    assert (failed[0]["signature"] == failed[1]["signature"]) is same
    status = seawall("runner", "status", "--json", env=env, cwd=repo)
    breaker = json.loads(status.stdout)["breaker"]
    assert breaker["state"] == "open" and breaker["distinct_failures"] == (1 if same else 2)
    assert (breaker["same_failure"] == failed[0]["signature"]) is same
    log = (state / "runner.log").read_text()
    if same:
        assert f"the same failure each time (signature {failed[0]['signature']})" in log
    else:
        assert "2 consecutive failed attempts (limit 2, window 7 days), 2 different failures" in (
            log
        )


def test_sigterm_stops_the_tick_and_its_session_and_the_run_is_recorded_died(
    tmp_path: Path, env: dict[str, str]
) -> None:
    state = tmp_path / "runner"
    pid_file = tmp_path / "session.pid"
    sleeper = tmp_path / "sleeper.toml"
    sleeper.write_text(f"# sleep {pid_file}\n[session]\n")
    assert (
        seawall(
            "runner", "enqueue", str(sleeper), "--dir", str(state), env=env, cwd=tmp_path
        ).returncode
        == 0
    )
    tick = subprocess.Popen(
        [sys.executable, "-m", "seawall", "runner", "tick", "--dir", str(state)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    written = wait_until(
        lambda: pid_file.read_text() if pid_file.exists() else "",
        timeout=30,
        what="the session to write its pid",
        process=tick,
    )
    session_pid = int(written)
    tick.terminate()
    _, stderr = tick.communicate(timeout=30)
    assert tick.returncode == 130, stderr
    wait_until(lambda: not process_alive(session_pid), timeout=30, what="the session to end")
    rows = [json.loads(line) for line in (state / "attempted.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["running"]

    sleeper.write_text("# exit 0\n[session]\n")
    after = seawall("runner", "tick", "--dir", str(state), env=env, cwd=tmp_path)
    assert after.stdout.strip().endswith("-> done (breaker closed)")
    rows = [json.loads(line) for line in (state / "attempted.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["running", "died", "running", "done"]


def test_bad_settings_are_errors_naming_the_variable(tmp_path: Path, env: dict[str, str]) -> None:
    env["SEAWALL_RUNNER_BREAKER_LIMIT"] = "lots"
    result = seawall("runner", "tick", "--dir", str(tmp_path / "r"), env=env, cwd=tmp_path)
    assert result.returncode == 1
    assert "SEAWALL_RUNNER_BREAKER_LIMIT: must be a whole number" in result.stderr


def test_a_writer_holding_the_log_in_append_mode_keeps_logging_after_truncation(
    tmp_path: Path, env: dict[str, str]
) -> None:
    state = tmp_path / "runner"
    state.mkdir()
    log = state / "runner.log"
    stop = tmp_path / "stop"
    script = tmp_path / "writer.py"
    script.write_text(APPEND_WRITER)
    writer = subprocess.Popen([sys.executable, str(script), str(log), str(stop)])
    try:
        wait_until(
            lambda: log.exists() and log.stat().st_size > 40_000,
            timeout=30,
            what="the writer to write 40 kB",
            process=writer,
        )
        inode = log.stat().st_ino
        env["SEAWALL_RUNNER_LOG_MAX_BYTES"] = "30000"
        tick = seawall("runner", "tick", "--dir", str(state), env=env, cwd=tmp_path)
        assert tick.returncode == 0, tick.stderr
        last_rotated = max(_writer_numbers(state / "runner.log.1"))
        wait_until(
            lambda: max(_writer_numbers(log), default=-1) > last_rotated + 50,
            timeout=30,
            what="the writer to write 50 lines more",
            process=writer,
        )
    finally:
        stop.touch()
        writer.wait(timeout=10)
    data = log.read_bytes()
    assert log.stat().st_ino == inode  # truncated in place, never renamed
    assert b"\x00" not in data  # the writer continued at the new end, no hole
    assert b"writer line 0000000" not in data
    assert min(_writer_numbers(log)) > last_rotated  # only lines written after it
    assert "runner.log truncated" in data.decode()


def _writer_numbers(path: Path) -> list[int]:
    text = path.read_text(errors="replace")
    return [int(n) for n in re.findall(r"^writer line (\d{7})$", text, flags=re.MULTILINE)]
