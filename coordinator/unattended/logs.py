"""Bounded files of a long-running runner: ``runner.log`` and ``ticks.jsonl``.

``runner.log`` is truncated IN PLACE (same inode) past its limit, its last 256 KB kept
in ``runner.log.1``. Renaming would be wrong: a scheduler that holds the log open with
``O_APPEND`` (launchd, a ``>>`` redirect) would keep writing into the renamed file while
the new one stayed empty forever. With ``O_APPEND`` every write goes to the current end
of the file, so after the truncation the writer simply continues at offset 0.

``ticks.jsonl`` gets one JSON line per tick and is trimmed to its newest lines past its
own limit; only the tick holding the runner's lock trims it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seawall.runtime.files import atomic_write_bytes

__all__ = [
    "LOG_KEEP_BYTES",
    "RunnerLog",
    "TickLog",
    "Truncation",
    "truncate_log",
]

LOG_KEEP_BYTES = 256 * 1024
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


@dataclass(frozen=True, slots=True, kw_only=True)
class Truncation:
    """What a truncation or a trim did."""

    bytes_before: int
    bytes_kept: int


def truncate_log(
    path: Path, *, max_bytes: int, keep_bytes: int = LOG_KEEP_BYTES
) -> Truncation | None:
    """Past ``max_bytes``, copy the last ``keep_bytes`` to ``<path>.1`` and empty ``path``.

    The file is truncated with ``ftruncate`` on its own inode, never replaced, so every
    descriptor already open on it in append mode keeps logging into it. The copy starts
    at a line boundary when the tail contains one. Returns None when nothing was done.
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    with contextlib.closing(os.fdopen(fd, "r+b")) as handle:
        size = os.fstat(fd).st_size
        if size <= max_bytes:
            return None
        start = max(0, size - keep_bytes)
        handle.seek(start)
        tail = handle.read(keep_bytes)
        if start > 0:
            newline = tail.find(b"\n")
            if 0 <= newline < len(tail) - 1:
                tail = tail[newline + 1 :]
        atomic_write_bytes(path.with_name(path.name + ".1"), tail)
        # Lines appended between the read and here are lost; the window is a few ms.
        os.ftruncate(fd, 0)
    return Truncation(bytes_before=size, bytes_kept=len(tail))


def _append_line(path: Path, line: str) -> bool:
    """One ``write`` on an ``O_APPEND`` descriptor; False when the disk is full."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError as exc:
        if exc.errno not in _DISK_FULL:
            raise
        return False
    return True


class RunnerLog:
    """The human log: timestamped lines appended to ``runner.log``.

    Logging never stops the runner: on a full disk a line is dropped and the method
    returns False, so the caller can still record the attempt elsewhere.
    """

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock

    def write(self, message: str) -> bool:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._clock()))
        return _append_line(self.path, f"{stamp} seawall runner: {message}\n")

    def truncate(self, *, max_bytes: int) -> Truncation | None:
        return truncate_log(self.path, max_bytes=max_bytes)


class TickLog:
    """``ticks.jsonl``: one JSON object per tick, trimmed to the newest lines."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, record: Mapping[str, Any]) -> bool:
        return _append_line(self.path, json.dumps(dict(record), ensure_ascii=False) + "\n")

    def read(self, *, last: int | None = None) -> list[dict[str, Any]]:
        """The newest ``last`` records (all without ``last``), oldest first."""
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        records: list[dict[str, Any]] = []
        for line in lines[-last:] if last else lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue  # a torn line after a crash: telemetry, not a reason to fail
            if isinstance(value, dict):
                records.append(value)
        return records

    def trim(self, *, max_bytes: int, keep_lines: int) -> Truncation | None:
        """Past ``max_bytes``, keep only the newest ``keep_lines`` lines (atomic rewrite)."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return None
        if size <= max_bytes:
            return None
        lines = self.path.read_bytes().splitlines(keepends=True)
        kept = b"".join(lines[-keep_lines:])
        atomic_write_bytes(self.path, kept)
        return Truncation(bytes_before=size, bytes_kept=len(kept))
