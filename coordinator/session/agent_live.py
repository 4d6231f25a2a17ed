"""A running agent's link to the processes that watch it: its counts written to its live
file, and the stops asked for from outside picked up (see ``seawall.state.live``).

One small task per running agent wakes every ``interval`` seconds: it rewrites the live
file when the counts changed (so a silent agent costs nothing, and a busy one at most one
write a second) and looks for a stop request of the agent or of the session, which it
hands to ``stop`` — the same stop a breaker trip makes.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace

import anyio

from seawall.errors import StateError
from seawall.runtime.background import alongside
from seawall.state.live import (
    LiveCounts,
    agent_stop_path,
    live_path,
    read_stop,
    session_stop_path,
    take_stop,
    write_live,
)
from seawall.state.store import SessionPaths

__all__ = ["LIVE_INTERVAL_S", "shared_live"]

LIVE_INTERVAL_S = 1.0


@asynccontextmanager
async def shared_live(
    paths: SessionPaths,
    *,
    task: str,
    wave: int,
    snapshot: Callable[[], LiveCounts],
    stop: Callable[[str], None],
    interval: float = LIVE_INTERVAL_S,
) -> AsyncIterator[None]:
    """For the body's duration (the agent's run), keep its live file current and act on
    stop requests. The live file stays when the agent has ended: its run file, written
    next, is what readers take from then on."""
    target = live_path(paths, task, wave)
    own_stop = agent_stop_path(paths, task, wave)
    session_stop = session_stop_path(paths)

    async def tick() -> None:
        written: LiveCounts | None = None
        while True:
            request = take_stop(own_stop) or read_stop(session_stop)
            if request is not None and not snapshot().stop_reason:  # the first reason stays
                stop(request.describe())
            live = snapshot()
            if written is None or _changed(written, live):
                written = live
                # a full disk costs the watchers their counts, never the agent its run
                with contextlib.suppress(StateError, OSError):
                    await anyio.to_thread.run_sync(write_live, target, live)
            await anyio.sleep(interval)

    async with alongside(tick):
        yield


def _changed(before: LiveCounts, now: LiveCounts) -> bool:
    """Whether anything but the write time differs."""
    return replace(now, updated_at=before.updated_at) != before
