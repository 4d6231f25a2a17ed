"""Agents a dead coordinator left running.

Every process agent runs in its own process group with ``SEAWALL_SESSION`` and
``SEAWALL_TASK_ID`` in its environment. After a crash (even SIGKILL) those agents keep
running and writing; before ``seawall resume`` salvages their work it stops them, so the
snapshot it takes is the agent's last state and nothing writes into the workspace after.
Linux only (it reads ``/proc``); elsewhere it finds nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from seawall.runtime.processes import end_groups

__all__ = ["find_orphans", "stop_orphans"]


def find_orphans(session: str, task: str | None = None, *, proc: Path = Path("/proc")) -> set[int]:
    """Process groups of agents of ``session`` (of ``task`` only, when given)."""
    wanted = {f"SEAWALL_SESSION={session}".encode()}
    if task is not None:
        wanted.add(f"SEAWALL_TASK_ID={task}".encode())
    groups: set[int] = set()
    me = os.getpgrp()
    for entry in proc.glob("[0-9]*"):
        try:
            environ = set((entry / "environ").read_bytes().split(b"\0"))
            pid = int(entry.name)
            group = os.getpgid(pid)
        except (OSError, ValueError):
            continue  # gone, or not ours to read
        if wanted <= environ and group != me:
            groups.add(group)
    return groups


def stop_orphans(groups: set[int], *, grace: float = 2.0) -> set[int]:
    """End each process group (SIGTERM, SIGKILL after ``grace`` seconds) and wait until
    they are empty. An agent's supervisor, stopped this way, ends what the agent started
    outside its group too. Returns the groups that had a live member."""
    return end_groups(groups, grace=grace)
