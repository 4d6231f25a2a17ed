"""BLOCKED.md: the session's stop notes, appended the moment a breaker trips.

``<repo>/.seawall/<session>/BLOCKED.md`` gets one section per trip: what tripped, the
evidence, what happened to the work (the ``wip:`` snapshot) and the single next
action. It is appended with one ``write`` on an ``O_APPEND`` descriptor under a lock,
so notes of agents tripping at the same moment never interleave.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable
from pathlib import Path

from seawall.breakers.trip import Trip
from seawall.runtime.files import file_lock

__all__ = ["append_blocked", "append_blocked_note", "blocked_note", "blocked_path"]

_HEADER = (
    "# BLOCKED\n\nStop notes written by seawall when a breaker trips. Each names what "
    "tripped, the evidence and the single next action.\n"
)


def blocked_path(repo: Path, session: str) -> Path:
    """``<repo>/.seawall/<session>/BLOCKED.md``."""
    return repo / ".seawall" / session / "BLOCKED.md"


def blocked_note(
    trip: Trip,
    *,
    agent: str,
    wave: int | None = None,
    snapshot: str | None = None,
    when: float | None = None,
) -> str:
    """The Markdown section for one trip (``snapshot`` says what happened to the work)."""
    stamp = dt.datetime.fromtimestamp(time.time() if when is None else when, tz=dt.UTC)
    where = f"wave {wave}, agent `{agent}`" if wave is not None else f"agent `{agent}`"
    if snapshot is None:
        snapshot = (
            "no snapshot: this trip has a way out and the work stays in place"
            if not trip.wants_snapshot
            else "no snapshot recorded"
        )
    return (
        f"\n## {stamp.strftime('%Y-%m-%d %H:%M:%SZ')} · {where} · {trip.kind.label}\n\n"
        f"- **Tripped:** {trip.kind.label} ({trip.count:g} of a limit of {trip.limit:g})\n"
        f"- **Evidence:** {trip.evidence}\n"
        f"- **Work:** {snapshot}\n"
        f"- **Next action:** {trip.next_action(agent)}\n"
    )


def append_blocked_note(
    path: Path,
    trip: Trip,
    *,
    agent: str,
    wave: int | None = None,
    snapshot: str | None = None,
    clock: Callable[[], float] = time.time,
) -> Path:
    """Append one trip's note to the BLOCKED.md at ``path`` at once; returns ``path``."""
    note = blocked_note(trip, agent=agent, wave=wave, snapshot=snapshot, when=clock())
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(path.with_name(path.name + ".lock"), what=str(path)):
        fresh = not path.exists() or path.stat().st_size == 0
        data = (_HEADER + note) if fresh else note
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data.encode("utf-8"))
        finally:
            os.close(fd)
    return path


def append_blocked(
    repo: Path,
    session: str,
    trip: Trip,
    *,
    agent: str,
    wave: int | None = None,
    snapshot: str | None = None,
    clock: Callable[[], float] = time.time,
) -> Path:
    """Append one trip's note to ``<repo>/.seawall/<session>/BLOCKED.md``; returns its path."""
    return append_blocked_note(
        blocked_path(repo, session), trip, agent=agent, wave=wave, snapshot=snapshot, clock=clock
    )
