"""The screen of ``seawall watch``: the session's rows drawn with ``rich``, refreshed every
second, driven by single keys from a plain terminal (SSH included).

Keys: ``q`` quits; up/down (or ``k``/``j``) select an agent; ``t`` follows the selected
agent's transcript (``t`` again, or Esc, goes back); ``s`` asks the coordinator to stop
the selected agent; ``K`` (then ``y``) asks it to stop the whole session. A stop is a
request file the coordinator picks up within a second (``seawall.state.live``), recorded
there as a stop by the user.
"""

from __future__ import annotations

import contextlib
import os
import select
import termios
import time
import tty
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from seawall.state.live import agent_stop_path, request_stop, session_stop_path
from seawall.watch.rows import AgentView, SessionReader, SessionView

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

__all__ = ["COLUMNS", "Keys", "WatchScreen", "agent_cells", "render_view"]

UP, DOWN, ESCAPE = "up", "down", "escape"
_ARROWS = {"\x1b[A": UP, "\x1b[B": DOWN, "\x1bOA": UP, "\x1bOB": DOWN}
_TAIL_BYTES = 64 * 1024


class Keys:
    """Single keys from a terminal in cbreak mode (no echo, no line buffering)."""

    def __init__(self, stream: TextIO) -> None:
        self.fd = stream.fileno()

    @contextlib.contextmanager
    def raw(self) -> Iterator[None]:
        saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        try:
            yield
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, saved)

    def read(self, timeout: float) -> str | None:
        """The next key within ``timeout`` seconds (an arrow as ``up``/``down``), or None."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return None
        data = os.read(self.fd, 16).decode("utf-8", errors="replace")
        if data.startswith("\x1b"):
            return _ARROWS.get(data[:3], ESCAPE)
        return data[:1] or None


@dataclass(slots=True)
class _Cursor:
    """What the person chose: the selected agent, the transcript view, a pending ``K``."""

    selected: int = 0
    following: bool = False
    confirming: bool = False
    message: str = ""


class WatchScreen:
    """The live view of one session until it ends or the person quits."""

    def __init__(
        self, reader: SessionReader, *, console: Console, keys: Keys, interval: float = 1.0
    ) -> None:
        self.reader = reader
        self.console = console
        self.keys = keys
        self.interval = interval
        self.cursor = _Cursor()

    def run(self) -> SessionView:
        """Show the session, refreshed every ``interval`` seconds and after each key; the
        last view read, printed once more below the screen when it ends."""
        from rich.live import Live

        view = self.reader.read()
        self.cursor.selected = _first_running(view)
        with self.keys.raw(), Live(console=self.console, screen=True, auto_refresh=False) as live:
            while True:
                live.update(self._render(view), refresh=True)
                if view.ended:
                    break
                key = self.keys.read(self.interval)
                if key is not None and not self._key(key, view):
                    break
                view = self.reader.read()
        self.console.print(render_view(view, selected=None))
        return view

    def _render(self, view: SessionView) -> RenderableType:
        cursor = self.cursor
        cursor.selected = min(cursor.selected, max(0, len(view.agents) - 1))
        if cursor.following and view.agents:
            return render_transcript(view.agents[cursor.selected], self.console.size.height)
        return render_view(view, selected=cursor.selected, message=cursor.message)

    def _key(self, key: str, view: SessionView) -> bool:
        """Act on one key; False to quit."""
        cursor = self.cursor
        if cursor.confirming:
            cursor.confirming = False
            if key in ("y", "Y"):
                request_stop(session_stop_path(self.reader.store.paths))
                cursor.message = "asked the coordinator to stop the session"
            else:
                cursor.message = "the session goes on"
            return True
        if key == "q":
            return False
        if key in (UP, "k"):
            cursor.selected = max(0, cursor.selected - 1)
        elif key in (DOWN, "j"):
            cursor.selected = min(len(view.agents) - 1, cursor.selected + 1)
        elif key == "t" or (key == ESCAPE and cursor.following):
            cursor.following = not cursor.following and bool(view.agents)
        elif key == "s" and view.agents:
            cursor.message = self._stop(view.agents[cursor.selected])
        elif key == "K":
            cursor.confirming = True
            cursor.message = "stop the whole session? y to confirm, any other key to go on"
        return True

    def _stop(self, agent: AgentView) -> str:
        if not agent.running:
            return f"W{agent.wave} {agent.task} is not running"
        request_stop(agent_stop_path(self.reader.store.paths, agent.task, agent.wave))
        return f"asked the coordinator to stop W{agent.wave} {agent.task}"


def render_view(
    view: SessionView, *, selected: int | None, message: str = "", now: float | None = None
) -> RenderableType:
    """The session's header, one row per agent (``selected`` highlighted) and the keys."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    waves = "  ".join(f"W{w.number} {w.phase}" for w in view.waves) or "no wave yet"
    header = Text.assemble(
        ("seawall watch ", "bold"),
        (view.session, "bold cyan"),
        f"  {view.phase}",
        "  (a stop was asked for)" if view.stop_asked and not view.ended else "",
        f"\nwaves: {waves}\nspend: {' · '.join(view.spend())}",
        f"  ({time.strftime('%H:%M:%S', time.localtime(now))})",
    )
    table = Table(box=None, pad_edge=False, expand=False, header_style="bold")
    for name, justify in COLUMNS:
        table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis")
    for index, agent in enumerate(view.agents):
        table.add_row(
            *agent_cells(agent), style="reverse" if index == selected and not view.ended else None
        )
    parts: list[RenderableType] = [header, table]
    if view.note:
        parts.append(Text(view.note, style="yellow"))
    if message:
        parts.append(Text(message, style="bold"))
    if selected is not None and not view.ended:
        parts.append(
            Text("q quit · ↑/↓ select · t transcript · s stop agent · K stop session", "dim")
        )
    return Group(*parts)


COLUMNS: tuple[tuple[str, Literal["left", "right"]], ...] = (
    ("wave", "right"),
    ("agent", "left"),
    ("state", "left"),
    ("elapsed", "right"),
    ("turns", "right"),
    ("tools", "right"),
    ("tokens", "right"),
    ("cost", "right"),
    ("last tool", "left"),
    ("trips / warnings", "left"),
    ("merge", "left"),
)


def agent_cells(agent: AgentView) -> tuple[str, ...]:
    """The cells of an agent's row, one per column of ``COLUMNS`` (the dashboard's too)."""
    cost = f"{'~' if agent.cost_estimated else ''}${agent.cost_usd:.2f}"
    alerts = [f"trip {trip}" for trip in agent.trips] + [f"80% {w}" for w in agent.warnings]
    return (
        f"W{agent.wave}",
        agent.task,
        agent.state,
        f"{agent.elapsed_s:.1f}s",
        str(agent.turns),
        str(agent.tool_calls),
        f"{agent.tokens:,}",
        cost,
        agent.last_tool,
        "; ".join(alerts)[:60],
        agent.merge,
    )


def render_transcript(agent: AgentView, height: int) -> RenderableType:
    """The last lines of the agent's transcript that fit the screen."""
    from rich.console import Group
    from rich.text import Text

    lines = _tail(agent.transcript, max(1, height - 3)) if agent.transcript else []
    title = Text.assemble(
        ("transcript ", "bold"),
        (f"W{agent.wave} {agent.task}", "bold cyan"),
        f"  {agent.state}  {agent.elapsed_s:.1f}s  (t or Esc: back, q: quit)",
    )
    body = [Text(line, no_wrap=True, overflow="ellipsis") for line in lines]
    return Group(title, *(body or [Text("(nothing written yet)", style="dim")]))


def _tail(path: Path, count: int) -> list[str]:
    """The last ``count`` lines of ``path`` (its last 64 KiB at most)."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL_BYTES))
            data = handle.read()
    except FileNotFoundError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()[-count:]


def _first_running(view: SessionView) -> int:
    return next((i for i, agent in enumerate(view.agents) if agent.running), 0)
