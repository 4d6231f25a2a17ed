"""The session's hook server: its agents' hook calls decided in one resident process.

Started before a wave's agents are dispatched and stopped after the last one ended,
owned by the dispatch that started it. It listens on a Unix socket in a directory of
its own under the system's temporary directory, which no agent's sandbox lets it write
(an agent's temporary files go to a directory of its own), so no agent can replace the
socket or remove it; connecting needs no write grant. Each call is answered by
``coordinator.hooks.entry.answer``, the same function a hook process runs by itself,
one call at a time on a worker thread, so the session's event loop keeps moving and a
lead's hooks that keep breaker state save it exactly as they would in their own
process. Nothing is kept in memory between calls but the imported modules.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc

from coordinator.hooks.entry import answer
from coordinator.hooks.protocol import BLOCK_EXIT, HookResponse
from coordinator.hooks.wire import MAX_REQUEST, WireError, decode_request, encode_response

__all__ = ["serve_hooks"]


@asynccontextmanager
async def serve_hooks() -> AsyncIterator[Path]:
    """Serve hook calls while the block runs; yields the socket's path."""
    folder = Path(tempfile.mkdtemp(prefix="seawall-hooks-"))
    path = folder / "hooks.sock"
    limiter = anyio.CapacityLimiter(1)

    async def serve_one(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            response = await _respond(await _receive(stream), limiter)
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


async def _respond(data: bytes, limiter: anyio.CapacityLimiter) -> tuple[int, str, str]:
    try:
        event, cwd, env, payload = decode_request(data)
    except WireError as exc:
        refusal = HookResponse(exit_code=BLOCK_EXIT, stderr=f"seawall: bad hook request: {exc}")
        return refusal.exit_code, refusal.stdout, refusal.stderr
    response = await anyio.to_thread.run_sync(
        lambda: answer(event, payload, env, cwd=cwd), limiter=limiter
    )
    return response.exit_code, response.stdout, response.stderr
