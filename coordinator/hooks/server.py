"""The session's hook server: its agents' hook calls decided in one resident process.

Started before a wave's agents are dispatched and stopped after the last one ended,
owned by the dispatch that started it. It listens on a Unix socket in a directory of
its own under the system's temporary directory, which no agent's sandbox lets it write
(an agent's temporary files go to a directory of its own), so no agent can replace the
socket or remove it; connecting needs no write grant. The directory is named after the
process that owns it, so one a killed session left behind is told apart and removed by
the next server. Each call is answered by
``seawall.hooks.entry.answer``, the same function a hook process runs by itself,
one call at a time on a worker thread, so the session's event loop keeps moving and a
lead's hooks that keep breaker state save it exactly as they would in their own
process. Nothing is kept in memory between calls but the imported modules.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc

from seawall.hooks.entry import answer_request
from seawall.hooks.wire import MAX_REQUEST, encode_response
from seawall.runtime.processes import process_alive

__all__ = ["PREFIX", "remove_leftovers", "serve_hooks"]

PREFIX = "seawall-hooks-"
"""Each server's directory is ``PREFIX<pid of its owner>-<random>`` in the temporary
directory."""


@asynccontextmanager
async def serve_hooks() -> AsyncIterator[Path]:
    """Serve hook calls while the block runs; yields the socket's path."""
    root = _socket_root(Path(tempfile.gettempdir()))
    remove_leftovers(root)
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root))
    path = folder / "hooks.sock"
    limiter = anyio.CapacityLimiter(1)

    async def serve_one(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            data = await _receive(stream)
            response = await anyio.to_thread.run_sync(answer_request, data, limiter=limiter)
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.send(encode_response(*response))  # unless the caller is gone

    try:
        listener = await anyio.create_unix_listener(path, mode=0o600)
        async with listener, anyio.create_task_group() as group:
            group.start_soon(listener.serve, serve_one)
            try:
                yield path
            finally:
                group.cancel_scope.cancel()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


_SOCKET_PATH_MAX = 107
"""The longest socket path the kernel binds (``sun_path`` holds 108 bytes with its NUL)."""

_NAME_ROOM = len(PREFIX) + 7 + 1 + 8 + len("/hooks.sock") + 1
"""Bytes the server's directory and socket names add to the root (a pid of up to 7
digits and ``mkdtemp``'s 8 random characters)."""


def _socket_root(root: Path) -> Path:
    """``root``, or ``/tmp`` where a socket beneath ``root`` would be longer than the
    kernel binds (a deep ``TMPDIR``)."""
    if len(os.fsencode(root)) + _NAME_ROOM <= _SOCKET_PATH_MAX or not Path("/tmp").is_dir():
        return root
    return Path("/tmp")


def remove_leftovers(root: Path) -> list[Path]:
    """Remove the directories that killed hook servers left in ``root``; returns them.

    A directory is a leftover when it is this user's, its name's owner process is dead,
    and it holds nothing but the server's socket (which nobody can listen on once its
    owner is gone). A directory named without an owner (made before names carried one)
    is a leftover when its socket refuses connections. Anything else is left alone.
    """
    removed: list[Path] = []
    for folder in root.glob(f"{PREFIX}*"):
        with contextlib.suppress(OSError):
            if _is_leftover(folder):
                shutil.rmtree(folder)
                removed.append(folder)
    return removed


def _is_leftover(folder: Path) -> bool:
    info = folder.lstat()
    if not folder.is_dir() or folder.is_symlink() or info.st_uid != os.getuid():
        return False
    entries = [entry.name for entry in folder.iterdir()]
    if any(name != "hooks.sock" for name in entries):
        return False
    owner = folder.name.removeprefix(PREFIX).split("-", 1)[0]
    if owner.isdigit():
        if process_alive(int(owner)):
            return False
        return not entries or _refused(folder / "hooks.sock")  # another pid namespace's?
    return bool(entries) and _refused(folder / "hooks.sock")


def _refused(path: Path) -> bool:
    """Whether nothing listens on the Unix socket ``path``."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            return True
        except OSError:
            return False
    return False


async def _receive(stream: anyio.abc.SocketStream) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_REQUEST:
        try:
            chunk = await stream.receive(1 << 16)
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
