"""The tests' one wait helper: it returns the first true answer, and a timeout names
what was awaited and the last answer."""

from __future__ import annotations

import subprocess
import sys
import time

import anyio
import pytest

from tests.waiting import await_until, wait_until


def test_the_first_true_answer_is_returned() -> None:
    answers = iter([0, "", "ready", "later"])
    assert wait_until(lambda: next(answers), timeout=5, what="ready", interval=0) == "ready"


def test_a_timeout_names_what_was_awaited_and_the_last_answer() -> None:
    with pytest.raises(AssertionError, match=r"waiting for the lock \(last: \[\]\)"):
        wait_until(list, timeout=0.05, what="the lock", interval=0.01)


def test_a_failing_probe_ends_the_wait_at_once() -> None:
    def probe() -> bool:
        raise AssertionError("the process ended")

    with pytest.raises(AssertionError, match="the process ended"):
        wait_until(probe, timeout=60, what="never")


def test_the_async_twin_waits_the_same_way() -> None:
    answers = iter([None, None, 3])

    async def probe() -> int | None:
        return next(answers)

    async def main() -> int | None:
        return await await_until(probe, within=5, what="three", interval=0)

    assert anyio.run(main) == 3

    async def never() -> bool:
        return False

    async def late() -> bool:
        return await await_until(never, within=0.05, what="never", interval=0.01)

    with pytest.raises(AssertionError, match="waiting for never"):
        anyio.run(late)


def test_the_last_look_is_at_the_deadline_not_an_interval_later() -> None:
    looks: list[float] = []
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"timed out after 0.3 s waiting for x \(last: None\)"):
        wait_until(lambda: looks.append(time.monotonic()), timeout=0.3, what="x", interval=10)
    assert len(looks) == 2  # at the start and at the deadline
    assert 0.3 <= looks[-1] - started < 5


def test_a_process_that_ends_first_fails_the_wait_at_once_with_its_output() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; print('no marker'); sys.exit(3)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started = time.monotonic()
    with pytest.raises(AssertionError) as failed:
        wait_until(lambda: False, timeout=60, what="the marker", process=process)
    assert time.monotonic() - started < 30
    said = str(failed.value)
    assert said.startswith(f"stopped waiting for the marker: process {process.pid} ended first")
    assert "(exit 3)\n--- its stdout ---\nno marker" in said


def test_an_answer_true_when_the_process_has_ended_is_still_returned() -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    assert wait_until(lambda: 7, timeout=1, what="seven", process=process) == 7
