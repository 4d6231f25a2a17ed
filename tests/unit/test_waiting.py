"""The tests' one wait helper: it returns the first true answer, and a timeout names
what was awaited and the last answer."""

from __future__ import annotations

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
