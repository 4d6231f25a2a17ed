"""The resident decision server's loop (see ``seawall.hooks.resident``).

One call at a time: the request is read whole, the caller's environment and working
directory are put in place, ``seawall.hooks.entry.answer_request`` decides, and
the process goes back to ``/`` and waits. Before each call the server checks that no
source file it imported has changed since it imported it; if one did, it answers
``wire.RETIRED`` and leaves. Leaving (idle, changed sources) first removes the socket,
so no new call can reach it, then answers every call already waiting.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import socket
import sys
import time
from pathlib import Path

from seawall.hooks import wire

__all__ = ["serve"]

_LOCK_WAIT = 2.0  # a retiring server may still hold the lock this long
_CALL_TIMEOUT = 30.0  # a caller that connects and sends nothing is dropped after this


def serve(path: str, *, idle: float) -> None:
    """Serve hook calls on ``path`` until ``idle`` seconds pass without one."""
    socket_file = Path(path)
    if not wire.private(str(socket_file.parent)):
        return
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
    try:
        lock = os.open(socket_file.with_suffix(".lock"), flags, 0o600)
    except OSError:
        return  # a directory this process may not write (a sandbox's): no server
    try:
        if not _lock(lock):
            return  # another server of this installation runs
        os.ftruncate(lock, 0)
        os.write(lock, b"%d\n" % os.getpid())  # who serves, for a person looking
        from seawall.hooks.entry import HOOK_MODULES  # the decision code, once

        for module in HOOK_MODULES.values():
            importlib.import_module(module)
        sources = _sources({})
        with contextlib.suppress(FileNotFoundError):
            socket_file.unlink()  # a dead server's socket: the lock says none listens on it
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with listener:
            listener.bind(path)
            inode = socket_file.stat().st_ino
            listener.listen(64)
            listener.settimeout(idle)
            while True:
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    break
                if not _serve_one(conn, sources):
                    break
            _retire(listener, socket_file, inode, sources)
    finally:
        os.close(lock)


def _lock(fd: int) -> bool:
    deadline = time.monotonic() + _LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        else:
            return True


def _sources(known: dict[str, int]) -> dict[str, int]:
    """The modification time of every imported module of this package (``known`` kept,
    modules imported since added)."""
    root = str(Path(wire.__file__).absolute().parent.parent) + os.sep
    found = dict(known)
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if isinstance(name, str) and name.startswith(root) and name not in found:
            with contextlib.suppress(OSError):
                found[name] = Path(name).stat().st_mtime_ns
    return found


def _changed(sources: dict[str, int]) -> bool:
    for name, mtime in sources.items():
        try:
            if Path(name).stat().st_mtime_ns != mtime:
                return True
        except OSError:
            return True
    return False


def _serve_one(conn: socket.socket, sources: dict[str, int]) -> bool:
    """Answer one caller; False when this server must leave (its sources changed)."""
    with conn:
        try:
            conn.settimeout(_CALL_TIMEOUT)
            data = _receive(conn)
            if _changed(sources):
                conn.sendall(wire.encode_response(wire.RETIRED, "", ""))
                return False
            conn.sendall(wire.encode_response(*_decide(data)))
        except OSError:
            pass  # the caller is gone: it refuses its own call
        sources.update(_sources(sources))
        return True


def _receive(conn: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= wire.MAX_REQUEST:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _decide(data: bytes) -> tuple[int, str, str]:
    """The call decided as in the caller's own process: its environment and directory."""
    from seawall.hooks.entry import answer, answer_request

    try:
        event, cwd, env, payload = wire.decode_request(data)
    except wire.WireError:
        return answer_request(data)  # refused there, with the reason
    os.environ.clear()
    os.environ.update(env)
    try:
        with contextlib.suppress(OSError):
            os.chdir(cwd)
        response = answer(event, payload, env, cwd=cwd)
        return response.exit_code, response.stdout, response.stderr
    finally:
        os.chdir("/")


def _retire(listener: socket.socket, path: Path, inode: int, sources: dict[str, int]) -> None:
    """Leave: the socket goes first (new calls decide by themselves), then every call
    already waiting is answered."""
    with contextlib.suppress(OSError):
        if path.stat().st_ino == inode:
            path.unlink()
    time.sleep(0.05)  # a connect that found the socket just before it went is queued by now
    listener.setblocking(False)
    while True:
        try:
            conn, _ = listener.accept()
        except (BlockingIOError, InterruptedError, OSError):
            return
        conn.setblocking(True)
        _serve_one(conn, sources)
