"""RayRunner on a real two-node Ray cluster on loopback: a lost hub, a lost node, placement.

The head (127.0.0.3, label pool=head, resource ``head``) and a second raylet (127.0.0.2,
label pool=second, resource ``second``) run with token authentication, as Ray 2.60 does
by default (a token of the test's own, never the user's ``~/.ray/auth_token``). 127.0.0.1 itself
is not used: Ray rewrites it to the machine's network address, and these tests talk to
loopback addresses only. Agents are the command agents of ``test_runner_ray``; the
second raylet is SIGKILLed while an agent runs on it. Only this cluster's processes are
stopped at the end (found by its temporary directory), never another Ray on the machine.
Its nodes are found by those fixed addresses, so one such cluster runs on the machine at
a time: the fixture holds a lock for its life, and another test process that wants one
(a pytest-xdist worker, another checkout) waits.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.abc
import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")

import ray

from seawall.adapters.runners.ray import RayRunner
from seawall.runner import AgentRequest, AgentResult, AgentRunner, EmitFn
from seawall.telemetry import AgentFinished, AgentSalvaged, OrphanStopped, read_events
from tests.integration.raycluster import HEAD, Cluster, raylet_of, reload_auth
from tests.integration.test_runner_ray import (
    agent_script,
    alive,
    command_spec,
    ended,
    files_of,
    git,
    make_repo,
    run_wave,
    worktree,
    write_spec,
)
from tests.locks import locked
from tests.waiting import await_until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

BARRIER_CLAUDE = Path(__file__).with_name("ray_hook_claude.py")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with (
        locked(Path(f"/tmp/seawall-ray-cluster-{os.getuid()}.lock")),
        tempfile.TemporaryDirectory(prefix="srt-", dir="/tmp") as root,  # short socket paths
    ):
        made = Cluster(Path(root))
        saved = {key: os.environ.get(key) for key in made.env}
        os.environ.update(made.env)
        reload_auth()  # Ray read the authentication settings when it was imported
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
            reload_auth()


__all__ = ["agent_script"]  # the fixture, shared with test_runner_ray


class _RouteByTask(AgentRunner):
    """Each task to its own runner (a plan does this with a task's ``agent``)."""

    def __init__(self, runners: dict[str, AgentRunner]) -> None:
        self.runners = runners

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        return await self.runners[request.task_id].run(request, emit)


@pytest.fixture(autouse=True)
def two_nodes(cluster: Cluster) -> Iterator[None]:
    """Every test starts with both nodes, whatever the last one did to the second."""
    if raylet_of("127.0.0.2") is None:
        cluster.add_second()
    yield
    if raylet_of("127.0.0.2") is None:
        cluster.add_second()


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
        started = anyio.Path(pids / "victim.pid")
        await await_until(started.exists, within=90, what="the victim to start")
        wrote = anyio.Path(worktree(repo, "victim") / "src" / "victim.py")
        await await_until(wrote.exists, within=30, what="the victim's write to be mirrored")
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
    await await_until(
        lambda: ended(pid), within=30, what=f"the victim's agent {pid} to end with its node"
    )


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
        wrote = anyio.Path(worktree(repo, "healthy") / "src" / "healthy.py")
        await await_until(wrote.exists, within=90, what="the agent's write to be mirrored")
        ray.kill(ray.get_actor(the_runner.link.hub_name), no_restart=True)

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


RETRY_AGENT = '''
"""The first attempt writes V = 1, records its pid and hangs (its node is then lost);
a retry writes V = 2 and finishes. Other tasks write their file and finish."""
import json, os, sys, time
from pathlib import Path

def out(record):
    sys.stdout.write(json.dumps(record) + "\\n")
    sys.stdout.flush()

def write(n, path, content):
    target = Path(path).absolute()
    message = {"id": f"m{n}", "type": "message", "role": "assistant", "content": [
        {"type": "tool_use", "id": f"t{n}", "name": "Write",
         "input": {"file_path": str(target), "content": content}}]}
    out({"type": "assistant", "message": message, "session_id": "s"})
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    out({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}]}, "session_id": "s"})

task = os.environ["SEAWALL_TASK_ID"]
marks = Path(os.environ["RETRY_MARKS"])
sys.stdin.read()
out({"type": "system", "subtype": "init", "session_id": "s"})
if task == "victim" and not (marks / "tried").exists():
    (marks / "tried").write_text("1")
    write(1, "src/victim.py", "V = 1\\n")
    (marks / "victim.pid").write_text(str(os.getpid()))
    time.sleep(120)
elif task == "victim":
    write(2, "src/victim.py", "V = 2\\n")
else:
    write(3, f"src/{task}.py", f"{task.upper()} = 1\\n")
final = "STATUS: done"
out({"type": "assistant", "message": {"id": "m9", "type": "message", "role": "assistant",
     "content": [{"type": "text", "text": final}]}, "session_id": "s"})
out({"type": "result", "subtype": "success", "is_error": False, "result": final,
     "num_turns": 1, "session_id": "s"})
'''

CLUSTER_PLAN = """
[session]
name = "rayc"
isolation = "worktree"
agent = "head"
sandbox_writable = [{marks}]  # the agents leave their marks there

[runners.head]
kind = "ray"
argv = {argv}
env = {{ RETRY_MARKS = {marks} }}
[runners.head.options]
inner = "command"
"inner.output" = "stream-json"
labels = '{{"pool": "head"}}'
scratch_dir = {scratch}

# preferred, not required: a retry may run elsewhere once the node is gone
[runners.second]
kind = "ray"
argv = {argv}
env = {{ RETRY_MARKS = {marks} }}
[runners.second.options]
inner = "command"
"inner.output" = "stream-json"
prefer_labels = '{{"pool": "second"}}'
scratch_dir = {scratch}

[[task]]
id = "healthy"
prompt = "Do healthy."
scope = ["src/healthy.py"]

[[task]]
id = "victim"
prompt = "Do victim."
scope = ["src/victim.py"]
agent = "second"

[[task]]
id = "after"
prompt = "Do after."
scope = ["src/after.py"]
depends_on = ["victim"]
"""


def _retry_plan(tmp_path: Path, address: str | None = None) -> tuple[str, Path]:
    """The two-runner plan and the folder its agents leave their marks in."""
    agent = tmp_path / "retry_agent.py"
    agent.write_text(RETRY_AGENT)
    marks = tmp_path / "marks"
    marks.mkdir()
    text = CLUSTER_PLAN.format(
        argv=json.dumps([sys.executable, str(agent)]),
        marks=json.dumps(str(marks)),
        scratch=json.dumps(str(tmp_path / "scratch")),
    )
    if address is not None:
        for runner in ("head", "second"):
            table = f"[runners.{runner}.options]\n"
            text = text.replace(table, f'{table}address = "{address}"\n')
    return text, marks


async def test_a_session_retries_the_agent_of_a_lost_node_and_goes_on(
    cluster: Cluster, tmp_path: Path
) -> None:
    from seawall.plan.loader import parse_plan
    from seawall.session.engine import Session

    text, marks = _retry_plan(tmp_path)
    plan = parse_plan(text)
    repo = tmp_path / "repo"
    make_repo(repo)
    session = Session(plan, repo=repo, session_id="rayc-1")

    async def lose_the_second_node() -> None:
        started = anyio.Path(marks / "victim.pid")
        await await_until(started.exists, within=120, what="the victim to start")
        await anyio.sleep(1.0)  # its first write is mirrored to the coordinator
        cluster.kill_second()

    async with anyio.create_task_group() as group:
        group.start_soon(lose_the_second_node)
        result = await session.run()
    assert session.state is not None
    first = {agent.task: agent for agent in session.state.waves[0].agents}
    assert first["healthy"].status == "done" and first["healthy"].merged
    assert first["victim"].status == "partial"
    victim_run = first["victim"].run
    assert victim_run is not None and victim_run.stop_reason.startswith("node lost:"), victim_run
    assert set(result.done) == {"healthy", "victim", "after"}, result
    assert git(repo, "show", "main:src/victim.py") == "V = 2"
    assert git(repo, "show", "main:src/after.py") == "AFTER = 1"
    pid = int((marks / "victim.pid").read_text())
    await await_until(
        lambda: ended(pid), within=30, what=f"the first victim {pid} to end with its node"
    )


async def test_a_killed_coordinator_leaves_no_remote_agent_and_resume_finishes(
    cluster: Cluster, tmp_path: Path
) -> None:
    plan_text, marks = _retry_plan(tmp_path, address=cluster.address)
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text)
    repo = tmp_path / "repo"
    make_repo(repo)
    command = [sys.executable, "-m", "seawall"]
    coordinator = await anyio.open_process(
        [*command, "run", str(plan), "--repo", str(repo)],
        cwd=repo,
        env=cluster.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        started = anyio.Path(marks / "victim.pid")
        await await_until(started.exists, within=180, what="the victim to start")
        await anyio.sleep(1.0)
        os.killpg(coordinator.pid, signal.SIGKILL)  # the coordinator dies, its agents run on
        with anyio.fail_after(30):
            await coordinator.wait()
    finally:
        await _end(coordinator)
    pid = int((marks / "victim.pid").read_text())
    # Ray ends a dead driver's tasks, and the worker's processes with them
    await await_until(
        lambda: ended(pid), within=60, what=f"the remote agent {pid} to end with its driver"
    )
    with anyio.fail_after(600):
        resumed = await anyio.run_process(
            [*command, "resume", "--repo", str(repo)], cwd=repo, env=cluster.env, check=False
        )
    assert resumed.returncode == 0, (resumed.stdout + resumed.stderr)[-4000:]
    assert git(repo, "show", "main:src/victim.py") == "V = 2"
    assert git(repo, "show", "main:src/after.py") == "AFTER = 1"
    assert git(repo, "show", "main:src/healthy.py") == "HEALTHY = 1"


async def _end(process: anyio.abc.Process) -> None:
    """``process``'s group killed if it still runs, and the process closed (its pipes and
    transport), so a test that stops early, a skip included, leaves nothing behind."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    with anyio.fail_after(30):
        await process.aclose()


_SERVER_FAILED = "SpecificServer startup failed"


def _client_server_log(cluster: Cluster) -> Path:
    return cluster.root / "ray" / "session_latest" / "logs" / "ray_client_server.err"


async def _server_failures(cluster: Cluster) -> int:
    """How many times the head's Ray Client server failed to start a client's server."""
    log = anyio.Path(_client_server_log(cluster))
    return (await log.read_text()).count(_SERVER_FAILED) if await log.exists() else 0


async def _resume(
    cluster: Cluster, command: list[str], repo: Path, env: dict[str, str], log: Path
) -> int:
    """``seawall resume``'s exit status, its output in ``log``; one that hangs is made
    to show where (a traceback on SIGABRT) and fails the test. When the head's Ray
    Client server fails to start the server of the resume's client meanwhile, Ray's
    client then waits forever in ``ray.init`` (its failed connect joins a stream that
    never ends): that is Ray's, and skips the test as in ``_wait_for_client_agent``."""
    failures = await _server_failures(cluster)
    with log.open("ab") as output:
        process = await anyio.open_process(
            [*command, "resume", "--repo", str(repo)],
            cwd=repo,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        with anyio.fail_after(300):
            while process.returncode is None:
                with anyio.move_on_after(1.0):
                    await process.wait()
                if process.returncode is None and await _server_failures(cluster) > failures:
                    pytest.skip("Ray's Client server could not start a server for the resume")
            return process.returncode
    except TimeoutError:
        process.send_signal(signal.SIGABRT)
        await anyio.sleep(2.0)
        said = await anyio.Path(log).read_text()
        raise AssertionError(f"resume hung: {said[-6000:]}") from None
    finally:
        await _end(process)


async def _wait_for_client_agent(cluster: Cluster, path: Path, log: Path) -> None:
    """Until the ``ray://`` coordinator's agent wrote ``path``. The head's Ray Client
    server at times fails to start the server of a new client on a loaded machine (it
    says "SpecificServer startup failed" and the client waits on): that is Ray's, and
    skips the test rather than failing it."""

    async def written() -> bool:
        if await anyio.Path(path).exists():
            return True
        if await _server_failures(cluster):
            pytest.skip("Ray's Client server could not start a server for the coordinator")
        return False

    try:
        await await_until(written, within=180, interval=0.1, what=f"{path} to be written")
    except AssertionError as timed_out:
        said = await anyio.Path(log).read_text()
        raise AssertionError(f"{timed_out}; the coordinator said: {said}") from None


@pytest.fixture
def without_this_driver(cluster: Cluster) -> Iterator[None]:
    """This process's own Ray connection dropped for the test and made again after: with
    it, the head's Ray Client server fails to start the server of a new ``ray://``
    client here."""
    ray.shutdown()
    try:
        yield
    finally:
        ray.init(address=cluster.address, _node_ip_address=HEAD, log_to_driver=False)


@pytest.mark.usefixtures("without_this_driver")
async def test_resume_stops_the_remote_agent_a_killed_client_coordinator_left_running(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A ``ray://`` client's job outlives its client for the reconnect grace period, so
    its remote agent runs on: a real orphan, which resume stops through Ray before it
    salvages the agent's mirrored work and runs the task again."""
    plan_text, marks = _retry_plan(tmp_path, address=cluster.client_address)
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text)
    repo = tmp_path / "repo"
    make_repo(repo)
    env = {**cluster.env, "RAY_CLIENT_RECONNECT_GRACE_PERIOD": "600"}
    command = [sys.executable, "-m", "seawall"]
    log = tmp_path / "seawall.log"
    with log.open("wb") as output:
        coordinator = await anyio.open_process(
            [*command, "run", str(plan), "--repo", str(repo)],
            cwd=repo,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        await _wait_for_client_agent(cluster, marks / "victim.pid", log)
        await anyio.sleep(1.0)  # its first write is mirrored to the coordinator
        os.killpg(coordinator.pid, signal.SIGKILL)
        with anyio.fail_after(30):
            await coordinator.wait()
    finally:
        await _end(coordinator)
    pid = int((marks / "victim.pid").read_text())
    await anyio.sleep(3.0)
    assert alive(pid), "the client's job ended its agent: no orphan to find"
    returncode = await _resume(cluster, command, repo, {**env, "PYTHONFAULTHANDLER": "1"}, log)
    assert returncode == 0, log.read_text()[-4000:]
    assert not alive(pid), f"the orphaned remote agent {pid} outlived the resume"
    (events,) = (repo / ".seawall").glob("*/events.jsonl")
    kinds = [
        (record.event, record.agent, bool(getattr(record, "remote", ())))
        for record in read_events(events)
        if isinstance(record, AgentFinished | AgentSalvaged | OrphanStopped)
        and record.agent == "victim"
    ]
    stopped = kinds.index(("orphan_stopped", "victim", True))  # through Ray, on its node
    assert kinds.index(("agent_salvaged", "victim", False)) > stopped, kinds
    finished = [i for i, kind in enumerate(kinds) if kind[0] == "agent_finished"]
    assert len(finished) == 1 and finished[0] > stopped, kinds  # one run after the stop
    assert git(repo, "show", "main:src/victim.py") == "V = 2"
    assert git(repo, "show", "main:src/after.py") == "AFTER = 1"
    assert git(repo, "show", "main:src/healthy.py") == "HEALTHY = 1"
    merges = git(repo, "log", "--first-parent", "--format=%s", "main", "--", "src/victim.py")
    # the salvaged (mirrored) work merged once, the second run's once: no third copy
    assert merges.splitlines() == ["victim: done", "victim: partial"], merges


# -- the barrier on a worker: the kernel's sandbox and the hooks' scope ------------------

BARRIER_PLAN = """
[session]
name = "rayb"
isolation = "worktree"
enforcement = "strict"
agent = "remote"

[runners.remote]
kind = "ray"
[runners.remote.env]
HOOK_WRITES = '["src/mine.py", "src/theirs.py"]'
RAW_WRITES = {raw}
[runners.remote.options]
inner = "claude-code"
"inner.executable" = {claude}
resources = '{{"second": 1}}'
scratch_dir = {scratch}

[[task]]
id = "barrier"
prompt = "Write src/mine.py."
scope = ["src/mine.py"]
"""


async def test_a_remote_agent_is_held_by_the_sandbox_and_its_hooks(
    cluster: Cluster, tmp_path: Path
) -> None:
    """On the second node, the agent's hooks allow its scope and deny the rest (the
    manifest travelled, re-rooted, digest checked), and writes the hooks never see are
    refused by the kernel: outside the clone, the clone's git directory, the manifest."""
    from seawall.plan.loader import parse_plan
    from seawall.session.engine import Session

    claude = tmp_path / "claude"
    claude.write_text(f"#!{sys.executable}\n" + BARRIER_CLAUDE.read_text())
    claude.chmod(0o755)
    outside = tmp_path / "outside.txt"
    raw = [str(outside), "../git/hooks/post-checkout", "../state/planted.txt"]
    plan = parse_plan(
        BARRIER_PLAN.format(
            raw=json.dumps(json.dumps(raw)),
            claude=json.dumps(str(claude)),
            scratch=json.dumps(str(tmp_path / "scratch")),
        )
    )
    repo = tmp_path / "repo"
    make_repo(repo)
    session = Session(plan, repo=repo, session_id="rayb-1")
    result = await session.run()
    assert session.state is not None
    (agent,) = session.state.waves[0].agents
    transcript = repo / ".seawall" / "rayb-1" / "agents" / "barrier" / "w1-transcript.jsonl"
    final = json.loads(transcript.read_text().splitlines()[-1])["result"]
    lines = final.splitlines()
    assert "allowed src/mine.py" in lines, final
    (denied,) = [line for line in lines if line.startswith("denied src/theirs.py")]
    assert "outside this task's file scope" in denied, final
    for path in raw:
        assert f"raw-refused {path}: PermissionError" in lines, final
    assert not outside.exists()
    assert agent.status == "done" and agent.merged, agent
    assert result.done == ("barrier",) or set(result.done) == {"barrier"}
    assert git(repo, "show", "main:src/mine.py") == "# written by the agent (0)"
    assert git(repo, "ls-tree", "--name-only", "main", "src/") == "src/core.py\nsrc/mine.py"


# -- docs/ray.md's walk-through, as written ------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _walkthrough() -> tuple[str, str]:
    """The plan and the shell block of docs/ray.md's walk-through."""
    text = (ROOT / "docs" / "ray.md").read_text(encoding="utf-8")
    blocks = {}
    for name in ("plan", "run"):
        found = re.search(
            rf"^<!-- docs: [^>]*ray-walkthrough={name} -->\n```\w+\n(.*?)^```", text, re.S | re.M
        )
        assert found is not None, f"docs/ray.md has no ray-walkthrough={name} block"
        blocks[name] = found.group(1)
    return blocks["plan"], blocks["run"]


async def test_the_documented_walk_through_runs_as_written(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The plan and commands of docs/ray.md, in a fresh repository: the token where the
    docs say (``~/.ray/auth_token``), the GCS address in ``RAY_ADDRESS`` (the one
    substitution: this cluster's address for the example's), seawall shipped as a
    wheel built from this checkout. The stand-in agent's file is merged into main."""
    plan, commands = _walkthrough()
    repo = tmp_path / "repo"
    make_repo(repo)
    (repo / "plan.toml").write_text(plan)
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    token = await anyio.Path(cluster.env["RAY_AUTH_TOKEN_PATH"]).read_text()
    (home / ".ray" / "auth_token").write_text(token)
    env = {
        key: value
        for key, value in cluster.env.items()
        if key not in ("RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE", "RAY_ADDRESS")
    }
    bin_dir = str(Path(sys.executable).parent)
    env |= {"HOME": str(home), "SEAWALL_SRC": str(ROOT), "PATH": f"{bin_dir}:{env['PATH']}"}
    script = commands.replace("head.internal:6379", cluster.address)
    assert script != commands, "the walk-through no longer names head.internal:6379"
    with anyio.fail_after(600):
        done = await anyio.run_process(
            ["bash", "-euo", "pipefail", "-c", script], cwd=repo, env=env, check=False
        )
    output = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode == 0, output[-4000:]
    assert done.stdout.decode().splitlines()[-1] == "hi", output[-4000:]
    assert "sandboxed by the kernel" in output
    assert git(repo, "log", "-1", "--format=%s", "main") != "initial"
