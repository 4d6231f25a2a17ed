"""The progress display: a live table in a terminal, plain lines otherwise."""

from __future__ import annotations

import io
import json

import anyio

from seawall.report.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    clock = Clock()
    progress = Progress(out, live=False, clock=clock)
    progress.wave_started(2, "worktree", "warn", ["api", "docs"])
    progress.update("api", turns=3, tool_calls=7, cost_usd=0.25, last_tool="Edit")
    clock.now += 4.5
    progress.finished("api", "finished")
    text = out.getvalue()
    assert "wave 2: 2 agent(s), worktree, enforcement warn" in text
    assert "W2 api: finished after 3 turns, 7 tool calls, $0.25, 4.5s" in text
    assert "\x1b[" not in text  # no terminal control codes in a log


def test_live_table_redraws_in_place() -> None:
    out = io.StringIO()
    clock = Clock()
    progress = Progress(out, live=True, interval=0.0, clock=clock)
    progress.wave_started(1, "none", "strict", ["api"])
    progress.update("api", turns=1, tool_calls=2, last_tool="Bash")
    progress.update("api", turns=2, tool_calls=5, last_tool="Edit")
    text = out.getvalue()
    assert "agent" in text and "last tool" in text
    assert "\x1b[" in text  # moved the cursor up to redraw
    last_table = text.rsplit("agent ", 1)[-1]
    assert "Edit" in last_table and "    5" in last_table


def test_updates_for_unknown_agents_are_ignored() -> None:
    out = io.StringIO()
    progress = Progress(out, live=False)
    progress.update("ghost", turns=1)
    progress.finished("ghost", "done")
    assert out.getvalue() == ""


def test_heartbeats_name_each_running_agent_without_a_terminal() -> None:
    out = io.StringIO()
    clock = Clock()
    progress = Progress(out, live=False, clock=clock)
    progress.wave_started(1, "worktree", "strict", ["api", "docs"])
    progress.update("api", turns=2, tool_calls=3, cost_usd=0.1, last_tool="Read")
    progress.finished("docs", "finished")
    clock.now += 30.0
    progress.beat()
    text = out.getvalue()
    assert "W1 api: running 30.0s, 2 turns, 3 tool calls, $0.10, last tool Read" in text
    assert "W1 docs: running" not in text  # an agent that ended has no heartbeat


def test_json_progress_is_one_object_a_line_with_its_schema() -> None:
    out = io.StringIO()
    clock = Clock()
    progress = Progress(out, live=True, clock=clock, as_json=True)  # never a table
    progress.wave_started(3, "none", "warn", ["api"])
    progress.log("checks passed")
    clock.now += 5.0
    progress.update("api", turns=1, last_tool="Bash")
    progress.beat()
    progress.finished("api", "stopped")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["event"] for line in lines] == [
        "wave_started",
        "log",
        "heartbeat",
        "agent_finished",
    ]
    assert {line["schema"] for line in lines} == {"seawall.progress/1"}
    assert lines[0]["agents"] == ["api"] and lines[1]["text"] == "checks passed"
    assert lines[2]["elapsed_s"] == 5.0 and lines[2]["last_tool"] == "Bash"
    assert lines[3]["status"] == "stopped"


def test_ticking_beats_while_the_body_runs() -> None:
    out = io.StringIO()
    progress = Progress(out, live=False, heartbeat=0.05)
    progress.wave_started(1, "none", "warn", ["api"])

    async def wave() -> None:
        async with progress.ticking():
            await anyio.sleep(0.3)

    anyio.run(wave)
    beats = out.getvalue().count("W1 api: running")
    assert beats >= 2
    anyio.run(anyio.sleep, 0.1)
    assert out.getvalue().count("W1 api: running") == beats  # no beat after the body
