"""Where hook processes keep an agent's breaker between tool calls.

Hook mode runs one short process per tool call, so the breaker lives in
``<repo>/.seawall/<session>/agents/<task>/breaker.json``: loaded, updated and saved
under a file lock (parallel tool calls of one agent run their hooks concurrently).
Hook processes use wall-clock time (``time.time``) so session-time spans processes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from seawall.breakers.agent import AgentBreaker
from seawall.breakers.saved import SCHEMA, SavedBreaker
from seawall.codec import decode, encode
from seawall.errors import StateError
from seawall.model import BreakerLimits
from seawall.runtime.files import atomic_write_bytes, file_lock

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
        data = path.read_bytes()
    except FileNotFoundError:
        return AgentBreaker(limits=limits, clock=clock, agent=task)
    try:
        saved = decode(data, SavedBreaker)
    except ValueError as exc:  # msgspec's errors name the field (``at `$.tool_calls```)
        raise StateError(f"{path} is not a readable breaker state: {exc}") from exc
    if saved.schema != SCHEMA:
        raise StateError(f"{path} is a breaker state of unknown schema {saved.schema}")
    return AgentBreaker.resumed(saved, limits=limits, clock=clock)


def save_breaker(repo: Path, session: str, task: str, breaker: AgentBreaker) -> Path:
    """Write the breaker atomically; returns the file written."""
    path = breaker_path(repo, session, task)
    atomic_write_bytes(path, encode(breaker.saved()) + b"\n")
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
