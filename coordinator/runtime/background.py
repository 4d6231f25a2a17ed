"""A task that runs beside a block of code and ends with it (a ticker, a heartbeat),
without changing what the block raises."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import anyio

__all__ = ["alongside"]


@asynccontextmanager
async def alongside(task: Callable[[], Coroutine[Any, Any, None]]) -> AsyncIterator[None]:
    """Run ``task`` for the duration of the body, cancelled when the body ends.

    A task group groups whatever ends it in an ``ExceptionGroup``; the body's own
    error (or the task's) comes out here as it was raised, so wrapping a block in
    ``alongside`` never changes what its callers catch.
    """
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(task)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
    except BaseExceptionGroup as errors:
        if len(errors.exceptions) == 1:
            raise errors.exceptions[0] from errors
        raise
