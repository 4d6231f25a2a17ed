"""The port's values and helpers: AgentRequest, StopSignal, RunCounter, Emitter, build_runner."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from seawall.errors import ConfigurationError
from seawall.events import Event, Final, Message, ToolCall, Turn, Usage
from seawall.model import RunnerSpec
from seawall.runner import AgentRequest, Emitter, RunCounter, StopSignal, build_runner


def test_request_env_is_frozen_and_seawall_env_complete() -> None:
    source = {"A": "1"}
    request = AgentRequest(
        task_id="t", prompt="p", workspace=Path("/w"), session="s", wave=3, max_turns=7, env=source
    )
    source["A"] = "changed"
    assert dict(request.env) == {"A": "1"}
    with pytest.raises(TypeError):
        request.env["B"] = "2"  # type: ignore[index]
    assert request.seawall_env() == {
        "SEAWALL_SESSION": "s",
        "SEAWALL_WAVE": "3",
        "SEAWALL_TASK_ID": "t",
        "SEAWALL_WORKSPACE": "/w",
        "SEAWALL_MAX_TURNS": "7",
    }
    assert (
        "SEAWALL_MAX_TURNS"
        not in AgentRequest(task_id="t", prompt="", workspace=Path()).seawall_env()
    )
    with pytest.raises(ConfigurationError, match="time_limit"):
        AgentRequest(task_id="t", prompt="", workspace=Path(), time_limit=0)


def test_requests_compare_without_their_stop_signal() -> None:
    a = AgentRequest(task_id="t", prompt="p", workspace=Path())
    b = AgentRequest(task_id="t", prompt="p", workspace=Path())
    assert a == b and a.stop is not b.stop


def test_stop_signal_first_reason_wins_and_wait_returns_it() -> None:
    signal = StopSignal()
    assert (signal.reason, signal.is_set) == (None, False)

    async def main() -> str:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.sleep, 0)
            signal.stop("loop breaker")
            signal.stop("later")
        return await signal.wait()

    assert anyio.run(main) == "loop breaker"
    assert signal.is_set and signal.reason == "loop breaker"


def test_stop_signal_wakes_a_waiter() -> None:
    signal = StopSignal()
    woken: list[str] = []

    async def main() -> None:
        async with anyio.create_task_group() as group:

            async def waiter() -> None:
                woken.append(await signal.wait())

            group.start_soon(waiter)
            await anyio.sleep(0.01)
            assert woken == []
            signal.stop("now")

    anyio.run(main)
    assert woken == ["now"]


def test_run_counter_counts_usage_once_per_message_and_final_cost_wins() -> None:
    now = [100.0]
    counter = RunCounter(clock=lambda: now[0])
    events: list[Event] = [
        Turn(number=1),
        Usage(message_id="m1", input_tokens=10, output_tokens=5, cost_usd=0.1),
        Usage(message_id="m1", input_tokens=10, output_tokens=5, cost_usd=0.1),
        ToolCall(call_id="1", name="Read"),
        Turn(number=2),
        Usage(message_id="m2", input_tokens=1, cost_usd=0.2),
        ToolCall(call_id="2", name="Bash"),
        Message(text="x"),
    ]
    for event in events:
        counter.observe(event)
    now[0] = 112.5
    snap = counter.snapshot()
    assert (snap.turns, snap.tool_calls, snap.input_tokens, snap.output_tokens) == (2, 2, 11, 5)
    assert snap.cost_usd == pytest.approx(0.3)
    assert (snap.elapsed_s, snap.last_tool) == (12.5, "Bash")
    counter.observe(Final(text="done", cost_usd=0.9))
    assert counter.cost_usd == 0.9 and counter.final is not None


def test_emitter_calls_sync_and_awaits_async_callbacks() -> None:
    seen: list[str] = []

    async def async_emit(event: Event) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append("async")

    async def main() -> None:
        await Emitter(lambda event: seen.append("sync"))(Turn(number=1))
        emitter = Emitter(async_emit)
        await emitter(ToolCall(call_id="1", name="Edit"))
        assert emitter.counter.tool_calls == 1

    anyio.run(main)
    assert seen == ["sync", "async"]


def test_build_runner_errors() -> None:
    with pytest.raises(ConfigurationError, match="unknown runner 'nope'"):
        build_runner(RunnerSpec(name="x", kind="nope"))
    with pytest.raises(ConfigurationError, match="cannot be configured from a plan"):
        build_runner(RunnerSpec(name="x", kind="callable"))


@pytest.mark.parametrize(
    "name", ["callable", "scripted", "command", "claude-code", "codex", "opencode"]
)
def test_registry_names_resolve_to_agent_runners(name: str) -> None:
    from seawall.registry import RUNNER_GROUP, resolve
    from seawall.runner import AgentRunner

    target = resolve(RUNNER_GROUP, name)
    assert isinstance(target, type) and issubclass(target, AgentRunner)
