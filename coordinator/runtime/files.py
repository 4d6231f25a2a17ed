"""Small filesystem primitives: atomic writes and advisory file locks."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from seawall.errors import SessionLockedError, StateError

__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "file_lock",
    "fsync_dir",
    "lock_is_held",
    "write_in_place",
    "write_temp",
]


def atomic_write_bytes(
    path: Path,
    data: bytes,
    *,
    before_replace: Callable[[], None] | None = None,
    durable: bool = True,
) -> None:
    """Write ``data`` to ``path`` so a reader sees the old or the new file, never a mix.

    The bytes go to a temporary file in the same directory, are flushed to disk, and
    replace the target with ``os.replace``. On any failure (a full disk included) the
    old file is untouched and the temporary file is removed. ``durable=False`` skips the
    flushes, for a file that is only ever rendered from another (a power cut may then
    leave it empty, never torn).
    """
    tmp = write_temp(path, data, durable=durable)
    try:
        if before_replace is not None:
            before_replace()
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    if durable:
        fsync_dir(path.parent)


def write_temp(path: Path, data: bytes, *, durable: bool = True) -> Path:
    """A temporary file beside ``path`` holding ``data`` (flushed to disk unless not
    ``durable``), for the caller to rename over ``path``. On a failure nothing is left
    and a full disk is a StateError naming ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if data:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
        else:
            os.close(fd)  # an empty file: nothing to write or flush
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp_name).unlink()
        if exc.errno == errno.ENOSPC:
            raise StateError(f"cannot write {path}: the disk is full; nothing was changed") from exc
        raise
    return Path(tmp_name)


def atomic_write_text(
    path: Path,
    text: str,
    *,
    before_replace: Callable[[], None] | None = None,
    durable: bool = True,
) -> None:
    # a file name that is not UTF-8 (a surrogate-escaped byte) is written as its bytes
    data = text.encode("utf-8", "surrogateescape")
    atomic_write_bytes(path, data, before_replace=before_replace, durable=durable)


def write_in_place(path: Path, text: str) -> None:
    """Overwrite ``path`` with ``text`` in the same file, with no flush and no rename.

    For a file that is only ever rendered from another and rewritten often: replacing a
    file by rename makes ext4 flush its data first (as costly as an fsync), writing in
    place does not. A reader or a crash in the middle of the write may see it torn; the
    next rewrite mends it.
    """
    data = text.encode("utf-8", "surrogateescape")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(data))
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise StateError(f"cannot write {path}: the disk is full") from exc
        raise
    finally:
        os.close(fd)


def fsync_dir(directory: Path) -> None:
    """Make the names in ``directory`` (a rename into it) durable."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_lock(path: Path, *, blocking: bool = True, what: str = "the session") -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created if missing).

    With ``blocking=False`` a lock held elsewhere raises ``SessionLockedError`` at once.
    The lock is released when the holder exits or dies (the kernel drops it).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        flags = fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError as exc:
            raise SessionLockedError(
                f"{what} is locked by another seawall process (lock file {path})"
            ) from exc
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # the pid is informational; the flock is the lock
        yield
    finally:
        os.close(fd)


def lock_is_held(path: Path) -> bool:
    """Whether some live process holds the ``file_lock`` on ``path`` right now.

    On Linux the kernel's lock table (``/proc/locks``) answers without touching the
    lock, so asking never makes a coordinator that starts at the same moment fail.
    Elsewhere a non-blocking shared lock is tried and released at once.
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        return False
    table = _kernel_locks()
    if table is not None:
        return info.st_ino in table
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _kernel_locks() -> set[int] | None:
    """The inode of every file with a FLOCK lock, or None off Linux. Inodes only: an
    overlay filesystem reports another device here than ``stat`` does."""
    try:
        text = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    held: set[int] = set()
    for line in text.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a blocked waiter has "->"
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        with contextlib.suppress(ValueError):
            held.add(int(fields[5].rsplit(":", 1)[-1]))
    return held
