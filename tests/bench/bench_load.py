"""Load benchmark: one session of 100 concurrent in-process agents x 1,000 events each.

Figures: wall time per 1,000 events (baseline: the same agents emitting into a no-op
callback, no coordinator) and peak traced memory of the whole session.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import anyio

from seawall.events import Message, ToolCall, ToolResult, Turn
from tests.bench.harness import BenchResult
from tests.reliability.load import check_load, run_load

AGENTS = 100
EVENTS = 1000


async def _bare(agents: int, steps: int) -> None:
    async def noop(event: object) -> None:
        return None

    async def agent(n: int) -> None:
        for step in range(steps):
            call_id = f"{n}-{step}"
            for event in (
                Turn(number=step),
                ToolCall(call_id=call_id, name="Bash", arguments={"command": f"echo {step}"}),
                ToolResult(call_id=call_id, name="Bash", text=str(step)),
                Message(text="done", turn=step),
            ):
                await noop(event)
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        for n in range(agents):
            group.start_soon(agent, n)


def run() -> list[BenchResult]:
    with tempfile.TemporaryDirectory() as tmp:
        figures = run_load(Path(tmp), agents=AGENTS, events=EVENTS, loopers=5)
        totals = check_load(Path(tmp) / "repo", figures)
    started = time.perf_counter()
    anyio.run(_bare, AGENTS, EVENTS // 4)
    bare = time.perf_counter() - started
    per_k = figures.seconds / (totals["emitted"] / 1000)
    return [
        BenchResult(
            name=f"session, {AGENTS} agents x {EVENTS} events",
            figure=per_k,
            baseline=bare / (AGENTS * EVENTS / 1000),
            unit="s per 1k events",
            baseline_name="bare anyio emit loop",
            note=f"{totals['emitted']} events, none lost, {totals['tripped']} loopers tripped",
        ),
        BenchResult(
            name="session peak traced memory",
            figure=figures.peak_bytes / 1e6,
            baseline=AGENTS * EVENTS * 200 / 1e6,
            unit="MB",
            baseline_name="200 B per event kept",
        ),
    ]


if __name__ == "__main__":
    for result in run():
        print(result.line())
