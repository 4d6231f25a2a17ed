"""End to end through the live tail: a looping agent process is stopped, its trip noted
in BLOCKED.md and events.jsonl, a productive agent beside it runs to its end; then the
wave breaker trips on a stall, survives a save and load, and re-trips after resume."""

from __future__ import annotations

import json
import signal
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

from seawall.breakers import (
    BreakerKind,
    Trip,
    WaveBreaker,
    WaveReport,
    WaveTrigger,
    append_blocked,
    blocked_path,
)
from seawall.breakers.wave import WaveBreakerState
from seawall.codec import from_data, to_data
from seawall.runtime.files import atomic_write_text
from seawall.stagnation import AgentMonitor
from seawall.stagnation.transcript_tail import TranscriptTailer
from seawall.telemetry import BreakerTripped, EventLog, read_events
from tests.integration.runnerkit import anyio_backend

__all__ = ["anyio_backend"]

pytestmark = pytest.mark.anyio


# A fake agent CLI: writes its own Claude Code subagent transcript, one turn at a time.
AGENT = textwrap.dedent(
    """
    import json, sys, time
    path, mode = sys.argv[1], sys.argv[2]

    def line(record):
        out.write(json.dumps(record) + "\\n")
        out.flush()

    def turn(n, *blocks):
        line({"type": "assistant", "isSidechain": True,
              "message": {"id": f"msg_{n}", "role": "assistant", "content": list(blocks)}})

    def result(call_id, text):
        line({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": text}]}})

    with open(path, "a", encoding="utf-8") as out:
        n = 0
        while True:
            n += 1
            if mode == "loop":  # the same call, the same answer, forever
                turn(n, {"type": "tool_use", "id": f"t{n}", "name": "Bash",
                         "input": {"command": "ls src"}})
                result(f"t{n}", "a.py\\nb.py")
            else:  # read, edit, test, then report
                turn(n, {"type": "tool_use", "id": f"t{n}", "name": "Edit",
                         "input": {"file_path": f"src/m{n}.py", "old_string": "a",
                                   "new_string": "b"}})
                result(f"t{n}", "updated")
                if n == 4:
                    turn(99, {"type": "tool_use", "id": "v", "name": "Bash",
                              "input": {"command": "pytest -q"}})
                    result("v", "4 passed")
                    turn(100, {"type": "text", "text": "Done.\\nSTATUS: done — all four"})
                    break
            time.sleep(0.01)
    """
)


async def start(path: Path, mode: str) -> Process:
    return await anyio.open_process([sys.executable, "-c", AGENT, str(path), mode])


async def test_a_looping_agent_is_stopped_and_the_others_go_on(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subagents = tmp_path / "transcripts" / "subagents"
    subagents.mkdir(parents=True)
    log = EventLog(repo / ".seawall" / "s1" / "events.jsonl", session="s1")
    processes: dict[str, Process] = {}
    stopped = anyio.Event()

    def monitor_for(agent: str, _path: Path) -> AgentMonitor:
        return AgentMonitor(session="s1", wave=1, agent=agent, workspace=repo, repo=repo,
                            event_log=log)  # fmt: skip

    def on_trip(monitor: AgentMonitor, trip: Trip) -> None:
        processes[monitor.agent].send_signal(signal.SIGKILL)  # stop it at once
        append_blocked(repo, "s1", trip, agent=monitor.agent, wave=1,
                       snapshot="wip: snapshot left to the git layer")  # fmt: skip
        stopped.set()

    tailer = TranscriptTailer(session="s1", repo=repo, directory=subagents,
                              monitor_for=monitor_for, on_trip=on_trip, interval=0.01)  # fmt: skip
    async with anyio.create_task_group() as group:
        await group.start(tailer.run)
        processes["looper"] = await start(subagents / "agent-looper.jsonl", "loop")
        processes["worker"] = await start(subagents / "agent-worker.jsonl", "work")
        with anyio.fail_after(20):
            await stopped.wait()
            codes = {name: await process.wait() for name, process in processes.items()}
        group.cancel_scope.cancel()
    for process in processes.values():
        await process.aclose()
    findings = tailer.finish()

    assert codes == {"looper": -signal.SIGKILL, "worker": 0}
    looper = tailer.monitors["looper"].breaker
    assert looper.trip is not None and looper.trip.kind is BreakerKind.LOOP
    worker = tailer.monitors["worker"]
    assert worker.breaker.trip is None and findings["worker"] == ()
    assert worker.breaker.statistics().edits_since_verify == 0  # the passing test counted
    tripped = list(read_events(log.path, BreakerTripped))
    assert [(r.agent, r.breaker) for r in tripped] == [("looper", BreakerKind.LOOP)]
    note = blocked_path(repo, "s1").read_text()
    assert "agent `looper` · breaker/loop" in note and "`ls src`" in note

    # The wave merged the worker's change; then two idle waves stall the session.
    state_file = repo / ".seawall" / "s1" / "state.json"
    breaker = WaveBreaker()
    assert breaker.record(WaveReport(wave=1, merged=1, new_commits=1)) is None
    assert breaker.record(WaveReport(wave=2)) is None
    trip = breaker.record(WaveReport(wave=3))
    assert trip is not None and trip.trigger is WaveTrigger.STALL
    atomic_write_text(state_file, json.dumps({"wave_breaker": to_data(breaker.state())}))

    # `seawall resume`: load, clear the trip keeping the counters, and the same stall
    # re-trips at once on the next idle wave.
    saved = json.loads(state_file.read_text())["wave_breaker"]
    restored = WaveBreaker(state=from_data(saved, WaveBreakerState))
    assert restored.tripped and restored.trip is not None
    assert "seawall resume" in restored.trip.line()
    assert restored.resume() is None
    assert restored.state().tripped is False
    again = restored.record(WaveReport(wave=4))
    assert again is not None and again.trigger is WaveTrigger.STALL
    assert again.checkpoint.wave == 4
