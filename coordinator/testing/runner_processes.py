"""The process half of the runner kit: what a runner of an agent *process* must do.

Subclass ``ProcessRunnerContract`` (it includes every ``AgentRunnerContract`` test) for
a runner that starts a subprocess. Besides ``finish`` and ``hang``, the agent under
test must behave by task id:

- ``"grandchild"``: starts a child that starts a grandchild, writes the grandchild's pid
  to ``grandchild.pid`` in its working directory, then works until stopped;
- ``"ignore-term"``: ignores SIGTERM and works until it is killed;
- ``"turns"``: sends three assistant messages (three turns), then finishes;
- ``"bad-start"``: writes why it cannot start to stderr and exits non-zero at once;
- ``"fail-with-reason"``: sends one message, then ends with the final message
  ``STATUS: failed — legacy headers rejected`` (as the CLI reports a failed run: an
  error result, or the text on its own) and exits 1;
- ``"leave-child"``: starts a child that keeps running (``sleep 300``, its output to
  ``/dev/null``), writes the child's pid to ``child.pid``, then finishes normally, as
  ``finish`` does (an agent that left a dev server or a watcher behind);
- ``"unmapped-write"``: calls a tool seawall has no name for, ``frobnicate_file``
  with ``{"path": "unmapped.txt"}`` (in the CLI's own output format; the tool writes
  that file), then works until stopped. The kit runs it in a strict wave (a real scope
  manifest): the runner must refuse the call (stop the agent, or have a layer inside
  the CLI deny it), never let it pass unseen.

Each check names the bug it catches.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from seawall.events import Event, ToolCall, ToolResult, Turn
from seawall.model import Enforcement, Isolation
from seawall.runner import AgentResult, AgentRunner
from seawall.runtime.processes import process_alive
from seawall.scope.manifest import (
    AgentScope,
    ScopeManifest,
    manifest_digest,
    write_manifest,
)
from seawall.testing.runners import AgentRunnerContract

__all__ = ["ProcessRunnerContract"]


async def _poll(done: Callable[[], bool], seconds: float) -> None:
    """Wait until ``done()`` (a file or a process, nothing to await) or ``seconds`` pass."""
    for _ in range(int(seconds / 0.05) + 1):
        if done():
            return
        await anyio.sleep(0.05)


class ProcessRunnerContract(AgentRunnerContract):
    """The ``AgentRunnerContract`` plus the duties of a runner of agent processes."""

    GRANDCHILD = "grandchild"
    IGNORE_TERM = "ignore-term"
    TURNS = "turns"
    BAD_START = "bad-start"
    FAIL_WITH_REASON = "fail-with-reason"
    FAILURE_REASON = "legacy headers rejected"
    LEAVE_CHILD = "leave-child"
    UNMAPPED_WRITE = "unmapped-write"
    UNMAPPED_TOOL = "frobnicate_file"

    async def test_a_stop_ends_the_agents_grandchildren_too(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        request = self.request(self.GRANDCHILD, workspace)
        pidfile = workspace / "grandchild.pid"
        results: list[AgentResult] = []

        async def run() -> None:
            results.append(await runner.run(request, lambda event: None))

        with anyio.fail_after(20 + self.stop_bound):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await _poll(lambda: pidfile.is_file() and bool(pidfile.read_text().strip()), 20)
                request.stop.stop("kit: stop")
        pid = int(pidfile.read_text())
        await _poll(lambda: not process_alive(pid), self.stop_bound)
        survived = process_alive(pid)
        if survived:
            os.kill(pid, 9)
        assert not survived, (
            f"the agent's grandchild (pid {pid}) outlived the stop by {self.stop_bound:.0f}s: "
            "the runner killed only its direct child; start the agent in a process group of "
            "its own and signal the whole group"
        )
        assert results and results[0].cancelled

    async def test_an_agent_that_ignores_sigterm_is_killed(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        request = self.request(self.IGNORE_TERM, workspace, time_limit=1.0)
        started = time.monotonic()
        with anyio.move_on_after(1.0 + self.stop_bound + 5) as scope:
            result = await runner.run(request, lambda event: None)
        assert not scope.cancelled_caught, (
            f"an agent that ignores SIGTERM was still running {1.0 + self.stop_bound + 5:.0f}s "
            "after its 1s time limit: after a grace period the runner must SIGKILL it"
        )
        assert result.timed_out, result
        elapsed = time.monotonic() - started
        assert elapsed < 1.0 + self.stop_bound, f"stopping took {elapsed:.1f}s"

    async def test_every_assistant_message_is_a_turn(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        events: list[Event] = []
        result = await runner.run(self.request(self.TURNS, workspace), events.append)
        turns = [e for e in events if isinstance(e, Turn)]
        assert len(turns) == 3, (
            f"three assistant messages gave {len(turns)} Turn event(s): the coordinator "
            "counts turns from these events, so its turn limit would be wrong"
        )
        assert result.turns == 3, f"the result says {result.turns} turns for 3 messages"

    async def test_a_failed_start_keeps_the_agents_stderr(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        with anyio.fail_after(self.stop_bound + 10):
            result = await runner.run(self.request(self.BAD_START, workspace), lambda e: None)
        assert result.is_error, "an agent that exited non-zero at start is a failed run"
        assert result.exit_code not in (0, None), f"exit code {result.exit_code}"
        assert "cannot start" in result.stderr_tail, (
            f"the agent said why it could not start on stderr, and the result's stderr_tail "
            f"is {result.stderr_tail!r}: keep the tail of stderr, it is the only explanation"
        )

    async def test_a_failed_agent_keeps_its_final_text(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        with anyio.fail_after(self.stop_bound + 10):
            result = await runner.run(
                self.request(self.FAIL_WITH_REASON, workspace), lambda event: None
            )
        assert result.is_error, (
            f"an agent that said STATUS: failed and exited {result.exit_code} came back as "
            "a successful run (is_error=False): a non-zero exit is a failed run"
        )
        assert self.FAILURE_REASON in result.final_text, (
            f"the agent's last message said why it failed ({self.FAILURE_REASON!r}) and it "
            f"exited non-zero; the result's final_text is {result.final_text!r}: keep the "
            "final text of a failed run, it is the reason the status parser, STATE.md and "
            "the carryover issue show (without it the task reads 'no STATUS line')"
        )

    async def test_a_finished_agent_leaves_no_process_behind(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        pidfile = workspace / "child.pid"
        with anyio.fail_after(self.stop_bound + 20):
            result = await runner.run(self.request(self.LEAVE_CHILD, workspace), lambda e: None)
        assert not result.is_error, (
            f"the 'leave-child' agent finishes normally, and the result is a failed run: {result}"
        )
        assert pidfile.is_file(), (
            "the 'leave-child' agent under test wrote no child.pid in its working directory"
        )
        pid = int(pidfile.read_text())
        await _poll(lambda: not process_alive(pid), self.stop_bound)
        survived = process_alive(pid)
        if survived:
            os.kill(pid, 9)
        assert not survived, (
            f"the agent exited normally and its child (pid {pid}) was still running "
            f"{self.stop_bound:.0f}s after the run returned: once the agent exits, end what "
            "is left of its process group (a dev server, a watcher) before returning, or "
            "every session leaks processes"
        )

    async def test_an_unmapped_write_tool_is_refused_in_strict(
        self, runner: AgentRunner, workspace: Path
    ) -> None:
        manifest = write_manifest(
            ScopeManifest(
                session="kit-strict",
                wave=1,
                enforcement=Enforcement.STRICT,
                isolation=Isolation.NONE,
                repo=str(workspace.parent),
                agents=(
                    AgentScope(
                        task_id=self.UNMAPPED_WRITE, paths=("src/**",), workspace=str(workspace)
                    ),
                ),
            )
        )
        request = self.request(
            self.UNMAPPED_WRITE,
            workspace,
            session="kit-strict",
            manifest=manifest,
            manifest_sha256=manifest_digest(manifest),
            time_limit=10.0,
        )
        events: list[Event] = []
        with anyio.fail_after(10.0 + self.stop_bound + 5):
            result = await runner.run(request, events.append)
        calls = [e for e in events if isinstance(e, ToolCall)]
        assert calls, (
            f"the agent called {self.UNMAPPED_TOOL} and the runner emitted no ToolCall for it"
        )
        denied = {e.call_id for e in events if isinstance(e, ToolResult) and e.is_error} & {
            c.call_id for c in calls
        }
        stopped = result.cancelled and self.UNMAPPED_TOOL in result.stop_reason
        assert stopped or denied, (
            f"in a strict wave the agent's {self.UNMAPPED_TOOL!r} call, a tool seawall has no "
            "name for, was let through unseen (result: "
            f"cancelled={result.cancelled}, timed_out={result.timed_out}, "
            f"stop_reason={result.stop_reason!r}): map the CLI's tool names to canonical ones "
            "and stop the agent at an unknown tool that may write (a StreamingCliRunner does "
            "both through its tool_names)"
        )
