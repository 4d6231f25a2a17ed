"""Nothing outlives an agent: the supervisor ends what the agent started, however it left.

Each agent is a real shell started by the real ``CommandRunner``; it daemonises a child
(``setsid``, double fork) that would write a file long after. After a normal finish, a
stop, a time limit and the supervisor's own death, no process of the agent is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
import pytest

from seawall.adapters.runners.command import CommandRunner
from seawall.events import Event, Message
from seawall.runner import AgentRequest
from seawall.runtime.processes import aend_group, end_group, group_alive
from tests.integration.runnerkit import anyio_backend
from tests.waiting import await_until, wait_until

__all__ = ["anyio_backend"]

pytestmark = pytest.mark.anyio

DAEMON = "setsid sh -c 'echo $$ > daemon.pid; sleep 400; echo late > late.txt' & "
ROOT = Path(__file__).resolve().parents[2]
DOUBLE_FORK = "(sh -c 'sleep 300' &) ; "
LEFT = "every process of the session to end"


def processes_of(session: str) -> set[int]:
    """Live processes whose environment carries ``SEAWALL_SESSION=session``."""
    marker = f"SEAWALL_SESSION={session}".encode()
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in environ and state not in ("Z", "X"):
            found.add(int(entry.name))
    return found


async def none_left(session: str) -> bool:
    """An ``await_until`` probe: no process of ``session`` is left."""
    return not processes_of(session)


async def ended(pid: int, session: str) -> bool:
    """An ``await_until`` probe: ``pid`` is no process of ``session`` now."""
    return pid not in processes_of(session)


def agent_request(workspace: Path, *, time_limit: float | None = None) -> AgentRequest:
    """A request in a session of its own, so its processes can be told from others'."""
    session = f"sv-{uuid.uuid4().hex[:12]}"
    return AgentRequest(
        task_id="daemoniser",
        prompt="go",
        workspace=workspace,
        session=session,
        time_limit=time_limit,
    )


async def test_a_daemonised_child_does_not_survive_a_normal_finish(tmp_path: Path) -> None:
    request = agent_request(tmp_path)
    script = DAEMON + DOUBLE_FORK + "while [ ! -s daemon.pid ]; do sleep 0.01; done; echo done"
    result = await CommandRunner(["sh", "-c", script], kill_grace=0.5).run(request, print)
    assert result.final_text == "done"
    assert result.exit_code == 0
    assert (tmp_path / "daemon.pid").read_text().strip().isdigit()  # the daemon ran
    await await_until(lambda: none_left(request.session), within=10, what=LEFT)


async def test_a_daemonised_child_does_not_survive_a_stop(tmp_path: Path) -> None:
    request = agent_request(tmp_path)
    script = DAEMON + "while [ ! -s daemon.pid ]; do sleep 0.01; done; echo ready; sleep 60"
    seen: list[int] = []

    def on_event(event: Event) -> None:
        if isinstance(event, Message) and event.text == "ready":
            seen.extend(processes_of(request.session))
            request.stop.stop("breaker: test")

    with anyio.fail_after(20):
        result = await CommandRunner(["sh", "-c", script], kill_grace=0.5).run(request, on_event)
    assert result.cancelled
    assert result.stop_reason == "breaker: test"
    assert int((tmp_path / "daemon.pid").read_text()) in seen  # it ran, in its own session
    await await_until(lambda: none_left(request.session), within=10, what=LEFT)


async def test_a_daemonised_child_does_not_survive_a_time_limit(tmp_path: Path) -> None:
    request = agent_request(tmp_path, time_limit=1.0)
    script = DAEMON + "trap '' TERM; sleep 60"  # the agent ignores SIGTERM as well
    with anyio.fail_after(20):
        result = await CommandRunner(["sh", "-c", script], kill_grace=0.5).run(request, print)
    assert result.timed_out
    assert (tmp_path / "daemon.pid").exists()
    await await_until(lambda: none_left(request.session), within=10, what=LEFT)
    assert not (tmp_path / "late.txt").exists()


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def test_the_agent_dies_with_its_supervisor(tmp_path: Path) -> None:
    request = agent_request(tmp_path)
    script = "echo $$ > agent.pid; echo ready; sleep 60"
    pids: list[int] = []

    def on_event(event: Event) -> None:
        if isinstance(event, Message) and event.text == "ready":
            agent = int((tmp_path / "agent.pid").read_text())
            pids.append(agent)
            supervisor = _parent(agent)
            pids.append(supervisor)
            os.kill(supervisor, signal.SIGKILL)

    with anyio.fail_after(20):
        result = await CommandRunner(["sh", "-c", script], kill_grace=0.5).run(request, on_event)
    agent, supervisor = pids
    assert supervisor != os.getpid()
    assert result.exit_code == -signal.SIGKILL
    await await_until(lambda: ended(agent, request.session), within=10, what="the agent to end")


def test_end_group_waits_until_a_term_ignoring_group_is_empty(tmp_path: Path) -> None:
    import subprocess

    script = "trap '' TERM; (trap '' TERM; sleep 60) & echo $! > child.pid; sleep 60"
    process = subprocess.Popen(["sh", "-c", script], cwd=tmp_path, start_new_session=True)
    child = tmp_path / "child.pid"
    wait_until(
        child.exists, timeout=30, interval=0.01, what="child.pid to be written", process=process
    )
    started = time.monotonic()
    assert end_group(process.pid, grace=0.3) is True
    assert time.monotonic() - started >= 0.3  # SIGTERM was ignored: it took the SIGKILL
    assert not group_alive(process.pid)
    assert process.wait(timeout=5) == -signal.SIGKILL
    assert end_group(process.pid, grace=0.3) is False  # gone: nothing to end


async def test_aend_group_ends_a_group_without_blocking_the_loop(tmp_path: Path) -> None:
    script = "trap '' TERM; (trap '' TERM; sleep 60) & sleep 60"
    process = await anyio.open_process(["sh", "-c", script], start_new_session=True)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        await anyio.sleep(0.1)
        before = ticks
        assert await aend_group(process.pid, grace=0.5) is True  # takes the whole grace
        during = ticks - before
        group.cancel_scope.cancel()
    assert not group_alive(process.pid)
    assert during >= 10  # the loop kept running while the group was ended
    await process.wait()
    await process.aclose()


STARTER = """
import os, subprocess, sys, time
from seawall.sandbox.launch import agents_end_with_this_process, supervisor_argv
agent = ["sh", "-c", sys.argv[2]]
if sys.argv[1] == "watched":
    with agents_end_with_this_process():
        argv = supervisor_argv(agent, policy=None, grace=0.5)
else:
    argv = supervisor_argv(agent, policy=None, grace=0.5)
subprocess.Popen(argv, start_new_session=True)
time.sleep(60)
"""


def _start_and_kill_the_starter(tmp_path: Path, mode: str, session: str) -> tuple[int, bool]:
    """A process starts an agent under the supervisor and is SIGKILLed once the agent
    (which also daemonises a child) runs; returns the agent's pid and whether the
    supervisor was told to watch its starter."""
    script = f"{DAEMON}echo $$ > agent.pid; sleep 60"
    env = {**os.environ, "SEAWALL_SESSION": session, "PYTHONPATH": str(ROOT)}
    starter = subprocess.Popen([sys.executable, "-c", STARTER, mode, script], cwd=tmp_path, env=env)
    try:
        wait_until(
            lambda: (tmp_path / "agent.pid").exists() and (tmp_path / "daemon.pid").exists(),
            timeout=30,
            what="the agent and its daemon to start",
            process=starter,
        )
        agent = int((tmp_path / "agent.pid").read_text())
        watched = b"--parent" in Path(f"/proc/{_parent(agent)}/cmdline").read_bytes()
    finally:
        starter.kill()
        starter.wait(timeout=10)
    return agent, watched


def test_an_agent_started_to_end_with_its_starter_does_not_outlive_it(tmp_path: Path) -> None:
    session = f"watched-{uuid.uuid4().hex[:8]}"
    agent, watched = _start_and_kill_the_starter(tmp_path, "watched", session)
    assert watched
    wait_until(lambda: not processes_of(session), timeout=10, what=LEFT)
    assert agent not in processes_of(session)


def test_by_default_an_agent_outlives_the_process_that_started_it(tmp_path: Path) -> None:
    """What lets ``resume`` find and salvage a killed coordinator's agents."""
    session = f"kept-{uuid.uuid4().hex[:8]}"
    agent, watched = _start_and_kill_the_starter(tmp_path, "default", session)
    try:
        assert not watched
        time.sleep(0.5)  # several of a watching supervisor's looks at its parent
        assert agent in processes_of(session)
    finally:
        end_group(os.getpgid(_parent(agent)), grace=0.5)
    wait_until(lambda: not processes_of(session), timeout=10, what=LEFT)
