"""The progress display: a live table in a terminal, plain lines otherwise."""

from __future__ import annotations

import io

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
