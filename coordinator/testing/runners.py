"""A conformance kit for the ``AgentRunner`` port: the contract as pytest tests.

A third-party runner proves it keeps the contract by subclassing ``AgentRunnerContract``
in its own test suite and providing a ``runner`` fixture (needs pytest and anyio's
pytest plugin, which ships with anyio)::

    from seawall.testing.runners import AgentRunnerContract

    class TestMyRunner(AgentRunnerContract):
        @pytest.fixture
        def runner(self) -> AgentRunner:
            return MyRunner(...)

The runner under test must behave by task id:

- ``"finish"``: the agent finishes promptly by itself, successfully, with a final
  message that contains ``STATUS: done``;
- ``"hang"``: the agent says something at once (one message, so an event reaches the
  callback while it runs), then keeps working (at least a minute) until it is stopped.

Override ``request()`` to add what your runner needs (environment, options), the
``workspace`` fixture to prepare the agent's directory, and ``stop_bound`` when your
runner needs longer than 10 seconds to stop an agent.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from seawall.events import Event, Final
from seawall.runner import AgentRequest, AgentResult, AgentRunner

__all__ = ["AgentRunnerContract"]


def _ignore(event: Event) -> None:
    """An event callback that drops events."""


class AgentRunnerContract:
    """The duties of ``AgentRunner.run()`` as tests; see the module docstring."""

    pytestmark = pytest.mark.anyio

    FINISH = "finish"
    HANG = "hang"
    stop_bound: float = 10.0
    """Seconds a runner may take to stop an agent (on top of the time limit)."""
    first_event_bound: float = 2.0
    """Seconds within which the first event of an agent that speaks at once must reach
    the callback (raise it for a runner whose agents start far away, on a cluster)."""

    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"

    @pytest.fixture
    def runner(self) -> AgentRunner:
        raise NotImplementedError("provide a `runner` fixture in your AgentRunnerContract subclass")

    @pytest.fixture
    def workspace(self, tmp_path: Path) -> Path:
        path = tmp_path / "workspace"
        path.mkdir()
        return path

    def request(self, task_id: str, workspace: Path, **overrides: Any) -> AgentRequest:
        """The request the kit sends; override to add your runner's needs."""
        request = AgentRequest(
            task_id=task_id,
            prompt=f"Conformance task {task_id}. End with STATUS: done",
            workspace=workspace,
            session="conformance",
            wave=1,
            max_turns=5,
        )
        return replace(request, **overrides)

    async def test_finish_returns_a_successful_result(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        events: list[Event] = []
        result = await runner.run(self.request(self.FINISH, workspace), events.append)
        assert isinstance(result, AgentResult), (
            f"run() returned {type(result).__name__}, not an AgentResult"
        )
        assert result.task_id == self.FINISH, (
            f"the result is for task {result.task_id!r}, the request for {self.FINISH!r}: "
            "copy request.task_id into the result"
        )
        assert not (result.is_error or result.timed_out or result.cancelled), (
            f"an agent that finished by itself came back as a failed run: {result}"
        )
        assert "STATUS: done" in result.final_text, (
            f"the agent's last message said STATUS: done and final_text is "
            f"{result.final_text!r}: final_text must hold the agent's final message, the "
            "coordinator reads the status from it"
        )
        assert result.exit_code in (0, None), f"a successful run with exit code {result.exit_code}"
        assert result.duration_s >= 0, f"a negative duration: {result.duration_s}"

    async def test_async_emit_receives_the_same_events_as_a_sync_one(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        sync_events: list[Event] = []
        async_events: list[Event] = []

        async def collect(event: Event) -> None:
            await anyio.lowlevel.checkpoint()
            async_events.append(event)

        await runner.run(self.request(self.FINISH, workspace), sync_events.append)
        await runner.run(self.request(self.FINISH, workspace), collect)
        assert [type(e) for e in sync_events] == [type(e) for e in async_events], (
            "the same agent gave other events to an async callback than to a sync one: "
            "await the callback's result when it is awaitable (seawall.runner's emit helper)"
        )

    async def test_counts_in_the_result_match_the_events(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        events: list[Event] = []
        result = await runner.run(self.request(self.FINISH, workspace), events.append)
        finals = [e for e in events if isinstance(e, Final)]
        assert len(finals) <= 1, f"{len(finals)} Final events for one run: emit one at most"
        calls = sum(1 for e in events if type(e).__name__ == "ToolCall")
        turns = sum(1 for e in events if type(e).__name__ == "Turn")
        assert result.tool_calls == calls, (
            f"the result counts {result.tool_calls} tool calls and the events hold {calls}: "
            "the coordinator checks budgets from one and reports the other"
        )
        assert result.turns == turns, (
            f"the result counts {result.turns} turns and the events hold {turns} Turn events"
        )

    async def test_transcript_is_kept_at_the_requested_path(
        self, runner: AgentRunner, workspace: Path, tmp_path: Path
    ) -> None:
        transcript = tmp_path / "agents" / "finish.log"
        request = self.request(self.FINISH, workspace, transcript_path=transcript)
        result = await runner.run(request, _ignore)
        assert result.transcript_path == transcript, (
            f"the request asked for the transcript at {transcript} and the result points at "
            f"{result.transcript_path}"
        )
        assert transcript.is_file(), (
            f"no transcript was written at the requested path {transcript}: replay, the "
            "spiral review and carryover evidence read it"
        )

    async def test_time_limit_returns_a_timed_out_result(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        request = self.request(self.HANG, workspace, time_limit=0.5)
        with anyio.fail_after(0.5 + self.stop_bound):
            result = await runner.run(request, _ignore)
        assert result.timed_out and not result.cancelled, (
            f"an agent past its time limit came back as timed_out={result.timed_out}, "
            f"cancelled={result.cancelled}: a time limit is timed_out, a stop is cancelled"
        )
        assert result.is_error and result.interrupted, (
            f"a timed-out run must be an error and interrupted: {result}"
        )

    async def test_stop_signal_returns_a_cancelled_result(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        request = self.request(self.HANG, workspace)
        results: list[AgentResult] = []

        async def run() -> None:
            results.append(await runner.run(request, _ignore))

        with anyio.fail_after(self.stop_bound + 1):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await anyio.sleep(0.3)
                request.stop.stop("breaker: loop")
        (result,) = results
        assert result.cancelled and not result.timed_out, (
            f"a stopped agent came back as cancelled={result.cancelled}, "
            f"timed_out={result.timed_out}: honour request.stop while the agent runs"
        )
        assert result.stop_reason == "breaker: loop", (
            f"the stop's reason came back as {result.stop_reason!r}: copy request.stop's "
            "reason into the result"
        )
        assert result.is_error, "a stopped run must be an error (is_error=True)"

    async def test_stop_from_the_event_callback_is_honoured(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        limit = self.first_event_bound
        request = self.request(self.HANG, workspace, time_limit=limit)
        started = anyio.current_time()
        seen: list[float] = []  # when each event reached the callback

        def trip(event: Event) -> None:
            seen.append(anyio.current_time() - started)
            request.stop.stop("tripped on first event")

        with anyio.fail_after(limit + self.stop_bound):
            result = await runner.run(request, trip)
        seen = [at for at in seen if at < limit]
        assert seen, (
            "the 'hang' agent sends a message at once, and the runner emitted no event in "
            f"the {limit:.0f} s before its time limit: it buffers the agent's events until "
            "the agent exits, so nothing can watch or stop a running agent (emit each event "
            "as its line arrives)"
        )
        assert result.cancelled and not result.timed_out, (
            f"a stop asked for from the event callback came back as cancelled="
            f"{result.cancelled}, timed_out={result.timed_out}: honour request.stop while "
            "the agent runs, not only at its time limit"
        )
        assert result.stop_reason == "tripped on first event", (
            f"the stop's reason came back as {result.stop_reason!r}: copy request.stop's "
            "reason into the result, the coordinator reports it"
        )

    async def test_stop_before_run_returns_cancelled(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        request = self.request(self.HANG, workspace)
        request.stop.stop("wave aborted")
        with anyio.fail_after(self.stop_bound):
            result = await runner.run(request, _ignore)
        assert result.cancelled and result.stop_reason == "wave aborted", (
            f"a request stopped before run() came back as cancelled={result.cancelled}, "
            f"stop_reason={result.stop_reason!r}: check request.stop before starting anything"
        )

    async def test_outer_cancellation_propagates(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        returned: list[AgentResult] = []
        with anyio.fail_after(self.stop_bound + 1):
            with anyio.move_on_after(0.3) as scope:
                returned.append(await runner.run(self.request(self.HANG, workspace), _ignore))
        assert scope.cancelled_caught, (
            "an outer cancellation did not reach the caller: run() swallowed it (never catch "
            "the cancellation exception without re-raising it)"
        )
        assert returned == [], "run() returned a result after its caller was cancelled"

    async def test_concurrent_runs_keep_their_own_results(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        results: dict[int, AgentResult] = {}

        async def run(n: int) -> None:
            folder = workspace / f"agent-{n}"
            folder.mkdir()
            results[n] = await runner.run(self.request(self.FINISH, folder), _ignore)

        with anyio.fail_after(self.stop_bound * 3):
            async with anyio.create_task_group() as group:
                for n in range(4):
                    group.start_soon(run, n)
        assert sorted(results) == [0, 1, 2, 3], (
            f"four concurrent runs gave results for {sorted(results)}"
        )
        failed = {n: r for n, r in results.items() if r.is_error}
        assert not failed, (
            f"concurrent runs failed where one alone succeeds: {failed} (state shared "
            "between runs of one runner?)"
        )
