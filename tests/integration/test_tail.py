"""Live tailing of agent-written transcripts: growth, partial lines, kills, one per session."""

from __future__ import annotations

import json
import signal
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from seawall.breakers import BreakerKind, Trip
from seawall.errors import SessionLockedError
from seawall.model import BreakerLimits
from seawall.stagnation import AgentMonitor, Finding, Pattern
from seawall.stagnation.transcript_tail import TranscriptTailer, agent_id
from seawall.telemetry import BreakerTripped, EventLog, StagnationDetected, read_events
from tests.integration.runnerkit import anyio_backend

__all__ = ["anyio_backend"]

pytestmark = pytest.mark.anyio


_seq = iter(range(1_000_000))


def assistant(*blocks: dict[str, Any]) -> str:
    n = next(_seq)
    return json.dumps({
        "type": "assistant", "isSidechain": True, "agentId": "x", "uuid": f"u{n}",
        "message": {"id": f"msg_{n}", "role": "assistant", "content": list(blocks)},
    })  # fmt: skip


def user_result(call_id: str, text: str, *, error: bool = False) -> str:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": error}
    return json.dumps({"type": "user", "message": {"role": "user", "content": [block]}})


def tool_use(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


class Setup:
    def __init__(self, tmp_path: Path, limits: BreakerLimits | None = None) -> None:
        self.repo = tmp_path / "repo"
        self.repo.mkdir()
        self.subagents = tmp_path / "session" / "subagents"
        self.subagents.mkdir(parents=True)
        self.events_path = self.repo / ".seawall" / "s1" / "events.jsonl"
        self.log = EventLog(self.events_path, session="s1")
        self.limits = limits
        self.trips: list[tuple[str, Trip]] = []
        self.found: list[Finding] = []
        self.need = 1
        self.arrived: anyio.Event | None = None

    def monitor_for(self, agent: str, path: Path) -> AgentMonitor | None:
        if agent.startswith("acompact"):
            return None
        monitor = AgentMonitor(session="s1", wave=1, agent=agent, workspace=self.repo,
                               repo=self.repo, limits=self.limits, event_log=self.log)  # fmt: skip
        monitor.add_listener(self._found)
        return monitor

    def _found(self, finding: Finding) -> None:
        self.found.append(finding)
        if self.arrived is not None and len(self.found) >= self.need:
            self.arrived.set()

    def expect(self, count: int) -> anyio.Event:
        self.need = count
        self.arrived = anyio.Event()
        return self.arrived

    def tailer(self, interval: float = 0.01) -> TranscriptTailer:
        return TranscriptTailer(
            session="s1", repo=self.repo, directory=self.subagents, monitor_for=self.monitor_for,
            interval=interval, on_trip=lambda m, trip: self.trips.append((m.agent, trip)),
        )  # fmt: skip

    def records(self) -> list[StagnationDetected]:
        return list(read_events(self.events_path, StagnationDetected))

    def trips_recorded(self) -> list[BreakerTripped]:
        return list(read_events(self.events_path, BreakerTripped))


def append(path: Path, data: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(data)


def test_agent_ids_come_from_file_names() -> None:
    assert agent_id(Path("/x/subagents/agent-a881341.jsonl")) == "a881341"
    assert agent_id(Path("agent-acompact-946d2b.jsonl")) == "acompact-946d2b"


def test_a_growing_file_is_read_once_and_partial_lines_wait(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    tailer = setup.tailer()
    path = setup.subagents / "agent-a1.jsonl"
    line = assistant(text("Working.\nSTATUS: partial — parser done | REMAINING: tests"))
    append(path, line[:40])
    assert tailer.poll() == 0
    assert setup.records() == []
    append(path, line[40:] + "\n")
    assert tailer.poll() == 1
    assert tailer.poll() == 0
    records = setup.records()
    assert [r.pattern for r in records] == ["status-partial"]
    assert records[0].agent == "a1" and records[0].source == "tail"
    assert tailer.statistics().lines == 1


def test_two_agents_get_two_monitors_and_an_ignored_file_none(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    tailer = setup.tailer()
    for name in ("agent-a1.jsonl", "agent-a2.jsonl", "agent-acompact-9.jsonl"):
        append(setup.subagents / name, assistant(tool_use(f"{name}-r", "Read",
               file_path="/r/shared.py", offset=0, limit=10)) + "\n")  # fmt: skip
    tailer.poll()
    assert sorted(tailer.monitors) == ["a1", "a2"]


def test_two_agents_paging_one_file_is_not_a_spiral(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    tailer = setup.tailer()
    for n in range(4):
        name = f"agent-a{n % 2}.jsonl"
        read = tool_use(f"c{n}", "Read", file_path="/r/big.py", offset=n * 100, limit=100)
        append(setup.subagents / name, assistant(read) + "\n")
        append(setup.subagents / name, user_result(f"c{n}", f"page {n}") + "\n")
    findings = tailer.finish()
    assert findings == {"a0": (), "a1": ()}


def test_a_truncated_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    tailer = setup.tailer()
    path = setup.subagents / "agent-a1.jsonl"
    append(path, assistant(text("first")) + "\n" + assistant(text("second")) + "\n")
    assert tailer.poll() == 2
    path.write_text(assistant(text("STATUS: failed — gave up")) + "\n")
    assert tailer.poll() == 1
    assert tailer.statistics().restarts == 1
    assert [r.pattern for r in setup.records()] == ["status-partial"]


def test_a_loop_trips_through_the_tail(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    tailer = setup.tailer()
    path = setup.subagents / "agent-a1.jsonl"
    for n in range(4):
        append(path, assistant(tool_use(f"t{n}", "Bash", command="ls src")) + "\n")
        append(path, user_result(f"t{n}", "a.py\nb.py") + "\n")
    tailer.poll()
    assert [(agent, trip.kind) for agent, trip in setup.trips] == [("a1", BreakerKind.LOOP)]
    tripped = setup.trips_recorded()
    assert len(tripped) == 1 and tripped[0].breaker is BreakerKind.LOOP
    assert tripped[0].agent == "a1" and tripped[0].snapshot is True


async def test_one_tailer_per_session(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    async with anyio.create_task_group() as group:
        await group.start(setup.tailer().run)
        with pytest.raises(SessionLockedError, match="s1"):
            await setup.tailer().run()
        group.cancel_scope.cancel()
    async with anyio.create_task_group() as group:  # released on cancel: a new one may start
        await group.start(setup.tailer().run)
        group.cancel_scope.cancel()


WRITER = textwrap.dedent(
    """
    import sys, time
    path, lines = sys.argv[1], sys.argv[2:]
    with open(path, "a", encoding="utf-8") as out:
        for line in lines:
            out.write(line + "\\n")
            out.flush()
            time.sleep(0.02)
        out.write('{"type": "assistant", "message": {"id": "cut')  # killed mid-line
        out.flush()
        print("ready", flush=True)
        time.sleep(60)
    """
)


async def test_records_survive_the_agent_being_killed(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    path = setup.subagents / "agent-a7.jsonl"
    lines = [
        assistant(tool_use("g1", "Bash", command="git add -A && git commit -m 'wip'")),
        user_result("g1", "[main 1a2b3c4] wip"),
        assistant(text("Ran out of turns.\nSTATUS: partial — half done | REMAINING: docs")),
    ]
    tailer = setup.tailer()
    arrived = setup.expect(3)
    async with anyio.create_task_group() as group:
        await group.start(tailer.run)
        async with await anyio.open_process(
            [sys.executable, "-c", WRITER, str(path), *lines]
        ) as process:
            assert process.stdout is not None
            ready = b""
            with anyio.fail_after(10):
                while not ready.endswith(b"\n"):  # a pipe may deliver the line in pieces
                    ready += await process.stdout.receive()
            assert ready == b"ready\n"
            process.kill()
            await process.wait()
        with anyio.fail_after(5):
            await arrived.wait()
        group.cancel_scope.cancel()
    assert process.returncode == -signal.SIGKILL
    patterns = sorted(r.pattern for r in setup.records())
    # `git add -A && git commit` is two kinds of write: each is recorded
    assert patterns == [Pattern.GIT_WRITE.value, Pattern.GIT_WRITE.value,
                        Pattern.STATUS_PARTIAL.value]  # fmt: skip
    findings = tailer.finish()  # the cut last line is not JSON: skipped, nothing raised
    assert len(findings["a7"]) == 3


async def test_a_line_is_recorded_within_a_poll_interval(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    path = setup.subagents / "agent-a1.jsonl"
    path.touch()
    tailer = setup.tailer(interval=0.02)
    arrived = setup.expect(1)
    async with anyio.create_task_group() as group:
        await group.start(tailer.run)
        start = anyio.current_time()
        append(path, assistant(text("STATUS: failed — cannot build")) + "\n")
        with anyio.fail_after(2):
            await arrived.wait()
        latency = anyio.current_time() - start
        assert len(setup.records()) == 1
        group.cancel_scope.cancel()
    assert latency < 1.0
