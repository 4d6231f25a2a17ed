"""The resident decision server: hook calls with no session server, decided in one process.

A lead's own Claude Code session (through the plugin) and hooks a user installed have no
session to serve them, and deciding a call in the hook's own process means importing the
decision code on every tool call. The first such call starts this server (detached, in
a session of its own) and decides by itself; later calls reach the server through the
hook client (``seawall.hooks.client``). One server per user and per installation:
its socket is ``/tmp/seawall-resident-<uid>/<key>.sock``, the key derived from the
interpreter and the package's location, in a directory only the user may enter (checked
before every connect, so a directory someone else made is never trusted).

Each call is answered as the hook's own process would answer it: one at a time, with the
caller's environment and working directory in place, by ``seawall.hooks.entry``.
The server leaves after ``SEAWALL_HOOK_IDLE`` seconds without a call (300 by default),
and when a source file it imported changed: it then answers the call it holds with
``wire.RETIRED`` (not decided), and the client decides it and starts a new server. A
server that is killed leaves a socket nobody listens on: the next call finds it refused,
decides by itself and starts a server, which replaces the socket. Two servers started at
once are one: a lock file admits one.
"""

# ruff: noqa: PTH100, PTH103, PTH120 - pathlib is an import every hook call would pay for
from __future__ import annotations

import os
import sys

from seawall.hooks import wire

__all__ = ["IDLE_ENV", "RESIDENT_ENV", "main", "socket_path", "start"]

RESIDENT_ENV = "SEAWALL_HOOK_RESIDENT"
"""``off`` makes every hook call with no session server decide in its own process; an
absolute path names the directory of the resident server's socket instead of the
default (it must be a directory of this user that nobody else may write)."""

IDLE_ENV = "SEAWALL_HOOK_IDLE"
"""Seconds the resident server waits for a call before it leaves (300 by default)."""

_IDLE = 300.0
_ROOT = "/tmp"  # never $TMPDIR: an agent's TMPDIR is a directory the agent may write
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); import seawall.hooks.resident as r; r.main(sys.argv[2])"  # noqa: E501


def _package_parent() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(wire.__file__))))


def socket_path() -> str:
    """Where this installation's resident server listens for this user ("" when off)."""
    chosen = os.environ.get(RESIDENT_ENV, "").strip()
    if chosen.lower() in ("off", "0", "no", "false"):
        return ""
    folder = chosen.rstrip("/") if chosen.startswith("/") else ""
    seed = f"{sys.executable}\0{_package_parent()}".encode("utf-8", "surrogateescape")
    key = 0xCBF29CE484222325  # 64-bit FNV-1a: a name, not a secret; hashlib costs an import
    for byte in seed:
        key = ((key ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{folder or _ROOT + f'/seawall-resident-{os.getuid()}'}/{key:016x}.sock"


def start() -> None:
    """Start the resident server in the background; never fails the call that asks."""
    path = socket_path()
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return
    if not wire.private(folder):
        return
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    try:
        actions = [(os.POSIX_SPAWN_DUP2, null, fd) for fd in (0, 1, 2)]
        argv = [sys.executable, "-P", "-c", _BOOT, _package_parent(), path]
        os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions, setsid=True)
    except OSError:
        pass  # no server: every call keeps deciding in its own process
    finally:
        os.close(null)


def main(path: str) -> None:
    """The server process's entry (see ``_BOOT``)."""
    try:
        idle = float(os.environ.get(IDLE_ENV, "") or _IDLE)
    except ValueError:
        idle = _IDLE
    os.closerange(3, 65536)  # a pipe the first caller inherited must not be held open
    os.chdir("/")  # hold no caller's directory between calls
    from seawall.hooks.residentserver import serve

    serve(path, idle=max(idle, 0.1))


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1])
