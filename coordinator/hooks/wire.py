"""The bytes a hook client and the session's hook server exchange over a Unix socket.

A request is one header line, ``seawall-hook/1 <event> <cwd bytes> <env bytes> <payload
bytes>``, then the client's working directory, its environment (``NAME=value`` entries
separated by NUL bytes) and the hook's stdin as it came. The answer is one header line,
``<exit code> <stdout bytes> <stderr bytes>``, then both texts. The client sends its
request and shuts its side down; the server answers and closes. Nothing here imports
anything: the client runs once per tool call, and every module it loads is paid for on
every call; ``os`` is loaded by the interpreter itself.
"""

from __future__ import annotations

import os

__all__ = [
    "EVENTS",
    "MAX_REQUEST",
    "RETIRED",
    "SOCKET_ENV",
    "WireError",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "private",
]

EVENTS = ("pre-tool-use", "post-tool-use", "subagent-stop")
"""The hook events ``seawall hook`` answers."""

SOCKET_ENV = "SEAWALL_HOOK_SOCKET"
"""The variable that tells an agent's hooks where the session's hook server listens."""

MAX_REQUEST = 17 * 1024 * 1024
"""A hook input is at most 16 MiB; the environment fits in the rest."""

RETIRED = -1
"""The exit code of an answer that decided nothing: the resident server has left, and the
caller decides the call by itself."""

_MAGIC = b"seawall-hook/1"


def private(folder: str) -> bool:
    """Whether ``folder`` is a real directory of this user that nobody else may write (a
    socket is trusted only in such a folder)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return (
        (info.st_mode & 0o170000) == 0o040000
        and info.st_uid == os.getuid()
        and not (info.st_mode & 0o022)
    )


class WireError(ValueError):
    """Bytes that are not a request or an answer of this format."""


def encode_request(event: str, cwd: bytes, env: dict[bytes, bytes], payload: bytes) -> bytes:
    blob = b"\0".join(name + b"=" + value for name, value in env.items())
    sizes = (len(cwd), len(blob), len(payload))
    header = b"%s %s %d %d %d\n" % (_MAGIC, event.encode(), *sizes)
    return header + cwd + blob + payload


def decode_request(data: bytes) -> tuple[str, str, dict[str, str], bytes]:
    """(event, working directory, environment, payload) of a request; raises
    ``WireError``."""
    header, _, body = data.partition(b"\n")
    fields = header.split(b" ")
    if len(fields) != 5 or fields[0] != _MAGIC:
        raise WireError("not a seawall hook request")
    try:
        cwd_size, env_size, payload_size = (int(field) for field in fields[2:])
    except ValueError:
        raise WireError("the request's sizes are not numbers") from None
    if cwd_size + env_size + payload_size != len(body):
        raise WireError(f"the request was cut short ({len(body)} bytes)")
    cwd = _text(body[:cwd_size])
    env: dict[str, str] = {}
    blob = body[cwd_size : cwd_size + env_size]
    for entry in blob.split(b"\0") if blob else ():
        name, sep, value = entry.partition(b"=")
        if sep:
            env[_text(name)] = _text(value)
    return _text(fields[1]), cwd, env, body[cwd_size + env_size :]


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def encode_response(exit_code: int, stdout: str, stderr: str) -> bytes:
    out, err = stdout.encode("utf-8", "replace"), stderr.encode("utf-8", "replace")
    return b"%d %d %d\n" % (exit_code, len(out), len(err)) + out + err


def decode_response(data: bytes) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of an answer; raises ``WireError``."""
    header, _, body = data.partition(b"\n")
    try:
        code, out_size, err_size = (int(field) for field in header.split(b" "))
    except ValueError:
        raise WireError("the hook server's answer has no valid header") from None
    if out_size + err_size != len(body):
        raise WireError("the hook server's answer was cut short")
    return code, body[:out_size], body[out_size:]
