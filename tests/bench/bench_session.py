"""The coordinator's overhead per agent: 200 agents of a no-op runner in one in-place wave.

The figure is the dispatch path (runner call, event counting, breakers and detectors,
the per-agent run record) without git work, per agent, against the same 200 no-op runner
calls made bare in one task group. The whole session (git work included) is printed too.
"""

from __future__ import annotations

import io
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import anyio

from seawall.adapters.runners.callable import CallableRunner
from seawall.events import Event, ToolCall, ToolResult, Turn
from seawall.git.checkpoints import Checkpointer
from seawall.model import BreakerLimits, StagnationConfig
from seawall.plan import parse_plan
from seawall.report.progress import Progress
from seawall.runner import AgentRequest, EmitFn
from seawall.session.agent_watch import AgentJob, dispatch_wave
from seawall.session.engine import Session
from tests.bench.harness import BenchResult, empty_repo

AGENTS = 200


async def _agent(request: AgentRequest, emit: EmitFn) -> str:
    for event in (
        Turn(number=1),
        ToolCall(call_id="1", name="Read", arguments={"file_path": "README.md"}),
        ToolResult(call_id="1", text="# readme"),
    ):
        outcome = emit(event)
        if outcome is not None:
            await outcome
    return "STATUS: done — nothing to do"


class _NoGit:
    """A checkpointer stand-in: the benchmark leaves git work out of the figure."""

    tip: str | None = None

    async def acheckpoint(self, touched_paths: Any = None) -> None:
        return None

    async def awip(self, reason: str, touched_paths: Any = None) -> None:
        return None


def _jobs(workspace: Path) -> list[AgentJob]:
    runner = CallableRunner(_agent)
    return [
        AgentJob(
            task_id=f"t{i}",
            runner=runner,
            request=AgentRequest(task_id=f"t{i}", prompt="x", workspace=workspace),
            checkpointer=cast(Checkpointer, _NoGit()),
            limits=BreakerLimits(),
            stagnation=StagnationConfig(),
            max_turns=10,
            wave=1,
            session="bench",
            in_place=True,
            repo=workspace,
        )
        for i in range(AGENTS)
    ]


async def _bare(workspace: Path) -> None:
    runner = CallableRunner(_agent)

    def ignore(event: Event) -> None:
        del event

    async with anyio.create_task_group() as group:
        for i in range(AGENTS):
            request = AgentRequest(task_id=f"t{i}", prompt="x", workspace=workspace)
            group.start_soon(runner.run, request, ignore)


def _session(tmp: Path) -> float:
    repo = empty_repo(tmp / "repo")
    tasks = "".join(
        f'[[task]]\nid = "t{i}"\nprompt = "x"\nscope = ["f{i}.txt"]\n' for i in range(AGENTS)
    )
    text = f'[session]\nname = "b"\nisolation = "none"\nmax_agents_per_wave = {AGENTS}\n' + tasks
    session = Session(
        parse_plan(text),
        repo=repo,
        runner=CallableRunner(_agent),
        progress=Progress(io.StringIO(), live=False),
        plan_text=text,
    )
    start = time.perf_counter()
    anyio.run(session.run)
    return time.perf_counter() - start


def run() -> list[BenchResult]:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        ours = min(_timed(lambda: anyio.run(dispatch_wave, _jobs(tmp))) for _ in range(3))
        bare = min(_timed(lambda: anyio.run(_bare, tmp)) for _ in range(3))
        whole = _session(tmp)
    overhead_ms = (ours - bare) / AGENTS * 1000
    return [
        BenchResult(
            name=f"dispatch {AGENTS} no-op agents (per agent)",
            figure=ours / AGENTS * 1000,
            baseline=bare / AGENTS * 1000,
            unit="ms",
            baseline_name="bare runner calls in one task group",
            target="overhead < 5 ms per agent",
            note=f"coordinator overhead {overhead_ms:.3f} ms per agent, git excluded",
        ),
        BenchResult(
            name=f"whole session, {AGENTS} agents in place (per agent, git included)",
            figure=whole / AGENTS * 1000,
            baseline=bare / AGENTS * 1000,
            unit="ms",
            baseline_name="bare runner calls",
        ),
    ]


def _timed(func: Any) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start
