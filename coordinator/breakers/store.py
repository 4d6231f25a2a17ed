"""Where hook processes keep an agent's breaker between tool calls.

Hook mode runs one short process per tool call, so the breaker lives in
``<repo>/.seawall/<session>/agents/<task>/breaker.json``: loaded, updated and saved
under a file lock (parallel tool calls of one agent run their hooks concurrently).
Hook processes use wall-clock time (``time.time``) so session-time spans processes.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from coordinator.breakers.agent import AgentBreaker
from coordinator.errors import StateError
from coordinator.fsutil import atomic_write_text, file_lock
from coordinator.model import BreakerLimits

__all__ = ["breaker_path", "load_breaker", "open_breaker", "reset_agent_breaker", "save_breaker"]


def breaker_path(repo: Path, session: str, task: str) -> Path:
    """``<repo>/.seawall/<session>/agents/<task>/breaker.json``."""
    return repo / ".seawall" / session / "agents" / task / "breaker.json"


def load_breaker(
    repo: Path,
    session: str,
    task: str,
    *,
    limits: BreakerLimits | None = None,
    clock: Callable[[], float] = time.time,
) -> AgentBreaker:
    """The agent's saved breaker, or a fresh one (started now) when none was saved."""
    path = breaker_path(repo, session, task)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return AgentBreaker(limits=limits, clock=clock, agent=task)
    try:
        return AgentBreaker.from_dict(json.loads(text), limits=limits, clock=clock)
    except (ValueError, KeyError, TypeError) as exc:
        raise StateError(f"{path} is not a readable breaker state: {exc}") from exc


def save_breaker(repo: Path, session: str, task: str, breaker: AgentBreaker) -> Path:
    """Write the breaker atomically; returns the file written."""
    path = breaker_path(repo, session, task)
    atomic_write_text(path, json.dumps(breaker.to_dict(), sort_keys=True) + "\n")
    return path


@contextlib.contextmanager
def open_breaker(
    repo: Path,
    session: str,
    task: str,
    *,
    limits: BreakerLimits | None = None,
    clock: Callable[[], float] = time.time,
) -> Iterator[AgentBreaker]:
    """Lock, load, yield and save the agent's breaker (one hook call's whole cycle)."""
    path = breaker_path(repo, session, task)
    with file_lock(path.with_name("breaker.lock"), what=f"the breaker of agent {task!r}"):
        breaker = load_breaker(repo, session, task, limits=limits, clock=clock)
        yield breaker
        save_breaker(repo, session, task, breaker)


def reset_agent_breaker(
    repo: Path,
    session: str,
    task: str,
    *,
    limits: BreakerLimits | None = None,
    clock: Callable[[], float] = time.time,
) -> bool:
    """Clear the agent's trip and counters after review (``seawall reset --agent``).

    Returns whether a trip was cleared. The cleanup allowance starts over only here.
    """
    with open_breaker(repo, session, task, limits=limits, clock=clock) as breaker:
        was_tripped = breaker.trip is not None
        breaker.reset()
    return was_tripped
