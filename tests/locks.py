"""A lock for what tests share beyond their own process: one file, ``flock``.

Test processes running at once (pytest-xdist's workers, two runs of one checkout) wait
for each other on it: an install of the agent CLIs made once, a hook module changed
while no other test relies on it staying as it is, one Ray cluster with fixed addresses
on the machine. The lock is held while the block runs and given up when it ends, or when
its process dies.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["locked"]


@contextmanager
def locked(path: Path, *, shared: bool = False) -> Iterator[IO[str]]:
    """``path`` locked while the block runs: alone, or ``shared`` with the other shared
    holders. Yields the open lock file; ``fcntl.flock(file, fcntl.LOCK_EX)`` turns a
    shared hold into a lone one (waiting for the other holders to leave)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield lock
