"""The one way the tests wait for something another process or thread does.

``wait_until(probe, timeout=..., what=...)`` calls ``probe`` until it returns a true
value and returns that value; past ``timeout`` seconds it fails the test with an
``AssertionError`` that says what was awaited and the probe's last answer (the last look
is at the deadline, not an interval after it). With ``process=``, the wait also fails at
once when that process ends before the probe holds, with its exit status and output,
instead of running out the clock. ``await_until`` is the same inside an async test
(bounded by ``within``; it sleeps with ``anyio.sleep``). A probe may itself fail the test
early (an ``assert``, a ``pytest.skip``), which ends the wait at once.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

__all__ = ["await_until", "wait_until"]

T = TypeVar("T")

INTERVAL = 0.05


def wait_until(
    probe: Callable[[], T | None],
    *,
    timeout: float,
    what: str,
    interval: float = INTERVAL,
    process: subprocess.Popen[Any] | None = None,
) -> T:
    """``probe()``'s first true answer, polled every ``interval`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        answer = probe()
        if answer:
            return answer
        if process is not None and process.poll() is not None:
            raise AssertionError(f"stopped waiting for {what}: {_ended(process)}")
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(_failed(timeout, what, answer))
        time.sleep(min(interval, left))


async def await_until(
    probe: Callable[[], Awaitable[T | None]],
    *,
    within: float,
    what: str,
    interval: float = INTERVAL,
) -> T:
    """``await probe()``'s first true answer, polled every ``interval`` seconds for at
    most ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        answer = await probe()
        if answer:
            return answer
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(_failed(within, what, answer))
        await anyio.sleep(min(interval, left))


def _failed(seconds: float, what: str, answer: object) -> str:
    return f"timed out after {seconds:g} s waiting for {what} (last: {answer!r})"


def _ended(process: subprocess.Popen[Any]) -> str:
    said = ""
    if process.stdout is not None or process.stderr is not None:
        out, err = process.communicate(timeout=30)
        for name, text in (("stdout", out), ("stderr", err)):
            if text:
                shown = text.decode(errors="replace") if isinstance(text, bytes) else text
                said += f"\n--- its {name} ---\n{shown[-3000:]}"
    return f"process {process.pid} ended first (exit {process.returncode}){said}"
