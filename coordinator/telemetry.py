"""``events.jsonl``: the session's telemetry stream, one JSON object per line, one schema.

Every record has ``ts`` (unix seconds), ``event`` (its kind) and ``session``; the rest
depends on the kind: ``stagnation_detected``, ``breaker_tripped``, ``merge``,
``carryover``, ``scope_warning``, ``worktree_fallback``, ``agent_started``,
``agent_finished``, ``wave_started``, ``wave_finished``, ...
"""

from __future__ import annotations

import errno
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["EventLog", "read_events"]


class EventLog:
    """Appends telemetry records to an ``events.jsonl`` file.

    Each record is written with a single ``write`` on an ``O_APPEND`` descriptor, so
    lines from several processes never interleave. A file whose last line was torn by a
    crash is repaired on the first write (the torn line is ended), so it cannot swallow
    the next record. Telemetry must never stop a session: a full disk drops the record
    with one warning on stderr.
    """

    def __init__(self, path: Path, *, session: str) -> None:
        self.path = path
        self.session = session
        self._lock = threading.Lock()
        self._warned = False
        self._repaired = False
        #: called with each record after it is written (a session's webhook notifier);
        #: a listener must not raise or block
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        record: dict[str, Any] = {"ts": round(time.time(), 3), "event": event}
        record["session"] = self.session
        record.update(fields)
        line = json.dumps(record, sort_keys=False, default=str) + "\n"
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    if not self._repaired:
                        _end_torn_line(fd)
                        self._repaired = True
                    os.write(fd, line.encode("utf-8"))
                finally:
                    os.close(fd)
            except OSError as exc:
                if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
                    raise
                if not self._warned:
                    self._warned = True
                    print(
                        f"seawall: warning: cannot write telemetry to {self.path}: "
                        f"{exc.strerror}; continuing without it",
                        file=sys.stderr,
                    )
        for listener in tuple(self.listeners):
            listener(record)
        return record


def _end_torn_line(fd: int) -> None:
    """End the file's last line when a crash left it without its newline."""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")


def read_events(path: Path, *, event: str | None = None) -> Iterator[dict[str, Any]]:
    """Read the records of an ``events.jsonl`` file; a torn last line is skipped."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line torn by a crash mid-write
            if isinstance(record, dict) and (event is None or record.get("event") == event):
                yield record
