"""``events.jsonl``: the session's telemetry stream, one typed record per line.

``EventLog.append`` takes a record of one of the kinds of ``seawall.telemetry.records``
(a closed set: anything else is a ``TypeError``), sets its ``ts`` and ``session`` and
writes it through ``seawall.codec``; ``read_events`` reads the same records back.

Every line is read as well as it can be: a line written before the records were typed
is given today's shape first (``seawall.telemetry.legacy``; a line of today keeps
its own); one that still does not decode, or is of a kind seawall does not know (a
newer version's, a third party's), is an ``UnknownEvent`` holding the line's fields,
never an error. A line that is not a JSON object (one torn by a crash) is skipped.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar, overload

import msgspec

from seawall.codec import JsonObject, decode_any, encode, from_data
from seawall.telemetry.base import TelemetryRecord, UnknownEvent
from seawall.telemetry.legacy import upgrade
from seawall.telemetry.records import BY_TAG, KINDS, TelemetryEvent

__all__ = ["EventLog", "read_events", "read_line"]

R = TypeVar("R", bound=TelemetryEvent)
K = TypeVar("K", bound=TelemetryRecord | UnknownEvent)

_UNION: Any = TelemetryEvent  # a union is no ``type[T]`` to the type checker


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
        self.listeners: list[Callable[[TelemetryEvent], None]] = []

    def append(self, record: R) -> R:
        """Write ``record`` with this log's session and the time now; the record written."""
        if not isinstance(record, KINDS):
            raise TypeError(
                "events.jsonl takes a record of seawall.telemetry "
                f"(one of its {len(KINDS)} kinds), not {type(record).__name__}"
            )
        record = msgspec.structs.replace(record, ts=round(time.time(), 3), session=self.session)
        line = encode(record) + b"\n"
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    if not self._repaired:
                        _end_torn_line(fd)
                        self._repaired = True
                    os.write(fd, line)
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


@overload
def read_events(path: Path) -> Iterator[TelemetryEvent | UnknownEvent]: ...
@overload
def read_events(path: Path, kind: type[K]) -> Iterator[K]: ...
def read_events(path: Path, kind: type[Any] | None = None) -> Iterator[Any]:
    """The records of an ``events.jsonl`` file, in order (only those of ``kind`` when
    given); see the module's docstring for lines that are no record of today."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for line in handle:
            record = read_line(line)
            if record is not None and (kind is None or isinstance(record, kind)):
                yield record


def read_line(line: bytes | str) -> TelemetryEvent | UnknownEvent | None:
    """One line of ``events.jsonl`` as its record; None for a line that is no JSON object."""
    if not line.strip():
        return None
    try:
        data = decode_any(line)
    except ValueError:  # msgspec's DecodeError and json's: not JSON (a torn line)
        return None
    if not isinstance(data, dict):
        return None
    if str(data.get("event")) not in BY_TAG:
        return _unknown(data, "a kind seawall does not know")
    try:
        record: TelemetryEvent = from_data(upgrade(data), _UNION)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        return _unknown(data, str(exc))
    return record


def _unknown(data: JsonObject, problem: str) -> UnknownEvent:
    ts, session = data.get("ts"), data.get("session")
    return UnknownEvent(
        event=str(data.get("event") or ""),
        ts=float(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else 0.0,
        session=session if isinstance(session, str) else "",
        data=data,
        problem=problem,
    )
