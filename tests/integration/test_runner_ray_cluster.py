"""RayRunner on a real two-node Ray cluster on loopback: a lost hub, a lost node, placement.

The head (127.0.0.3, label pool=head, resource ``head``) and a second raylet (127.0.0.2,
label pool=second, resource ``second``) run with token authentication, as Ray 2.60 does
by default (a token of the test's own, never the user's ``~/.ray/auth_token``). 127.0.0.1 itself
is not used: Ray rewrites it to the machine's network address, and these tests talk to
loopback addresses only. Agents are the command agents of ``test_runner_ray``; the
second raylet is SIGKILLed while an agent runs on it. Only this cluster's processes are
stopped at the end (found by its temporary directory), never another Ray on the machine.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")

import ray

from adapters.runners.ray import RayRunner
from coordinator.runner import AgentRequest, AgentResult, AgentRunner, EmitFn
from tests.integration.test_runner_ray import (
    agent_script,
    command_spec,
    files_of,
    gone,
    make_repo,
    run_wave,
    worktree,
    write_spec,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

RAY = Path(sys.executable).with_name("ray")
HEAD = "127.0.0.3"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _raylet_of(ip: str) -> int | None:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"raylet") and f"--node_ip_address={ip}".encode() in argv:
            return int(entry.name)
    return None


def _reload_auth() -> None:
    from ray._private.authentication_test_utils import reset_auth_token_state

    reset_auth_token_state()


class Cluster:
    """A head and one more raylet on loopback; ``env`` reaches both and this process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = _free_port()
        token = root / "token"
        token.write_text(secrets.token_hex(32))
        self.env = {
            **os.environ,
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": str(token),
            "RAY_USAGE_STATS_ENABLED": "0",
            # a lost node is noticed in about two seconds, not the default thirty
            "RAY_health_check_period_ms": "500",
            "RAY_health_check_timeout_ms": "500",
            "RAY_health_check_failure_threshold": "3",
        }
        self.address = f"{HEAD}:{self.port}"

    def start(self) -> None:
        self._ray(
            "start", "--head", f"--node-ip-address={HEAD}", f"--port={self.port}",
            "--num-cpus=2", '--resources={"head": 4}', "--labels=pool=head",
            "--include-dashboard=false", "--disable-usage-stats",
            f"--temp-dir={self.root / 'ray'}",
        )  # fmt: skip
        self.add_second()

    def add_second(self) -> None:
        self._ray(
            "start", f"--address={self.address}", "--node-ip-address=127.0.0.2",
            "--num-cpus=1", '--resources={"second": 1}', "--labels=pool=second",
            "--disable-usage-stats",
        )  # fmt: skip

    def kill_second(self) -> None:
        pid = _raylet_of("127.0.0.2")
        assert pid is not None, "the second raylet is not running"
        os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """SIGKILL every process of this cluster (its temporary directory or its port
        is on their command line); other Ray instances on the machine are left alone."""
        marks = (str(self.root).encode(), f":{self.port}".encode())
        for _ in range(3):
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit() or int(entry.name) == os.getpid():
                    continue
                try:
                    cmdline = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                if any(mark in cmdline for mark in marks):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(entry.name), signal.SIGKILL)
            time.sleep(0.5)

    def _ray(self, *args: str) -> None:
        done = subprocess.run(
            [str(RAY), *args], env=self.env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with tempfile.TemporaryDirectory(prefix="srt-", dir="/tmp") as root:  # short socket paths
        made = Cluster(Path(root))
        saved = {key: os.environ.get(key) for key in made.env}
        os.environ.update(made.env)
        _reload_auth()  # Ray read the authentication settings when it was imported
        try:
            made.start()
            ray.init(address=made.address, _node_ip_address=HEAD, log_to_driver=False)
            yield made
        finally:
            ray.shutdown()
            made.stop()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            _reload_auth()


__all__ = ["agent_script"]  # the fixture, shared with test_runner_ray


class _RouteByTask(AgentRunner):
    """Each task to its own runner (a plan does this with a task's ``agent``)."""

    def __init__(self, runners: dict[str, AgentRunner]) -> None:
        self.runners = runners

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        return await self.runners[request.task_id].run(request, emit)


def runner(agent: Path, env: dict[str, str], **options: object) -> RayRunner:
    return RayRunner(
        command_spec(agent, env),
        stop_grace=8.0,
        poll=0.2,
        scratch_dir=str(agent.parent / "ray-scratch"),
        **options,  # type: ignore[arg-type]
    )


def _spec(tmp_path: Path, pids: Path) -> dict[str, object]:
    return {
        "healthy": {
            "steps": [
                {"write": "src/healthy.py", "content": "H = 1\n"},
                {"sleep": 6},
                {"write": "src/healthy.py", "content": "H = 2\n"},
            ],
            "final": "STATUS: done — healthy",
        },
        "victim": {
            "steps": [
                {"write": "src/victim.py", "content": "V = 1\n"},
                {"pidfile": str(pids / "victim.pid")},
                {"sleep": 60},
                {"write": "src/victim.py", "content": "V = 2\n"},
            ],
            "final": "STATUS: done — never reached",
        },
    }


async def _wait_for(path: Path, within: float) -> None:
    """Until ``path`` exists (polled: it is written by another process)."""
    for _ in range(int(within / 0.1)):
        if await anyio.Path(path).exists():
            return
        await anyio.sleep(0.1)
    raise AssertionError(f"{path} did not appear within {within} s")


async def test_a_lost_node_fails_only_its_agent_which_keeps_its_mirrored_work(
    cluster: Cluster, tmp_path: Path, agent_script: Path
) -> None:
    repo = tmp_path / "repo"
    base = make_repo(repo)
    pids = tmp_path / "pids"
    pids.mkdir()
    env = write_spec(tmp_path, _spec(tmp_path, pids))
    on_head = runner(agent_script, env, labels={"pool": "head"})
    on_second = runner(agent_script, env, resources={"second": 1})
    nodes: dict[str, str] = {}

    async def kill_when_victim_runs() -> None:
        await _wait_for(pids / "victim.pid", within=90)
        await _wait_for(worktree(repo, "victim") / "src" / "victim.py", within=30)
        nodes["victim_pid"] = (pids / "victim.pid").read_text()
        cluster.kill_second()

    async with anyio.create_task_group() as group:
        group.start_soon(kill_when_victim_runs)
        runs = await run_wave(
            repo,
            base,
            _RouteByTask({"healthy": on_head, "victim": on_second}),
            ["healthy", "victim"],
        )
    healthy, victim = runs["healthy"], runs["victim"]
    assert healthy.final_text.endswith("STATUS: done — healthy"), healthy.stop_reason
    assert files_of(worktree(repo, "healthy"))["src/healthy.py"] == "-H = 2\n"
    assert victim.truncated and victim.is_error
    assert victim.stop_reason.startswith("node lost:"), victim.stop_reason
    # the victim's work that was mirrored before the node died is kept
    assert files_of(worktree(repo, "victim"))["src/victim.py"] == "-V = 1\n"
    # and its agent did not outlive its node
    pid = int(nodes["victim_pid"])
    assert await gone(pid, within=30), f"the victim's agent {pid} outlived its node"
    cluster.add_second()  # the next test has its two nodes again


async def test_a_lost_hub_is_replaced_and_the_agent_goes_on(
    cluster: Cluster, tmp_path: Path, agent_script: Path
) -> None:
    repo = tmp_path / "repo"
    base = make_repo(repo)
    pids = tmp_path / "pids"
    pids.mkdir()
    spec = _spec(tmp_path, pids)
    env = write_spec(tmp_path, spec)
    the_runner = runner(agent_script, env, resources={"second": 1})

    async def kill_hub_mid_run() -> None:
        await _wait_for(worktree(repo, "healthy") / "src" / "healthy.py", within=90)
        ray.kill(ray.get_actor(the_runner._hub_name), no_restart=True)

    async with anyio.create_task_group() as group:
        group.start_soon(kill_hub_mid_run)
        runs = await run_wave(repo, base, the_runner, ["healthy"])
    run = runs["healthy"]
    assert not run.is_error, run.stop_reason
    assert run.final_text.endswith("STATUS: done — healthy")
    # the write after the hub was lost reached the coordinator's worktree
    assert files_of(worktree(repo, "healthy"))["src/healthy.py"] == "-H = 2\n"


async def test_a_placement_no_node_can_take_is_a_runner_error(
    cluster: Cluster, tmp_path: Path, agent_script: Path
) -> None:
    repo = tmp_path / "repo"
    base = make_repo(repo)
    env = write_spec(tmp_path, {"healthy": {"steps": [], "final": "STATUS: done"}})
    impossible = runner(agent_script, env, resources={"gpu-a100": 1}, queue_timeout=3.0)
    runs = await run_wave(repo, base, impossible, ["healthy"])
    assert "no Ray node took the agent within 3 s" in runs["healthy"].runner_error
    assert "gpu-a100=1" in runs["healthy"].runner_error
