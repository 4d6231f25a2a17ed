"""One session of many concurrent in-process agents, each emitting many events.

Shared by ``test_load.py`` (bounded, in CI) and ``tests/bench/bench_load.py`` (the full
100 agents x 1,000 events figure). Every agent emits steps of four events (``Turn``,
``ToolCall``, ``ToolResult``, ``Message``), each call a distinct ``Bash`` command; a
"looper" repeats one identical call from step ``LOOP_AT`` on, so the loop breaker must
stop it at a known call; the rest must never trip.
"""

from __future__ import annotations

import gc
import json
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.lowlevel

from seawall.adapters.runners.callable import CallableRunner
from seawall.events import Message, ToolCall, ToolResult, Turn
from seawall.runner import AgentRequest
from seawall.telemetry import AgentFinished, BreakerTripped, read_events
from tests.integration.sessionkit import make_repo
from tests.reliability.kit import ledger, run, session_for

EVENTS_PER_STEP = 4
LOOP_AT = 20  # a looper's calls from this step on are identical
LOOP_LIMIT = 4  # BreakerLimits.max_repeat_identical


@dataclass(slots=True)
class LoadFigures:
    agents: int
    events_per_agent: int
    loopers: int
    emitted: dict[str, int] = field(default_factory=dict)  # events each agent emitted
    calls: dict[str, int] = field(default_factory=dict)  # tool calls each agent emitted
    seconds: float = 0.0
    peak_bytes: int = 0
    memory_at: dict[int, int] = field(default_factory=dict)  # step -> traced bytes
    snapshots: dict[int, tracemalloc.Snapshot] | None = None  # for finding what grows


def plan_text(agents: int, events: int) -> str:
    steps = events // EVENTS_PER_STEP
    lines = [
        "[session]",
        'name = "load"',
        'agent = "scripted"',
        'isolation = "none"',
        f"max_agents_per_wave = {agents}",
        f"max_turns = {steps + 10}",
        "[session.breakers]",
        f"max_tool_calls = {steps * 4}",
        f"max_consecutive_polls = {steps * 4}",
        "[session.wave_breaker]",
        "enabled = false",
    ]
    for n in range(agents):
        lines += ["[[task]]", f'id = "{task_name(n)}"', 'prompt = "Load."', f'scope = ["w/{n}/"]']
    return "\n".join(lines) + "\n"


def task_name(n: int) -> str:
    return f"a{n:03d}"


def is_looper(task: str, loopers: int) -> bool:
    return int(task[1:]) < loopers


def make_agent(figures: LoadFigures, steps: int, probe: str | None) -> CallableRunner:
    async def agent(request: AgentRequest, emit: object) -> str:
        send = emit  # AgentEmit: awaitable per event
        if request.wave > 1:
            return "STATUS: done — the retry after a loop"
        looper = is_looper(request.task_id, figures.loopers)
        figures.emitted[request.task_id] = 0
        figures.calls[request.task_id] = 0
        for step in range(1, steps + 1):
            same = looper and step >= LOOP_AT
            command = "ls -la w/" if same else f"echo step {step} of {request.task_id}"
            call_id = f"{request.task_id}-{step}"
            figures.calls[request.task_id] += 1
            for event in (
                Turn(number=step),
                ToolCall(call_id=call_id, name="Bash", arguments={"command": command}),
                ToolResult(call_id=call_id, name="Bash", text="total 0" if same else f"{step}"),
                Message(text=f"step {step} done", turn=step),
            ):
                figures.emitted[request.task_id] += 1
                await send(event)  # type: ignore[operator]
            if request.task_id == probe and step in figures.memory_at:
                gc.collect()
                figures.memory_at[step] = tracemalloc.get_traced_memory()[0]
                if figures.snapshots is not None:
                    figures.snapshots[step] = tracemalloc.take_snapshot()
            await anyio.lowlevel.checkpoint()
        return "STATUS: done — load"

    return CallableRunner(agent)


def run_load(
    tmp: Path, *, agents: int, events: int, loopers: int, probe_steps: tuple[int, ...] = ()
) -> LoadFigures:
    """Run the session; returns what was emitted, the time and the memory figures."""
    repo = make_repo(tmp / "repo")
    figures = LoadFigures(agents=agents, events_per_agent=events, loopers=loopers)
    figures.memory_at = dict.fromkeys(probe_steps, 0)
    steps = events // EVENTS_PER_STEP
    probe = task_name(agents - 1) if probe_steps else None
    session = session_for(repo, plan_text(agents, events), runner=make_agent(figures, steps, probe))
    gc.collect()
    tracemalloc.start()
    started = time.perf_counter()
    try:
        run(session)
        figures.peak_bytes = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    figures.seconds = time.perf_counter() - started
    return figures


def check_load(repo: Path, figures: LoadFigures) -> dict[str, int]:
    """Assert the counts match end to end and every breaker decision is right; return
    the totals."""
    state = ledger(repo)
    first = {agent.task: agent for agent in state.waves[0].agents}
    assert len(first) == figures.agents
    events_path = repo / ".seawall" / state.session / "events.jsonl"
    finished = {e.agent: e for e in read_events(events_path, AgentFinished) if e.wave == 1}
    tripped = {e.agent for e in read_events(events_path, BreakerTripped)}
    steps = figures.events_per_agent // EVENTS_PER_STEP
    for task, record in first.items():
        looper = is_looper(task, figures.loopers)
        # what the coordinator counted is what the agent emitted, call for call
        assert record.tool_calls == figures.calls[task], (task, record.tool_calls)
        assert record.turns == figures.calls[task], (task, record.turns)
        counts = finished[task].counts
        assert counts is not None
        assert counts.tool_calls == record.tool_calls and counts.turns == record.turns
        if looper:
            assert record.trip is not None and record.trip.kind.label == "breaker/loop", task
            # stopped at the LOOP_LIMIT-th identical call (one more may be in flight)
            expected = LOOP_AT - 1 + LOOP_LIMIT
            assert expected <= record.tool_calls <= expected + 1, (task, record.tool_calls)
            assert record.status == "blocked" and task in tripped
        else:
            assert record.trip is None, (task, record.trip)
            assert figures.emitted[task] == figures.events_per_agent
            assert record.tool_calls == steps and record.status == "done"
            assert task not in tripped
    transcript_events = 0
    for record in first.values():
        with Path(record.transcript).open() as handle:
            kinds = [json.loads(line)["event"] for line in handle]
        # the transcript holds every event the agent emitted, plus the Final
        assert len(kinds) - kinds.count("Final") == figures.emitted[record.task]
        transcript_events += len(kinds) - kinds.count("Final")
    return {
        "emitted": sum(figures.emitted.values()),
        "counted_calls": sum(r.tool_calls for r in first.values()),
        "transcript_events": transcript_events,
        "tripped": len(tripped),
    }
