"""Load: 100 concurrent in-process agents x 1,000 events in one real session.

Asserts: no event lost (what each agent emitted = what the coordinator counted in
``state.json`` = ``agent_finished`` in ``events.jsonl`` = the transcript's lines), every
breaker decision right (the loopers stopped at their 4th identical call, nobody else
tripped), and memory bounded: one agent's traced memory after 16,000 events is within
a small slack of its memory after 4,000 (the breaker forgets old call keys).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.breakers.agent import AgentBreaker
from seawall.events import ToolCall, ToolResult
from seawall.model import BreakerLimits
from tests.reliability.load import check_load, run_load

pytestmark = pytest.mark.slow


def test_100_agents_x_1000_events_lose_nothing_and_trip_only_the_loopers(
    tmp_path: Path,
) -> None:
    figures = run_load(tmp_path, agents=100, events=1000, loopers=5)
    totals = check_load(tmp_path / "repo", figures)
    assert totals["tripped"] == 5
    assert totals["emitted"] == totals["transcript_events"]
    assert totals["emitted"] >= 95 * 1000
    print(
        f"\nload: {figures.agents} agents x {figures.events_per_agent} events, "
        f"{totals['emitted']} events in {figures.seconds:.1f}s, "
        f"peak traced memory {figures.peak_bytes / 1e6:.1f} MB"
    )
    assert figures.peak_bytes < 200e6


def test_memory_does_not_grow_with_the_events_processed(tmp_path: Path) -> None:
    """Per-agent state is capped (512 call keys) and the command caches are bounded
    (``lru_cache`` of 4,096 entries in ``seawall.breakers.commands``): once they
    are full, 12,000 more events leave the traced memory where it was."""
    probes = (6000, 7500, 9000)
    figures = run_load(tmp_path, agents=1, events=36_000, loopers=0, probe_steps=probes)
    check_load(tmp_path / "repo", figures)
    at = figures.memory_at
    print(f"\nmemory at steps {probes}: {[at[p] for p in probes]} bytes")
    assert at[9000] - at[6000] < 32 * 1024, at


def test_the_loop_breaker_still_trips_after_forgetting_old_calls() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_tool_calls=100_000))
    for n in range(5000):
        call = ToolCall(call_id=f"c{n}", name="Bash", arguments={"command": f"echo {n}"})
        assert breaker.observe(call) is None
        assert breaker.observe(ToolResult(call_id=f"c{n}", name="Bash", text=str(n))) is None
    trip = None
    for n in range(4):
        call = ToolCall(call_id=f"l{n}", name="Bash", arguments={"command": "ls"})
        trip = trip or breaker.observe(call)
        trip = trip or breaker.observe(ToolResult(call_id=f"l{n}", name="Bash", text="a"))
    assert trip is not None and trip.kind.label == "breaker/loop"
    assert len(breaker.saved().repeats) <= 513
