"""The files a running session shares with other processes: each running agent's counts
so far, and the stops asked for from outside the coordinator.

The coordinator rewrites ``agents/<task>/w<wave>-live.json`` (atomically, at most once a
second) while the agent runs, so ``seawall watch`` in any terminal sees its turns, tool
calls, cost and last tool as they change. ``seawall watch`` asks for a stop by writing
``agents/<task>/w<wave>-stop.json`` (one agent) or ``stop.json`` (the whole session);
the coordinator picks it up within a second and stops the agent the way a breaker does.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from seawall.codec import decode, encode
from seawall.runtime.files import atomic_write_bytes
from seawall.state.store import SessionPaths

__all__ = [
    "LiveCounts",
    "StopRequest",
    "agent_stop_path",
    "live_path",
    "read_live",
    "read_stop",
    "request_stop",
    "session_stop_path",
    "take_stop",
    "write_live",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveCounts:
    """A running agent as the coordinator sees it now (times are unix seconds)."""

    task: str
    wave: int
    started_at: float
    updated_at: float
    turns: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0
    cost_estimated: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    last_tool: str = ""
    max_turns: int = 0
    max_tool_calls: int = 0
    tool_warn_fraction: float = 0.8
    time_limit_s: float = 0.0
    trip: str = ""  # the breaker that tripped, with its evidence
    stop_reason: str = ""  # why the coordinator is stopping it ("" while it runs on)
    pid: int = 0  # the coordinator's
    conversation: str = ""  # the agent CLI's conversation: a resume after a kill continues it


@dataclass(frozen=True, slots=True, kw_only=True)
class StopRequest:
    """A stop asked for from outside the coordinator: by whom, through what, and why."""

    by: str = "user"
    via: str = "seawall watch"
    reason: str = ""
    at: float = 0.0
    pid: int = 0  # of the process that asked

    def describe(self) -> str:
        """``stopped by the user (seawall watch)``, with the reason when one was given."""
        text = f"stopped by the {self.by} ({self.via})"
        return f"{text}: {self.reason}" if self.reason else text


def live_path(paths: SessionPaths, task: str, wave: int) -> Path:
    return paths.agent_dir(task) / f"w{wave}-live.json"


def agent_stop_path(paths: SessionPaths, task: str, wave: int) -> Path:
    return paths.agent_dir(task) / f"w{wave}-stop.json"


def session_stop_path(paths: SessionPaths) -> Path:
    return paths.root / "stop.json"


def write_live(path: Path, live: LiveCounts) -> None:
    """Replace the live file (a reader sees the old or the new one; not flushed to disk:
    it only ever mirrors what the coordinator holds in memory)."""
    atomic_write_bytes(path, encode(live), durable=False)


def read_live(path: Path) -> LiveCounts | None:
    """The live counts, or None when there are none (yet) or the file is not one."""
    return _read(path, LiveCounts)


def request_stop(path: Path, *, by: str = "user", via: str = "seawall watch") -> StopRequest:
    """Ask the coordinator for a stop: the request is written atomically at ``path``."""
    request = StopRequest(by=by, via=via, at=round(time.time(), 3), pid=os.getpid())
    atomic_write_bytes(path, encode(request), durable=False)
    return request


def read_stop(path: Path) -> StopRequest | None:
    """The stop asked for at ``path``, or None."""
    return _read(path, StopRequest)


def take_stop(path: Path) -> StopRequest | None:
    """The stop asked for at ``path``, removed so it is acted on once; or None."""
    request = read_stop(path)
    if request is not None:
        with contextlib.suppress(FileNotFoundError):  # taken by another reader already
            path.unlink()
    return request


def _read(path: Path, kind: type[T]) -> T | None:
    try:
        data = path.read_bytes()
    except OSError:  # none (yet), or not readable by this user: nothing to act on
        return None
    try:
        return decode(data, kind)
    except ValueError:  # written by another version of seawall: not one of ours
        return None
