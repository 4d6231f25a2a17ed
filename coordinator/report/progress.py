"""Progress of a wave: a live table in a terminal, plain log lines otherwise."""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

__all__ = ["AgentRow", "Progress", "make_progress", "quiet_progress"]


@dataclass(slots=True, kw_only=True)
class AgentRow:
    task: str
    status: str = "running"
    turns: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0
    cost_estimated: bool = False  # priced from token usage ("~$0.42")
    started: float = 0.0
    finished: float | None = None
    last_tool: str = ""


class Progress:
    """Collects per-agent rows and shows them.

    In a terminal the table is redrawn in place at most every ``interval`` seconds; when
    output is not a terminal, only state changes are printed, one line each.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        live: bool,
        interval: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.live = live
        self.interval = interval
        self.clock = clock
        self.rows: dict[str, AgentRow] = {}
        self._drawn_lines = 0
        self._last_draw = 0.0
        self.wave = 0

    def wave_started(self, wave: int, isolation: str, enforcement: str, tasks: list[str]) -> None:
        self.wave = wave
        self.rows = {task: AgentRow(task=task, started=self.clock()) for task in tasks}
        self._drawn_lines = 0
        self.log(f"wave {wave}: {len(tasks)} agent(s), {isolation}, enforcement {enforcement}")

    def log(self, line: str) -> None:
        if self.live and self._drawn_lines:
            self._clear()
        self.stream.write(f"seawall: {line}\n")
        self.stream.flush()
        if self.live and self.rows:
            self._draw(force=True)

    def update(self, task: str, **changes: object) -> None:
        row = self.rows.get(task)
        if row is None:
            return
        for key, value in changes.items():
            setattr(row, key, value)
        if self.live:
            self._draw()

    def finished(self, task: str, status: str) -> None:
        row = self.rows.get(task)
        if row is None:
            return
        row.status = status
        row.finished = self.clock()
        if self.live:
            self._draw(force=True)
        else:
            self.stream.write(
                f"seawall: W{self.wave} {task}: {status} after {row.turns} turns, "
                f"{row.tool_calls} tool calls, {_money(row)}, "
                f"{(row.finished - row.started):.1f}s\n"
            )
            self.stream.flush()

    def wave_finished(self) -> None:
        if self.live:
            self._draw(force=True)
            self._drawn_lines = 0

    def _table(self) -> list[str]:
        header = f"{'agent':<24} {'status':<16} {'turns':>5} {'tools':>5} {'cost':>7} "
        header += f"{'elapsed':>8}  last tool"
        lines = [header]
        now = self.clock()
        for row in self.rows.values():
            elapsed = (row.finished or now) - row.started
            lines.append(
                f"{row.task[:24]:<24} {row.status[:16]:<16} {row.turns:>5} {row.tool_calls:>5} "
                f"{_money(row):>7} {elapsed:>7.1f}s  {row.last_tool[:30]}"
            )
        return lines

    def _clear(self) -> None:
        self.stream.write(f"\x1b[{self._drawn_lines}F\x1b[J")
        self._drawn_lines = 0

    def _draw(self, *, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._last_draw < self.interval:
            return
        self._last_draw = now
        if self._drawn_lines:
            self._clear()
        lines = self._table()
        self.stream.write("\n".join(lines) + "\n")
        self.stream.flush()
        self._drawn_lines = len(lines)


def _money(row: AgentRow) -> str:
    """``$0.42``, or ``~$0.42`` when the cost is an estimate from token usage."""
    return f"{'~' if row.cost_estimated else ''}${row.cost_usd:.2f}"


def make_progress(stream: TextIO | None = None) -> Progress:
    """A progress display for ``stream`` (stderr by default): live when it is a terminal."""
    stream = stream or sys.stderr
    return Progress(stream, live=stream.isatty())


class _Discard(io.StringIO):
    """A text stream that drops what is written (a library is silent by default)."""

    def write(self, text: str) -> int:
        return len(text)


def quiet_progress() -> Progress:
    """A progress sink that shows nothing: a ``Session`` without one says nothing."""
    return Progress(_Discard(), live=False)
