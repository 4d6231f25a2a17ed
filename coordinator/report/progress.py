"""Progress of a wave: a live table in a terminal, plain log lines otherwise.

Without a terminal (CI, ``nohup``, a lead agent reading the output) every state change
is a line, and every running agent gets a heartbeat line every ``heartbeat`` seconds
(its elapsed time, turns, tool calls, cost and last tool), so a silent agent is still
seen to run. With ``as_json`` each line is one JSON object naming its schema
(``"schema": "seawall.progress/1"``) and its ``event``: ``log``, ``wave_started``,
``heartbeat`` or ``agent_finished``.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TextIO

import anyio

from seawall.codec import encode_text
from seawall.runtime.background import alongside

__all__ = [
    "PROGRESS_SCHEMA",
    "AgentProgress",
    "AgentRow",
    "LogLine",
    "Progress",
    "WaveProgress",
    "make_progress",
    "quiet_progress",
]

PROGRESS_SCHEMA = "seawall.progress/1"
HEARTBEAT_S = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class LogLine:
    """A line of the session's log, as JSON."""

    text: str
    schema: str = PROGRESS_SCHEMA
    event: str = "log"


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveProgress:
    """A wave's agents started."""

    wave: int
    isolation: str
    enforcement: str
    agents: tuple[str, ...]
    schema: str = PROGRESS_SCHEMA
    event: str = "wave_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentProgress:
    """A running agent's heartbeat (``event`` ``heartbeat``) or its end (``agent_finished``)."""

    event: str
    wave: int
    agent: str
    status: str
    elapsed_s: float
    turns: int
    tool_calls: int
    cost_usd: float
    cost_estimated: bool
    last_tool: str
    schema: str = PROGRESS_SCHEMA


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
    wave: int = 0  # a rolling session's dispatch (0: the wave being shown)


class Progress:
    """Collects per-agent rows and shows them.

    In a terminal the table is redrawn in place at most every ``interval`` seconds (and,
    while agents run, at least every second, so elapsed times move); when output is not
    a terminal, state changes are printed one line each, and each running agent's
    heartbeat every ``heartbeat`` seconds (0: none); ``as_json`` makes each line a JSON
    object.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        live: bool,
        interval: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
        heartbeat: float = HEARTBEAT_S,
        as_json: bool = False,
    ) -> None:
        self.stream = stream
        self.live = live and not as_json
        self.interval = interval
        self.clock = clock
        self.heartbeat = heartbeat
        self.as_json = as_json
        self.rows: dict[str, AgentRow] = {}
        self._drawn_lines = 0
        self._last_draw = 0.0
        self.wave = 0

    def wave_started(self, wave: int, isolation: str, enforcement: str, tasks: list[str]) -> None:
        self.wave = wave
        self.rows = {task: AgentRow(task=task, started=self.clock()) for task in tasks}
        self._drawn_lines = 0
        if self.as_json:
            self._emit(
                WaveProgress(
                    wave=wave, isolation=isolation, enforcement=enforcement, agents=tuple(tasks)
                )
            )
            return
        self.log(f"wave {wave}: {len(tasks)} agent(s), {isolation}, enforcement {enforcement}")

    def agent_started(self, wave: int, isolation: str, enforcement: str, task: str) -> None:
        """One agent of a rolling session started: its row joins those still shown (a
        row that finished more than a minute ago leaves)."""
        now = self.clock()
        self.wave = wave
        self.rows = {
            name: row
            for name, row in self.rows.items()
            if row.finished is None or now - row.finished < 60.0
        }
        self.rows[task] = AgentRow(task=task, started=now, wave=wave)
        if self.as_json:
            self._emit(
                WaveProgress(
                    wave=wave, isolation=isolation, enforcement=enforcement, agents=(task,)
                )
            )
            return
        self.log(f"W{wave} {task}: started, {isolation}, enforcement {enforcement}")

    def log(self, line: str) -> None:
        if self.as_json:
            self._emit(LogLine(text=line))
            return
        if self.live and self._drawn_lines:
            self._clear()
        self.stream.write(f"seawall: {line}\n")
        self.stream.flush()
        if self.live and self.rows:
            self._draw(force=True)

    @asynccontextmanager
    async def ticking(self) -> AsyncIterator[None]:
        """While the body runs (a wave's agents), keep time moving: the live table is
        redrawn every second, and without a terminal each running agent's heartbeat is
        printed every ``heartbeat`` seconds."""
        period = 1.0 if self.live else self.heartbeat
        if period <= 0:
            yield
            return

        async def tick() -> None:
            while True:
                await anyio.sleep(period)
                if self.live:
                    self._draw(force=True)
                else:
                    self.beat()

        async with alongside(tick):
            yield

    def beat(self) -> None:
        """One heartbeat line for each agent still running."""
        for row in self.rows.values():
            if row.finished is None:
                self._agent_line("heartbeat", row)

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
            self._agent_line("agent_finished", row)

    def _agent_line(self, event: str, row: AgentRow) -> None:
        elapsed = (row.finished or self.clock()) - row.started
        if self.as_json:
            self._emit(
                AgentProgress(
                    event=event,
                    wave=row.wave or self.wave,
                    agent=row.task,
                    status=row.status,
                    elapsed_s=round(elapsed, 1),
                    turns=row.turns,
                    tool_calls=row.tool_calls,
                    cost_usd=round(row.cost_usd, 6),
                    cost_estimated=row.cost_estimated,
                    last_tool=row.last_tool,
                )
            )
            return
        if event == "heartbeat":
            last = f", last tool {row.last_tool}" if row.last_tool else ""
            line = (
                f"W{row.wave or self.wave} {row.task}: running {elapsed:.1f}s, {row.turns} turns, "
                f"{row.tool_calls} tool calls, {_money(row)}{last}"
            )
        else:
            line = (
                f"W{row.wave or self.wave} {row.task}: {row.status} after {row.turns} turns, "
                f"{row.tool_calls} tool calls, {_money(row)}, {elapsed:.1f}s"
            )
        self.stream.write(f"seawall: {line}\n")
        self.stream.flush()

    def _emit(self, record: object) -> None:
        self.stream.write(encode_text(record, indent=None) + "\n")
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


def make_progress(
    stream: TextIO | None = None, *, heartbeat: float = HEARTBEAT_S, as_json: bool = False
) -> Progress:
    """A progress display for ``stream`` (stderr by default): live when it is a terminal
    (and not ``as_json``); otherwise lines, with a heartbeat every ``heartbeat`` seconds."""
    stream = stream or sys.stderr
    return Progress(stream, live=stream.isatty(), heartbeat=heartbeat, as_json=as_json)


class _Discard(io.StringIO):
    """A text stream that drops what is written (a library is silent by default)."""

    def write(self, text: str) -> int:
        return len(text)


def quiet_progress() -> Progress:
    """A progress sink that shows nothing: a ``Session`` without one says nothing."""
    return Progress(_Discard(), live=False, heartbeat=0)
