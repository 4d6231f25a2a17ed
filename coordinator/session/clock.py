"""The session's wall clock, the time ``budgets.session_minutes`` bounds.

It counts the time seawall itself runs the session: ``run`` and every ``resume`` (and,
in step mode, each ``prepare`` and ``review`` call), summed in the ledger's
``running_s``. Time between runs is not counted: neither a dead coordinator's until its
resume nor a halted session's until someone resumes it. The count is written into the
ledger at every save, so a coordinator killed mid-wave loses at most the time since
its last save.

The budget is measured from ``clock_start_s`` (0 when the session starts): a resume
after a halt on this budget moves it to the time run so far, granting another
``session_minutes``, because such a halt hands the choice to a person and resuming is
that choice. Time comes from an injected clock (``time.monotonic`` by default), so
tests run a session past its budget without waiting for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from seawall.state.ledger import SessionState

__all__ = ["Clock", "SessionClock"]

Clock = Callable[[], float]


class SessionClock:
    """Adds the time this process runs a session to the session's ledger."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._mark: float | None = None

    def start(self) -> None:
        """Count from now (each run, resume or step-mode call starts the count again)."""
        self._mark = self._clock()

    def tick(self, state: SessionState) -> None:
        """Add the time since the last tick (or the start) to ``state.running_s``."""
        if self._mark is None:
            return
        now = self._clock()
        state.running_s += max(0.0, now - self._mark)
        self._mark = now

    @staticmethod
    def elapsed(state: SessionState) -> float:
        """Seconds run since the current ``session_minutes`` allowance began."""
        return max(0.0, state.running_s - state.clock_start_s)

    @staticmethod
    def grant(state: SessionState) -> None:
        """Begin a new allowance at the time run so far."""
        state.clock_start_s = state.running_s
