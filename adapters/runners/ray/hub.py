"""The hub: one small Ray actor per ``RayRunner`` that carries messages of every run.

Workers ``put`` messages (events, checkpoints) under their run id; the coordinator
long-polls them with ``take``. The coordinator ``stop``s a run; the worker long-polls
``wait_stop``. ``close`` wakes the coordinator's poll when the remote task has ended,
``drop`` forgets a run. Ray does not keep the order of calls to an async actor, so a
worker numbers its messages and ``take`` hands them out in that order, holding back
any that arrive before an earlier one. This is a plain class; the runner turns it into
an async actor with ``ray.remote`` (no Ray import here).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Hub"]


@dataclass(slots=True)
class _Run:
    messages: list[Any] = field(default_factory=list)
    early: dict[int, Any] = field(default_factory=dict)  # arrived before an earlier one
    next: int = 0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    stop_reason: str | None = None
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False


class Hub:
    """Per-run mailboxes (worker to coordinator) and stop flags (coordinator to worker)."""

    def __init__(self) -> None:
        self._runs: dict[str, _Run] = {}

    def _run(self, run_id: str) -> _Run:
        run = self._runs.get(run_id)
        if run is None:
            run = self._runs[run_id] = _Run()
        return run

    async def ping(self) -> bool:
        return True

    async def put(self, run_id: str, number: int, message: Any) -> None:
        """Message ``number`` (0, 1, 2, ... per run) of a run."""
        run = self._run(run_id)
        run.early[number] = message
        while run.next in run.early:
            run.messages.append(run.early.pop(run.next))
            run.next += 1
        if run.messages:
            run.arrived.set()

    async def take(self, run_id: str, wait: float) -> tuple[list[Any], bool]:
        """The messages so far (waiting up to ``wait`` seconds for one) and whether the
        run was closed. Nothing arriving in time is not an error: the caller polls again."""
        run = self._run(run_id)
        if not run.messages and not run.closed and wait > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await run.arrived.wait()
        messages, run.messages = run.messages, []
        run.arrived.clear()
        return messages, run.closed

    async def stop(self, run_id: str, reason: str) -> None:
        run = self._run(run_id)
        if run.stop_reason is None:
            run.stop_reason = reason
            run.stopped.set()

    async def wait_stop(self, run_id: str, wait: float) -> str | None:
        """The stop reason, waiting up to ``wait`` seconds for one; None while the run
        may go on."""
        run = self._run(run_id)
        if run.stop_reason is None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await run.stopped.wait()
        return run.stop_reason

    async def close(self, run_id: str) -> None:
        run = self._run(run_id)
        run.closed = True
        run.arrived.set()

    async def drop(self, run_id: str) -> None:
        self._runs.pop(run_id, None)
