"""One live session per repository: the lock ``<repo>/.seawall/lock``.

The lock is an advisory ``flock`` (the kernel drops it when the holder exits or dies), and
the file says who holds it: ``{"session": ..., "pid": ..., "command": ...}``. A second
coordinator is refused at once, naming the live session and its pid. A holder that died
(SIGKILL, a reboot) leaves its record behind; the next coordinator takes the lock over
and says so. The record is cleared when the holder lets go.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from seawall.codec import decode, encode
from seawall.errors import SessionLockedError

__all__ = ["LockHolder", "repository_lock"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LockHolder:
    """Who holds the lock, as its file says (``?`` and None: it does not say)."""

    session: str = "?"
    pid: int | None = None
    command: str = "?"


@contextlib.contextmanager
def repository_lock(
    repo: Path, *, session: str, command: str, on_takeover: Callable[[str], None]
) -> Iterator[None]:
    """Hold the repository's session lock for ``session`` while the block runs.

    Raises ``SessionLockedError`` naming the live holder when another process has it;
    ``on_takeover`` gets one line when the lock of a dead holder is taken over.
    """
    path = repo / ".seawall" / "lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            raise SessionLockedError(
                f"another seawall session is live in {repo}: session "
                f"{holder.session} (pid {'?' if holder.pid is None else holder.pid}, "
                f"`seawall {holder.command}`). One session runs per repository: "
                "wait for it to finish, or stop that process"
            ) from None
        previous = _read(fd)
        if previous.pid not in (None, os.getpid()):
            on_takeover(
                f"took over the repository lock of session {previous.session} "
                f"(pid {previous.pid} is no longer running)"
            )
        _write(fd, LockHolder(session=session, pid=os.getpid(), command=command))
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # a clean release leaves no holder to take over from
    finally:
        os.close(fd)


def _read(fd: int) -> LockHolder:
    """The holder the file names; an empty or unreadable file names none."""
    try:
        raw = os.pread(fd, 4096, 0)
        return decode(raw, LockHolder) if raw.strip() else LockHolder()
    except (OSError, ValueError):  # msgspec's DecodeError and ValidationError
        return LockHolder()


def _write(fd: int, holder: LockHolder) -> None:
    with contextlib.suppress(OSError):  # the record is informational; the flock is the lock
        os.ftruncate(fd, 0)
        os.pwrite(fd, encode(holder) + b"\n", 0)
