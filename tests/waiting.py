"""The one way the tests wait for something another process or thread does.

``wait_until(probe, timeout=..., what=...)`` calls ``probe`` until it returns a true
value and returns that value; past ``timeout`` seconds it fails the test with an
``AssertionError`` that says what was awaited and the probe's last answer.
``await_until`` is the same inside an async test (bounded by ``within``; it sleeps with
``anyio.sleep``). A probe may itself fail the test early (an ``assert`` that the awaited
process is still alive), which ends the wait at once.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

__all__ = ["await_until", "wait_until"]

T = TypeVar("T")

INTERVAL = 0.05


def wait_until(
    probe: Callable[[], T], *, timeout: float, what: str, interval: float = INTERVAL
) -> T:
    """``probe()``'s first true answer, polled every ``interval`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        answer = probe()
        if answer:
            return answer
        if time.monotonic() >= deadline:
            raise AssertionError(_failed(timeout, what, answer))
        time.sleep(interval)


async def await_until(
    probe: Callable[[], Awaitable[T]], *, within: float, what: str, interval: float = INTERVAL
) -> T:
    """``await probe()``'s first true answer, polled every ``interval`` seconds for at
    most ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        answer = await probe()
        if answer:
            return answer
        if time.monotonic() >= deadline:
            raise AssertionError(_failed(within, what, answer))
        await anyio.sleep(interval)


def _failed(seconds: float, what: str, answer: object) -> str:
    return f"timed out after {seconds:g} s waiting for {what} (last: {answer!r})"
