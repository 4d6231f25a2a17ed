"""The tiny client ``seawall hook ...`` is when the session serves its agents' hooks.

A session that dispatches agents starts a hook server (``coordinator.hooks.server``)
and tells each agent where it listens (``SEAWALL_HOOK_SOCKET``). Each hook call is then
a short process that hands its stdin and environment to that server and prints the
answer: the decision is made by the same code, in a process that imported it once. The
client imports only the standard library's socket core and the wire format, so a call
costs little more than the interpreter's own start. A server that does not answer is a
hook that cannot decide: pre-tool-use refuses the call and says why.
"""

from __future__ import annotations

import _socket
import os
import sys

from coordinator.hooks import wire

__all__ = ["TIMEOUT", "run"]

TIMEOUT = 60.0
"""Seconds a hook call waits for the server's answer before it refuses the call."""


def run(argv: list[str]) -> int | None:
    """Answer ``seawall hook EVENT [--session S]`` through the session's hook server.

    None when no server is named or the command line has another shape: the full
    command line then handles it (the decision in this process, or a usage error)."""
    path = os.environ.get(wire.SOCKET_ENV, "")
    parsed = _parse(argv) if path else None
    if parsed is None:
        return None
    event, session = parsed
    env = dict(os.environb)
    if session and not env.get(b"SEAWALL_SESSION", b"").strip():
        env[b"SEAWALL_SESSION"] = os.fsencode(session)
    payload = sys.stdin.buffer.read(wire.MAX_REQUEST)
    request = wire.encode_request(event, os.getcwdb(), env, payload)  # noqa: PTH109 - bytes
    try:
        code, out, err = wire.decode_response(_exchange(path, request))
    except (OSError, wire.WireError) as exc:
        return _refuse(event, path, exc)
    if out:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.buffer.write(err + b"\n")
        sys.stderr.flush()
    return code


def _parse(argv: list[str]) -> tuple[str, str] | None:
    if len(argv) < 2 or argv[0] != "hook" or argv[1] not in wire.EVENTS:
        return None
    rest = argv[2:]
    if not rest:
        return argv[1], ""
    if len(rest) == 2 and rest[0] == "--session":
        return argv[1], rest[1]
    if len(rest) == 1 and rest[0].startswith("--session="):
        return argv[1], rest[0].removeprefix("--session=")
    return None


def _exchange(path: str, request: bytes) -> bytes:
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(TIMEOUT)
        sock.connect(path)
        sock.sendall(request)
        sock.shutdown(_socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while size <= wire.MAX_REQUEST:  # an answer is far smaller: bounded all the same
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        sock.close()


def _refuse(event: str, path: str, exc: Exception) -> int:
    from coordinator.hooks.entry import failed
    from coordinator.hooks.protocol import BLOCK_EXIT

    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    message = f"seawall: the session's hook server at {path} did not answer ({reason})"
    response = failed(event, message, os.environ)
    if response.exit_code == BLOCK_EXIT:
        message += ": the call cannot be checked, so it is refused"
    sys.stderr.write(message + "\n")
    return response.exit_code
