"""The tiny client ``seawall hook ...`` is: the call handed to a process that decides it.

A session that dispatches agents starts a hook server (``seawall.hooks.server``)
and tells each agent where it listens (``SEAWALL_HOOK_SOCKET``). A hook call with no
session server (a lead's own Claude Code session, hooks a user installed) goes to the
user's resident decision server instead (``seawall.hooks.resident``), started by the
first such call and gone after a while without calls. Either way the decision is made by
the same code, in a process that imported it once. The client imports only the standard
library's socket core and the wire format, so a call costs little more than the
interpreter's own start.

A session server that does not answer is a hook that cannot decide: pre-tool-use
refuses the call and says why. A resident server that cannot be reached (none runs yet,
or it died) is no failure: the call is decided in this process, as it always could be,
and a server is started for the next calls. One that took the call and then did not
answer is treated like a session server that did not answer.
"""

from __future__ import annotations

import _socket
import os
import sys

from seawall.hooks import wire

__all__ = ["TIMEOUT", "run"]

TIMEOUT = 60.0
"""Seconds a hook call waits for the server's answer before it refuses the call."""


def run(argv: list[str]) -> int | None:
    """Answer ``seawall hook EVENT [--session S]`` through a hook server.

    None when the command line has another shape, or when this call must be decided by
    the full command line (a test arms a kill point, or the resident server is off):
    the caller then handles it, stdin untouched."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    from seawall.hooks import resident as residence

    path = os.environ.get(wire.SOCKET_ENV, "")
    resident = not path
    if resident:
        path = residence.socket_path()
        if not path or os.environ.get("SEAWALL_KILL_AT"):  # a kill point needs this process
            return None
    event, session = parsed
    env = dict(os.environb)
    if session and not env.get(b"SEAWALL_SESSION", b"").strip():
        env[b"SEAWALL_SESSION"] = os.fsencode(session)
    payload = sys.stdin.buffer.read(wire.MAX_REQUEST)
    request = wire.encode_request(event, os.getcwdb(), env, payload)  # noqa: PTH109 - bytes
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(TIMEOUT)
        try:
            if resident and not wire.private(path.rpartition("/")[0]):
                raise FileNotFoundError(path)  # made by someone else: never trusted
            sock.connect(path)
        except OSError:
            if not resident:
                raise
            return _here(event, payload, session, start=True)
        answer = _exchange(sock, request)
        code, out, err = wire.decode_response(answer)
    except (OSError, wire.WireError) as exc:
        return _refuse(event, path, exc)
    finally:
        sock.close()
    if resident and code == wire.RETIRED:  # an older server, now gone: decide, start anew
        return _here(event, payload, session, start=True)
    _emit(out, err)
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


def _exchange(sock: _socket.socket, request: bytes) -> bytes:
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


def _emit(out: bytes, err: bytes) -> None:
    if out:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.buffer.write(err + b"\n")
        sys.stderr.flush()


def _here(event: str, payload: bytes, session: str, *, start: bool) -> int:
    """Decide the call in this process (what ``seawall hook`` does with no server)."""
    if start:
        from seawall.hooks import resident as residence

        residence.start()
    from seawall.hooks.entry import answer

    env = dict(os.environ)
    if session and not env.get("SEAWALL_SESSION", "").strip():
        env["SEAWALL_SESSION"] = session
    response = answer(event, payload, env)
    _emit(response.stdout.encode("utf-8", "replace"), response.stderr.encode("utf-8", "replace"))
    return response.exit_code


def _refuse(event: str, path: str, exc: Exception) -> int:
    from seawall.hooks.entry import failed
    from seawall.hooks.protocol import BLOCK_EXIT

    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    message = f"seawall: the hook server at {path} did not answer ({reason})"
    response = failed(event, message, os.environ)
    if response.exit_code == BLOCK_EXIT:
        message += ": the call cannot be checked, so it is refused"
    sys.stderr.write(message + "\n")
    return response.exit_code
