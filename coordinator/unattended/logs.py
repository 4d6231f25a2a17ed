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
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from seawall.codec import decode, encode
from seawall.runtime.files import atomic_write_bytes
from seawall.unattended.report import TickReport

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


def _append_line(path: Path, line: bytes) -> bool:
    """One ``write`` on an ``O_APPEND`` descriptor; False when the disk is full."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
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
        return _append_line(self.path, f"{stamp} seawall runner: {message}\n".encode())

    def truncate(self, *, max_bytes: int) -> Truncation | None:
        return truncate_log(self.path, max_bytes=max_bytes)


class TickLog:
    """``ticks.jsonl``: one ``TickReport`` per line, trimmed to the newest lines."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, report: TickReport) -> bool:
        """Append the tick's line (its times to the millisecond); False on a full disk."""
        rounded = msgspec.structs.replace(
            report, ts=round(report.ts, 3), duration_sec=round(report.duration_sec, 3)
        )
        return _append_line(self.path, encode(rounded) + b"\n")

    def read(self, *, last: int | None = None) -> list[TickReport]:
        """The newest ``last`` ticks (all without ``last``), oldest first."""
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        reports: list[TickReport] = []
        for line in lines[-last:] if last else lines:
            try:
                reports.append(decode(line, TickReport))
            except ValueError:  # msgspec's DecodeError and ValidationError
                continue  # a torn line after a crash: telemetry, not a reason to fail
        return reports

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
