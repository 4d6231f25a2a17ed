"""RayRunner on a real local Ray: waves of command agents, stops, a killed worker, a session.

Every test runs real command-runner agents (a small Python script that writes files,
commits, and prints Claude Code stream-json) in real git worktrees; the same agents run
with the local CommandRunner are the reference the Ray runs must match.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("ray", reason="the ray extra is not installed")

import ray

from seawall.adapters.runners.command import CommandRunner
from seawall.adapters.runners.ray import RayRunner, parse_memory
from seawall.errors import ConfigurationError, MissingExtraError, RunnerError
from seawall.events import Event, Final, ToolCall, ToolResult
from seawall.git import Checkpointer, CheckpointMode, agent_history, prepare_workspaces
from seawall.git.repo import agent_branch, checkpoint_ref
from seawall.git.workspaces import worktree_path
from seawall.model import BreakerLimits, Isolation, RunnerSpec, StagnationConfig
from seawall.runner import AgentRequest, AgentResult, AgentRunner
from seawall.session.agent_watch import AgentJob, AgentRun, dispatch_wave
from seawall.testing.runners import AgentRunnerContract
from tests.waiting import await_until

# Ray 2.60 on Python 3.11 emits no warning here under -W error; none is filtered.
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FAKE_BIN = Path(__file__).resolve().parents[1] / "fakes" / "bin"
SESSION = "rs1"
FIXED_DATE = {
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}

AGENT = textwrap.dedent(
    '''
    """A command agent that follows $RAY_AGENT_SPEC[task] and prints Claude stream-json."""
    import json, os, signal, subprocess, sys, time
    from pathlib import Path

    def out(record):
        sys.stdout.write(json.dumps(record) + "\\n")
        sys.stdout.flush()

    def assistant(n, block):
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant",
                   "content": [block], "usage": {"input_tokens": 1, "output_tokens": 1}}
        out({"type": "assistant", "message": message, "session_id": "s"})

    def result_of(call_id, text):
        block = {"type": "tool_result", "tool_use_id": call_id, "content": text,
                 "is_error": False}
        out({"type": "user", "message": {"role": "user", "content": [block]},
             "session_id": "s"})

    spec = json.loads(Path(os.environ["RAY_AGENT_SPEC"]).read_text())
    task = os.environ["SEAWALL_TASK_ID"]
    sys.stdin.read()
    out({"type": "system", "subtype": "init", "session_id": "s"})
    for n, step in enumerate(spec[task].get("steps", [])):
        if "write" in step:
            target = Path(step["write"]).absolute()
            assistant(n, {"type": "tool_use", "id": f"t{n}", "name": "Write",
                          "input": {"file_path": str(target), "content": step["content"]}})
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step["content"])
            result_of(f"t{n}", "File written")
            time.sleep(0.3)  # a model's think time: the coordinator checkpoints meanwhile
        if "chmod" in step:
            os.chmod(step["chmod"], 0o755)
        if "delete" in step:
            Path(step["delete"]).unlink()
        if "commit" in step:
            subprocess.run(["git", "add", "-A"], check=True)
            subprocess.run(["git", "commit", "-q", "-m", step["commit"]], check=True)
        if "pidfile" in step:
            Path(step["pidfile"]).write_text(str(os.getpid()))
        if "env_to" in step:
            told = {k: v for k, v in os.environ.items() if k.startswith("SEAWALL_")}
            Path(step["env_to"]).write_text(json.dumps(told))
        if "sleep" in step:
            time.sleep(step["sleep"])
        if step.get("kill_worker"):  # the worker: the parent of seawall's supervisor
            parent = os.getppid()
            if b"seawall.sandbox.supervise" in Path(f"/proc/{parent}/cmdline").read_bytes():
                if "supervisor_pidfile" in step:
                    Path(step["supervisor_pidfile"]).write_text(str(parent))
                parent = int(Path(f"/proc/{parent}/stat").read_text().rsplit(")", 1)[1].split()[1])
            os.kill(parent, signal.SIGKILL)
            time.sleep(30)
    final = spec[task].get("final", "STATUS: done")
    assistant(99, {"type": "text", "text": final})
    out({"type": "result", "subtype": "success", "is_error": False, "result": final,
         "num_turns": 1, "session_id": "s"})
    '''
)

WAVE_SPEC: dict[str, Any] = {
    "alpha": {
        "steps": [
            {"write": "src/alpha.py", "content": "A = 1\n"},
            {"write": "notes/alpha.md", "content": "# alpha\n"},
        ],
        "final": "Wrote alpha.\nSTATUS: done",
    },
    "beta": {
        "steps": [
            {"write": "src/beta.py", "content": "B = 1\n"},
            {"commit": "beta: first"},
            {"write": "src/beta.py", "content": "B = 2\n"},
            {"delete": "README.md"},
        ],
        "final": "STATUS: partial — beta half done",
    },
    "gamma": {
        "steps": [
            {"write": "src/core.py", "content": "CORE = 1\n"},
            {"write": "src/core.py", "content": "CORE = 2\n"},
            {"write": "bin/run.sh", "content": "#!/bin/sh\necho hi\n", "chmod": "bin/run.sh"},
            {"commit": "gamma: core"},
        ],
        "final": "STATUS: done",
    },
}


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    return done.stdout.strip()


def make_repo(path: Path) -> str:
    """A repository on main; the same content and dates give the same base commit."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "ray test")
    git(path, "config", "user.email", "ray@seawall.invalid")
    git(path, "config", "commit.gpgsign", "false")
    (path / "README.md").write_text("# project\n")
    (path / "src").mkdir()
    (path / "src" / "core.py").write_text("CORE = 0\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial", env=FIXED_DATE)
    return git(path, "rev-parse", "HEAD")


def files_of(root: Path) -> dict[str, str]:
    """Every file under ``root`` except .git, with its content and mode."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative == ".git" or relative.startswith(".git/") or not path.is_file():
            continue
        mode = "x" if os.access(path, os.X_OK) else "-"
        found[relative] = mode + path.read_text()
    return found


def commits_of(repo: Path, branch: str, base: str) -> list[tuple[str, str]]:
    """(tree, message) of the branch's commits since ``base``, oldest first."""
    log = git(repo, "log", "--reverse", "--format=%T %s", f"{base}..{branch}")
    return [(line[:40], line[41:]) for line in log.splitlines()]


def tree_of(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", f"{rev}^{{tree}}")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One small local Ray for the whole module, shut down after it."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def agent_script(tmp_path: Path) -> Path:
    path = tmp_path / "agent.py"
    path.write_text(AGENT)
    return path


def write_spec(tmp_path: Path, spec: dict[str, Any]) -> dict[str, str]:
    path = tmp_path / "agent-spec.json"
    path.write_text(json.dumps(spec))
    return {"RAY_AGENT_SPEC": str(path)}


def command_spec(agent: Path, env: dict[str, str]) -> RunnerSpec:
    return RunnerSpec(
        name="agent",
        kind="command",
        argv=(sys.executable, str(agent)),
        env=env,
        options={"output": "stream-json", "kill_grace": "0.5"},
    )


def ray_runner(agent: Path, env: dict[str, str], **options: Any) -> RayRunner:
    scratch = str(agent.parent / "ray-scratch")  # a killed worker's clone stays in tmp_path
    return RayRunner(
        command_spec(agent, env), stop_grace=8.0, poll=0.2, scratch_dir=scratch, **options
    )


def local_runner(agent: Path, env: dict[str, str]) -> CommandRunner:
    return CommandRunner.from_spec(command_spec(agent, env))


async def run_wave(
    repo: Path, base: str, runner: AgentRunner, tasks: list[str]
) -> dict[str, AgentRun]:
    """One wave through the session's own dispatcher (checkpoints, breakers, wip)."""
    workspaces = await prepare_workspaces(
        repo,
        session_id=SESSION,
        wave=1,
        base=base,
        task_ids=tasks,
        isolation=Isolation.WORKTREE,
        max_parallel=1,  # as the session does: concurrent `git worktree add` races
    )
    jobs = [
        AgentJob(
            task_id=ws.task_id,
            runner=runner,
            request=AgentRequest(
                task_id=ws.task_id,
                prompt=f"Do {ws.task_id}.",
                workspace=Path(ws.path),
                session=SESSION,
                wave=1,
                max_turns=20,
                time_limit=120,
                transcript_path=repo / ".seawall" / SESSION / f"{ws.task_id}.jsonl",
            ),
            checkpointer=Checkpointer(
                ws.path, session_id=SESSION, task_id=ws.task_id, base=base, mode=CheckpointMode.TREE
            ),
            limits=BreakerLimits(),
            stagnation=StagnationConfig(),
            max_turns=20,
            wave=1,
            session=SESSION,
            in_place=False,
            repo=repo,
        )
        for ws in workspaces
    ]
    runs = await dispatch_wave(jobs)
    return {run.task_id: run for run in runs}


def worktree(repo: Path, task: str) -> Path:
    return worktree_path(repo, SESSION, 1, task)


async def make_worktree(repo: Path, base: str, task: str) -> Path:
    (ws,) = await prepare_workspaces(
        repo, session_id=SESSION, wave=1, base=base, task_ids=[task], isolation=Isolation.WORKTREE
    )
    return Path(ws.path)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def worker_of(agent: int) -> int:
    """The Ray worker that runs the agent ``agent``: its parent, past seawall's supervisor."""
    parent = _parent(agent)
    if b"seawall.sandbox.supervise" in Path(f"/proc/{parent}/cmdline").read_bytes():
        parent = _parent(parent)
    return parent


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


async def ended(*pids: int) -> bool:
    """An ``await_until`` probe: every one of ``pids`` has ended."""
    return not any(map(alive, pids))


# -- a wave on Ray merges exactly like the same wave run locally -------------------------


async def test_wave_on_ray_matches_the_local_wave(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    env = write_spec(tmp_path, WAVE_SPEC)
    tasks = sorted(WAVE_SPEC)
    local_repo, remote_repo = tmp_path / "local", tmp_path / "remote"
    base = make_repo(local_repo)
    assert make_repo(remote_repo) == base
    local = await run_wave(local_repo, base, local_runner(agent_script, env), tasks)
    remote = await run_wave(remote_repo, base, ray_runner(agent_script, env), tasks)
    for task in tasks:
        mine, theirs = remote[task], local[task]
        assert (mine.final_text, mine.is_error, mine.truncated, mine.runner_error) == (
            theirs.final_text,
            theirs.is_error,
            theirs.truncated,
            theirs.runner_error,
        ), task
        assert mine.touched == theirs.touched
        assert mine.wip is None and mine.touched
        assert mine.counts.tool_calls == theirs.counts.tool_calls > 0
        # the merge takes the final checkpoint: the same tree
        assert mine.checkpoint is not None and theirs.checkpoint is not None
        assert tree_of(remote_repo, mine.checkpoint) == tree_of(local_repo, theirs.checkpoint)
        branch = agent_branch(SESSION, 1, task)
        assert commits_of(remote_repo, branch, base) == commits_of(local_repo, branch, base)
        assert files_of(worktree(remote_repo, task)) == files_of(worktree(local_repo, task))
        # the history the spiral detector reads: one checkpoint per edit, same trees
        histories = [
            agent_history(repo, session_id=SESSION, task_id=task, base=base, branch=branch)
            for repo in (remote_repo, local_repo)
        ]
        trees = [
            [tree_of(repo, entry.commit) for entry in history.checkpoints]
            for repo, history in zip((remote_repo, local_repo), histories, strict=True)
        ]
        assert trees[0] == trees[1] and len(trees[0]) >= 2, task
        transcripts = [
            (repo / ".seawall" / SESSION / f"{task}.jsonl").read_text()
            for repo in (remote_repo, local_repo)
        ]
        assert transcripts[0].count("\n") == transcripts[1].count("\n") > 2
    assert files_of(worktree(remote_repo, "gamma"))["bin/run.sh"].startswith("x")
    assert "README.md" not in files_of(worktree(remote_repo, "beta"))


async def test_a_run_alone_fetches_branch_checkpoints_and_files(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    env = write_spec(tmp_path, {"gamma": WAVE_SPEC["gamma"]})
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "gamma")
    events: list[Event] = []
    seen_on_disk: list[str] = []

    def watch(event: Event) -> None:
        events.append(event)
        if isinstance(event, ToolResult):  # the edit is local before its result arrives
            seen_on_disk.append((workspace / "src" / "core.py").read_text())

    request = AgentRequest(
        task_id="gamma",
        prompt="Do gamma.",
        workspace=workspace,
        session=SESSION,
        wave=1,
        transcript_path=tmp_path / "agents" / "gamma.jsonl",
    )
    result = await ray_runner(agent_script, env).run(request, watch)
    assert not result.is_error and result.final_text == "STATUS: done"
    assert result.tool_calls == 3 == sum(isinstance(e, ToolCall) for e in events)
    assert isinstance(events[-1], Final)
    assert seen_on_disk == ["CORE = 1\n", "CORE = 2\n", "CORE = 2\n"]
    branch = agent_branch(SESSION, 1, "gamma")
    assert [message for _, message in commits_of(repo, branch, base)] == ["gamma: core"]
    assert git(workspace, "rev-parse", "HEAD") == git(repo, "rev-parse", branch)
    assert git(workspace, "status", "--porcelain") == ""
    chain = git(repo, "log", "--first-parent", "--format=%s", checkpoint_ref(SESSION, "gamma"))
    assert chain.splitlines()[:3] == ["checkpoint: gamma"] * 3
    assert tree_of(repo, checkpoint_ref(SESSION, "gamma")) == tree_of(repo, branch)
    transcript = request.transcript_path
    assert transcript is not None and '"type": "result"' in transcript.read_text()
    assert (transcript.parent / "gamma.prompt.md").read_text() == "Do gamma."
    # the transcript's paths are the coordinator's, like the events' (not the worker's clone)
    assert str(workspace / "src" / "core.py") in transcript.read_text()
    assert "seawall-ray-" not in transcript.read_text()


async def test_the_attempts_model_reaches_the_agent_on_its_worker(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    told = tmp_path / "told.json"
    env = write_spec(tmp_path, {"delta": {"steps": [{"env_to": str(told)}]}})
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "delta")
    request = AgentRequest(
        task_id="delta", prompt="Do delta.", workspace=workspace, session=SESSION, wave=1,
        model="big-model",
    )  # fmt: skip
    result = await ray_runner(agent_script, env).run(request, lambda event: None)
    assert not result.is_error, result
    assert json.loads(told.read_text())["SEAWALL_MODEL"] == "big-model"


def test_a_ray_runner_continues_conversations_as_its_wrapped_runner_does(tmp_path: Path) -> None:
    claude = RunnerSpec(name="agent", kind="claude-code")
    assert RayRunner(claude).continues_conversations is True
    assert RayRunner(command_spec(tmp_path / "agent.py", {})).continues_conversations is False


async def test_a_second_dispatch_keeps_the_first_ones_checkpoints_reachable(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    spec = {"redo": {"steps": [{"write": "redo.txt", "content": "again\n"}]}}
    env = write_spec(tmp_path, spec)
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "redo")
    runner = ray_runner(agent_script, env)
    ref = checkpoint_ref(SESSION, "redo")
    request = AgentRequest(task_id="redo", prompt="p", workspace=workspace, session=SESSION)
    assert not (await runner.run(request, lambda e: None)).is_error
    first = git(repo, "rev-parse", ref)
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "accepted")  # the next dispatch starts here
    (workspace / "redo.txt").unlink()
    git(workspace, "commit", "-q", "-am", "dropped again")
    again = AgentRequest(task_id="redo", prompt="p", workspace=workspace, session=SESSION)
    assert not (await runner.run(again, lambda e: None)).is_error
    tip = git(repo, "rev-parse", ref)
    assert tip != first
    parents = git(repo, "log", "-1", "--format=%P", tip).split()
    assert parents == [git(workspace, "rev-parse", "HEAD"), first]


async def test_a_clone_whose_git_link_the_agent_rewrote_is_still_read_itself(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    """The worker reads its clone's own git directory, not the one ``.git`` names: an
    agent pointing it at a decoy changes neither the decoy nor what comes back."""
    repo = tmp_path / "repo"
    base = make_repo(repo)
    decoy = tmp_path / "decoy"
    git(tmp_path, "clone", "-q", str(repo), str(decoy))
    decoy_refs = git(decoy, "for-each-ref")
    steps = [
        {"write": "src/d.py", "content": "D = 1\n"},
        {"write": ".git", "content": f"gitdir: {decoy / '.git'}\n"},
        {"write": "src/d.py", "content": "D = 2\n"},
    ]
    env = write_spec(tmp_path, {"delta": {"steps": steps}})
    workspace = await make_worktree(repo, base, "delta")
    request = AgentRequest(task_id="delta", prompt="p", workspace=workspace, session=SESSION)
    result = await ray_runner(agent_script, env).run(request, lambda e: None)
    assert not result.is_error, result.final_text
    ref = checkpoint_ref(SESSION, "delta")
    assert git(repo, "show", f"{ref}:src/d.py") == "D = 2"
    assert (workspace / "src" / "d.py").read_text() == "D = 2\n"
    assert git(workspace, "rev-parse", "--git-common-dir") == str(repo / ".git")
    assert git(decoy, "for-each-ref") == decoy_refs
    assert git(decoy, "status", "--porcelain") == ""


async def test_an_agent_without_edit_events_is_checkpointed_while_it_runs(
    local_ray: None, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "quiet")
    script = "import pathlib, time; pathlib.Path('quiet.txt').write_text('q'); time.sleep(60)"
    inner = RunnerSpec(
        name="quiet", kind="command", argv=(sys.executable, "-c", script), options={}
    )
    runner = RayRunner(inner, checkpoint_every=0.3, stop_grace=8.0, poll=0.2)
    request = AgentRequest(task_id="quiet", prompt="p", workspace=workspace, session=SESSION)
    arrived: list[bool] = []

    async def stop_when_mirrored() -> None:
        try:
            quiet = anyio.Path(workspace / "quiet.txt")
            arrived.append(await await_until(quiet.exists, within=20, what="quiet.txt mirrored"))
        finally:
            request.stop.stop("seen it")

    results: list[AgentResult] = []

    async def run() -> None:
        results.append(await runner.run(request, lambda e: None))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            group.start_soon(stop_when_mirrored)
    assert arrived == [True]
    assert results[0].cancelled and results[0].stop_reason == "seen it"
    assert git(repo, "show", f"{checkpoint_ref(SESSION, 'quiet')}:quiet.txt") == "q"


# -- stops and failures ----------------------------------------------------------------


async def test_stop_signal_ends_the_remote_agent_and_keeps_its_work(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    pidfile = tmp_path / "agent.pid"
    spec = {
        "hang": {
            "steps": [
                {"pidfile": str(pidfile)},
                {"write": "work.txt", "content": "half\n"},
                {"sleep": 120},
            ]
        }
    }
    env = write_spec(tmp_path, spec)
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "hang")
    request = AgentRequest(
        task_id="hang", prompt="hang", workspace=workspace, session=SESSION, wave=1
    )

    def on_event(event: Event) -> None:
        if isinstance(event, ToolResult):
            request.stop.stop("breaker: test stop")

    started = time.monotonic()
    with anyio.fail_after(60):
        result = await ray_runner(agent_script, env).run(request, on_event)
    assert result.cancelled and not result.timed_out and result.is_error
    assert result.stop_reason == "breaker: test stop"
    assert time.monotonic() - started < 30
    assert (workspace / "work.txt").read_text() == "half\n"
    tip = checkpoint_ref(SESSION, "hang")
    assert git(repo, "log", "-1", "--format=%s", tip).startswith("wip: hang stopped")
    assert git(repo, "show", f"{tip}:work.txt") == "half"
    agent = int(pidfile.read_text())
    await await_until(lambda: ended(agent), within=10, what=f"agent {agent} to end")


async def test_time_limit_returns_timed_out_with_the_work_so_far(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    spec = {"slow": {"steps": [{"write": "a.txt", "content": "a\n"}, {"sleep": 120}]}}
    env = write_spec(tmp_path, spec)
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "slow")
    request = AgentRequest(
        task_id="slow", prompt="p", workspace=workspace, session=SESSION, wave=1, time_limit=6
    )
    with anyio.fail_after(40):
        result = await ray_runner(agent_script, env).run(request, lambda e: None)
    assert result.timed_out and not result.cancelled and result.stop_reason == "time limit"
    assert (workspace / "a.txt").read_text() == "a\n"


async def test_a_killed_worker_gives_a_partial_result_with_its_checkpoints(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    """The worker is SIGKILLed mid-agent: the run is partial, what was checkpointed is
    kept, and the agent (with its supervisor) does not outlive the worker."""
    agent_pid, supervisor_pid = tmp_path / "agent.pid", tmp_path / "supervisor.pid"
    spec = {
        "doomed": {
            "steps": [
                {"write": "saved.txt", "content": "saved\n"},
                {"sleep": 2},
                {"write": "maybe.txt", "content": "maybe\n"},
                {
                    "pidfile": str(agent_pid),
                    "kill_worker": True,
                    "supervisor_pidfile": str(supervisor_pid),
                },
            ]
        }
    }
    env = write_spec(tmp_path, spec)
    repo = tmp_path / "repo"
    base = make_repo(repo)
    runs = await run_wave(repo, base, ray_runner(agent_script, env), ["doomed"])
    run = runs["doomed"]
    assert run.is_error and run.truncated and not run.runner_error
    assert "Ray worker died" in run.stop_reason
    workspace = worktree(repo, "doomed")
    assert (workspace / "saved.txt").read_text() == "saved\n"
    # the session's own wip snapshot holds what arrived before the worker died
    assert run.wip is not None
    assert git(repo, "show", f"{run.wip}:saved.txt") == "saved"
    # the agent sleeps 30 s after killing its worker: only its supervisor can end it
    agent, supervisor = int(agent_pid.read_text()), int(supervisor_pid.read_text())
    await await_until(
        lambda: ended(agent, supervisor),
        within=10,
        what=f"the agent {agent} and its supervisor {supervisor} to end with their worker",
    )


async def test_stop_before_start_and_outer_cancellation(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    pidfile = tmp_path / "agent.pid"
    spec = {"hang": {"steps": [{"pidfile": str(pidfile)}, {"sleep": 120}]}}
    env = write_spec(tmp_path, spec)
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "hang")
    runner = ray_runner(agent_script, env)
    early = AgentRequest(task_id="hang", prompt="p", workspace=workspace, session=SESSION)
    early.stop.stop("wave aborted")
    result = await runner.run(early, lambda e: None)
    assert result.cancelled and result.stop_reason == "wave aborted"
    assert not pidfile.exists()
    request = AgentRequest(task_id="hang", prompt="p", workspace=workspace, session=SESSION)
    returned: list[AgentResult] = []
    with anyio.fail_after(40):
        with anyio.move_on_after(4) as scope:
            returned.append(await runner.run(request, lambda e: None))
    assert scope.cancelled_caught and returned == []
    agent = int(pidfile.read_text())
    await await_until(lambda: ended(agent), within=10, what=f"agent {agent} to end")


async def test_a_missing_executable_is_a_runner_error(local_ray: None, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "t")
    runner = RayRunner(RunnerSpec(name="x", kind="command", argv=("no-such-agent-cli",)))
    request = AgentRequest(task_id="t", prompt="p", workspace=workspace, session=SESSION)
    with pytest.raises(RunnerError, match="no-such-agent-cli"):
        await runner.run(request, lambda e: None)


async def test_stop_remote_orphans_ends_the_sessions_agent_on_each_node(
    local_ray: None, tmp_path: Path
) -> None:
    """The look runs as a Ray task on every node (here the one local node) and stops the
    process groups of that session's agent for that task, not another task's."""
    agents = {}
    for task in ("t", "other"):
        env = {**os.environ, "SEAWALL_SESSION": "orphan-s", "SEAWALL_TASK_ID": task}
        agents[task] = await anyio.open_process(
            [sys.executable, "-c", "import time; time.sleep(120)"], env=env, start_new_session=True
        )
    try:
        runner = RayRunner(RunnerSpec(name="x", kind="command", argv=("true",)))
        stopped = await runner.stop_remote_orphans("orphan-s", "t")
        assert len(stopped) == 1 and f"stopped process groups {agents['t'].pid}" in stopped[0]
        with anyio.fail_after(10):
            assert await agents["t"].wait() != 0
        assert agents["other"].returncode is None  # another task's agent is left alone
        assert await runner.stop_remote_orphans("orphan-s", "t") == []  # nothing left
    finally:
        for process in agents.values():
            if process.returncode is None:
                process.kill()
            await process.wait()


async def test_a_cluster_that_cannot_be_reached_is_said_at_once(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        runner = RayRunner(RunnerSpec(name="x", kind="command", argv=("true",)), address=address)
        with anyio.fail_after(15), pytest.raises(RunnerError, match="cannot reach the Ray"):
            await runner.stop_remote_orphans("s", "t")


async def test_task_options_ray_refuses_are_a_runner_error(local_ray: None, tmp_path: Path) -> None:
    """Nothing started: the environment's failure (the session halts), not the task's."""
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "t")
    inner = RunnerSpec(name="x", kind="command", argv=("true",))
    runner = RayRunner(inner, runtime_env={"env_vars": "A=1"})
    request = AgentRequest(task_id="t", prompt="p", workspace=workspace, session=SESSION)
    with pytest.raises(RunnerError, match=r"Ray refused the agent's task options: .*env_vars"):
        await runner.run(request, lambda e: None)


async def test_the_main_working_tree_is_refused(local_ray: None, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo)
    runner = RayRunner(RunnerSpec(name="x", kind="command", argv=("true",)))
    request = AgentRequest(task_id="t", prompt="p", workspace=repo, session=SESSION)
    with pytest.raises(RunnerError, match="worktree"):
        await runner.run(request, lambda e: None)


# -- a whole session -------------------------------------------------------------------


SESSION_PLAN = """
[session]
name = "rays"
isolation = "worktree"
agent = "agent"
sandbox_writable = [{writable}]

[runners.agent]
kind = "command"
argv = {argv}
env = {{ RAY_AGENT_SPEC = {spec} }}
options = {{ output = "stream-json" }}

[[task]]
id = "alpha"
prompt = "Do alpha."
scope = ["src/alpha.py", "notes/**"]

[[task]]
id = "gamma"
prompt = "Do gamma."
scope = ["src/core.py", "bin/**"]
"""


def ray_runner_for(spec: RunnerSpec, tmp_path: Path) -> RayRunner:
    scratch = str(tmp_path / "ray-scratch")
    return RayRunner(spec, stop_grace=8.0, poll=0.2, scratch_dir=scratch)


async def test_a_session_on_ray_merges_like_a_local_session(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    from seawall.plan.loader import parse_plan
    from seawall.session.engine import Session

    env = write_spec(tmp_path, {k: WAVE_SPEC[k] for k in ("alpha", "gamma")})
    plan = parse_plan(
        SESSION_PLAN.format(
            argv=json.dumps([sys.executable, str(agent_script)]),
            spec=json.dumps(env["RAY_AGENT_SPEC"]),
            writable=json.dumps(str(tmp_path)),  # the agents commit: the .git of both repos
        )
    )
    heads = []
    for name, runner in (
        ("local", None),
        # the workers' clones under the writable folder too: their git directory is
        # as read-only to a sandboxed agent as the local repository's .git
        ("remote", ray_runner_for(plan.runners["agent"], tmp_path)),
    ):
        repo = tmp_path / name
        make_repo(repo)
        session = Session(plan, repo=repo, runner=runner, session_id="rays-1")
        result = await session.run()
        assert result.done == ("alpha", "gamma") and not result.abandoned, name
        heads.append(tree_of(repo, "main"))
    assert heads[0] == heads[1]
    assert git(tmp_path / "remote", "show", "main:src/core.py") == "CORE = 2"


async def test_a_session_records_an_agent_whose_worker_died_as_partial(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    from seawall.plan.loader import parse_plan
    from seawall.session.engine import Session

    spec = {
        "alpha": {
            "steps": [
                {"write": "src/alpha.py", "content": "A = 1\n"},
                {"sleep": 3},  # its checkpoint reaches the coordinator, even on a busy machine
                {"pidfile": str(tmp_path / "alpha.pid")},
                {"sleep": 60},
            ]
        },
        "gamma": WAVE_SPEC["gamma"],
    }
    env = write_spec(tmp_path, spec)
    plan = parse_plan(
        SESSION_PLAN.format(
            argv=json.dumps([sys.executable, str(agent_script)]),
            spec=json.dumps(env["RAY_AGENT_SPEC"]),
            writable=json.dumps(str(tmp_path)),  # the agents commit: the .git of both repos
        )
    )
    repo = tmp_path / "repo"
    make_repo(repo)
    runner = RayRunner(
        plan.runners["agent"], stop_grace=8.0, poll=0.2, scratch_dir=str(tmp_path / "scratch")
    )
    session = Session(plan, repo=repo, runner=runner, session_id="rays-2")

    agents: list[int] = []

    async def kill_alphas_workers() -> None:
        """Each dispatch of alpha loses its worker, killed from outside (the sandboxed
        agent itself may not signal it)."""
        pidfile = anyio.Path(tmp_path / "alpha.pid")
        for _ in range(3000):  # bounded: the session ends well before
            if await pidfile.exists():
                pid = int(await pidfile.read_text())
                await pidfile.unlink()
                agents.append(pid)
                with contextlib.suppress(ProcessLookupError, FileNotFoundError):
                    os.kill(worker_of(pid), signal.SIGKILL)
            await anyio.sleep(0.1)

    async with anyio.create_task_group() as group:
        group.start_soon(kill_alphas_workers)
        await session.run()
        group.cancel_scope.cancel()
    assert session.state is not None
    first = {agent.task: agent for agent in session.state.waves[0].agents}
    assert first["alpha"].status == "partial"
    assert first["gamma"].status == "done" and first["gamma"].merged
    assert first["alpha"].wip is not None
    assert git(repo, "show", f"{first['alpha'].wip}:src/alpha.py") == "A = 1"
    assert agents, "alpha never started"
    await await_until(  # each sleeps 60 s: none may outlive its killed worker
        lambda: ended(*agents), within=10, what=f"the agents {agents} to end with their workers"
    )


# -- configuration ---------------------------------------------------------------------


def test_from_spec_reads_options_and_the_inner_runner() -> None:
    spec = RunnerSpec(
        name="remote",
        kind="ray",
        argv=("python", "agent.py"),
        env={"A": "1"},
        options={
            "inner": "command",
            "inner.output": "stream-json",
            "address": "ray://head:10001",
            "num_cpus": "2",
            "memory": "4GiB",
            "runtime_env": '{"env_vars": {"X": "1"}}',
            "stop_grace": "3",
            "scratch_dir": "/data/seawall",
        },
    )
    runner = RayRunner.from_spec(spec)
    assert isinstance(runner.inner, RunnerSpec)
    assert runner.inner.kind == "command" and runner.inner.argv == ("python", "agent.py")
    assert dict(runner.inner.options) == {"output": "stream-json"}
    assert dict(runner.inner.env) == {"A": "1"}
    assert (runner.address, runner.placement.num_cpus, runner.placement.memory) == (
        "ray://head:10001",
        2.0,
        4 << 30,
    )
    assert runner.placement.runtime_env == {"env_vars": {"X": "1"}} and runner.stop_grace == 3.0
    assert runner.scratch_dir == "/data/seawall"


def test_from_spec_reads_placement() -> None:
    spec = RunnerSpec(
        name="gpu",
        kind="ray",
        options={
            "inner": "command",
            "num_gpus": "1",
            "resources": '{"a100": 1, "licence": 0.5}',
            "labels": '{"zone": "eu"}',
            "prefer_labels": '{"pool": "fast"}',
            "strategy": "spread",
            "queue_timeout": "90",
            "runtime_env": '{"env_vars": {"ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}"}}',
        },
    )
    runner = RayRunner.from_spec(spec)
    assert runner.placement.num_gpus == 1.0 and runner.placement.queue_timeout == 90.0
    assert runner.placement.resources == {"a100": 1.0, "licence": 0.5}
    placement = runner.placement.task_options()
    assert placement["num_gpus"] == 1.0 and placement["resources"] == runner.placement.resources
    assert placement["label_selector"] == {"zone": "eu", "pool": "fast"}
    assert placement["fallback_strategy"] == [{"label_selector": {"zone": "eu"}}]
    assert placement["scheduling_strategy"] == "SPREAD"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "options.inner"),
        ({"inner": "command", "adress": "x"}, "unknown option"),
        ({"inner": "command", "memory": "lots"}, "memory"),
        ({"inner": "command", "runtime_env": "[1]"}, "runtime_env"),
        ({"inner": "command", "runtime_env": "{nope"}, "runtime_env"),
        ({"inner": "ray"}, "cannot wrap"),
        ({"inner": "command", "num_cpus": "many"}, "runner 'r'"),
        ({"inner": "command", "resources": '{"gpu": "one"}'}, "resources must be a JSON object"),
        ({"inner": "command", "labels": '["pool"]'}, "labels must be a JSON object"),
        ({"inner": "command", "strategy": "PACKED"}, "strategy must be one of"),
        ({"inner": "command", "queue_timeout": "0"}, "queue_timeout must be positive"),
        (
            {"inner": "command", "runtime_env": '{"env_vars": {"ANTHROPIC_API_KEY": "sk-1"}}'},
            r"ANTHROPIC_API_KEY looks like a secret .* "
            r"ANTHROPIC_API_KEY = \"\$\{ANTHROPIC_API_KEY\}",
        ),
    ],
)
def test_from_spec_rejects_bad_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        RayRunner.from_spec(RunnerSpec(name="r", kind="ray", options=options))


def test_parse_memory() -> None:
    assert parse_memory("1024") == 1024
    assert parse_memory("512MiB") == 512 << 20
    assert parse_memory("2GB") == 2 * 10**9
    assert parse_memory("1.5G") == 1_500_000_000


async def test_a_missing_ray_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    base = make_repo(repo)
    workspace = await make_worktree(repo, base, "t")
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    runner = RayRunner(RunnerSpec(name="x", kind="command", argv=("true",)))
    request = AgentRequest(task_id="t", prompt="p", workspace=workspace, session=SESSION)
    with pytest.raises(MissingExtraError, match=r"pip install '\.\[ray\]'"):
        await runner.run(request, lambda e: None)


# -- the port's conformance kit ---------------------------------------------------------


class TestRayRunnerContract(AgentRunnerContract):
    stop_bound = 15.0
    first_event_bound = 20.0  # a Ray task starts its agent seconds after it is asked for

    @pytest.fixture(autouse=True)
    def _ray(self, local_ray: None) -> None:
        return None

    @pytest.fixture
    def runner(self) -> AgentRunner:
        inner = RunnerSpec(
            name="text",
            kind="command",
            argv=(sys.executable, str(FAKE_BIN / "text_agent.py")),
            options={"kill_grace": "0.5"},
        )
        return RayRunner(inner, stop_grace=8.0, poll=0.2)

    @pytest.fixture
    def workspace(self, tmp_path: Path) -> Path:
        repo = tmp_path / "repo"
        make_repo(repo)
        path = tmp_path / "workspace"
        git(repo, "worktree", "add", "-q", "-b", "seawall/conformance/w1/agent", str(path))
        return path


async def test_history_bundles_grow_by_the_new_commits_only(
    local_ray: None, tmp_path: Path, agent_script: Path
) -> None:
    from seawall.adapters.runners.ray.local import LocalWorktree

    repo = tmp_path / "repo"
    base = make_repo(repo)
    for n in range(300):  # some history worth bundling
        (repo / "src" / f"m{n}.py").write_text(f"N = {n}\n" * 40)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "many files")
    first_base = git(repo, "rev-parse", "HEAD")
    runner = ray_runner(agent_script, {})
    the_ray = await runner.link.connect()

    def request_for(task: str, workspace: Path) -> AgentRequest:
        return AgentRequest(task_id=task, prompt="p", workspace=workspace, session=SESSION)

    one = await make_worktree(repo, first_base, "one")
    chain = await runner.link.base_bundles(the_ray, LocalWorktree.open(request_for("one", one)))
    whole = runner.link.bundled_bytes
    assert len(chain) == 1 and whole > 10_000
    (repo / "src" / "new.py").write_text("NEW = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the next wave's base")
    second_base = git(repo, "rev-parse", "HEAD")
    (ws,) = await prepare_workspaces(
        repo, session_id=SESSION, wave=2, base=second_base, task_ids=["two"],
        isolation=Isolation.WORKTREE,
    )  # fmt: skip
    two = Path(ws.path)
    chain = await runner.link.base_bundles(the_ray, LocalWorktree.open(request_for("two", two)))
    assert len(chain) == 2
    assert runner.link.bundled_bytes - whole < whole / 10  # only the new commit travelled
    # the same base again adds nothing
    again = await runner.link.base_bundles(the_ray, LocalWorktree.open(request_for("one", one)))
    assert len(again) == 1 and runner.link.bundled_bytes - whole < whole / 10
    assert base != first_base != second_base
    # a worker builds the whole history from the chain: the agent sees the new file
    env = write_spec(tmp_path, {"two": {"steps": [], "final": "STATUS: done"}})
    result = await ray_runner(agent_script, env).run(request_for("two", two), lambda e: None)
    assert not result.is_error, result.stderr_tail
