"""Ending a process group: SIGTERM, a grace period, SIGKILL, and a wait until it is empty.

The one way seawall stops a group of processes it started (agents, checks, sessions run
by the unattended runner, agents a dead coordinator left behind). "Empty" means no live
member: a zombie (dead, not yet reaped by its parent) no longer runs and is not waited
for. Membership is read from ``/proc`` on Linux; elsewhere ``killpg(group, 0)`` is the
test, so a zombie there counts until reaped. Both waits are bounded.

``end_groups`` blocks; ``aend_groups`` is the same steps, sleeping with anyio.
``process_alive`` and ``group_alive`` tell whether a process or a group still runs.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Collection, Generator
from pathlib import Path

__all__ = [
    "aend_group",
    "aend_groups",
    "end_group",
    "end_groups",
    "group_alive",
    "process_alive",
    "signal_group",
]

_POLL = 0.05  # each poll reads /proc once
_KILL_WAIT = 5.0  # after SIGKILL, how long to wait for the kernel to clear the group
_PROC = Path("/proc")


def signal_group(group: int, signum: int) -> bool:
    """Send ``signum`` to a process group; False when it is gone (or not ours)."""
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def group_alive(group: int) -> bool:
    """Whether the group has a member that is not a zombie."""
    live = _live_groups()
    return signal_group(group, 0) if live is None else group in live


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs: it exists and is not a zombie."""
    if _PROC.is_dir():
        fields = _stat(_PROC / str(pid))
        return fields is not None and fields[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    return True


def _stat(entry: Path) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state, ppid, pgrp, ...);
    None when the process is gone."""
    try:
        stat = entry.joinpath("stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields if len(fields) > 2 else None


def _live_groups() -> set[int] | None:
    """The process groups with a live (not zombie) member, in one pass over ``/proc``;
    None where there is no ``/proc``."""
    if not _PROC.is_dir():
        return None
    groups: set[int] = set()
    for entry in _PROC.iterdir():
        fields = _stat(entry) if entry.name.isdigit() else None
        if fields is not None and fields[0] not in ("Z", "X"):
            groups.add(int(fields[2]))
    return groups


def _any_alive(groups: Collection[int]) -> bool:
    live = _live_groups()
    if live is None:
        return any(signal_group(group, 0) for group in groups)
    return not live.isdisjoint(groups)


def _ending(groups: Collection[int], grace: float) -> Generator[float, None, set[int]]:
    """The steps of ending ``groups``; yields how long to sleep between polls. Returns
    the groups that had a live member (the others were gone, or only zombies)."""
    live = _live_groups()
    signalled = {
        group
        for group in groups
        if (live is None or group in live) and signal_group(group, signal.SIGTERM)
    }
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _any_alive(signalled):
        yield _POLL
    for group in signalled:
        signal_group(group, signal.SIGKILL)
    deadline = time.monotonic() + _KILL_WAIT
    while time.monotonic() < deadline and _any_alive(signalled):
        yield _POLL
    return signalled


def end_groups(groups: Collection[int], *, grace: float) -> set[int]:
    """End every group (SIGTERM, up to ``grace`` seconds, SIGKILL) and wait until they
    are empty. Returns the groups that had a live member."""
    steps = _ending(groups, grace)
    try:
        while True:
            time.sleep(next(steps))
    except StopIteration as done:
        result: set[int] = done.value
        return result


async def aend_groups(groups: Collection[int], *, grace: float) -> set[int]:
    """``end_groups`` for async callers: sleeps without blocking the event loop."""
    import anyio  # the supervisor imports this module and must start fast

    steps = _ending(groups, grace)
    try:
        while True:  # noqa: ASYNC110 - polling /proc: no event says a group emptied
            await anyio.sleep(next(steps))
    except StopIteration as done:
        result: set[int] = done.value
        return result


def end_group(group: int, *, grace: float) -> bool:
    """End one group and wait until it is empty; False when nothing in it was alive."""
    return bool(end_groups((group,), grace=grace))


async def aend_group(group: int, *, grace: float) -> bool:
    """``end_group`` for async callers."""
    return bool(await aend_groups((group,), grace=grace))
