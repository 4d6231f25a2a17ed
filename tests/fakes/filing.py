"""A carryover filer for tests: quick backoff, recorded instead of slept.

``Sleeps`` is the list of the waits a ``RetryPolicy`` asked for; ``quick_filer`` files
for session ``s1`` with a 10 ms first backoff and no settle window, so a fault test
checks the waits a filing asked for without spending them.
"""

from __future__ import annotations

from typing import Any

from seawall.carryover import CarryoverFiler, RetryPolicy
from seawall.tracker import IssueTracker

__all__ = ["Sleeps", "quick_filer"]


class Sleeps(list[float]):
    """Records each wait instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def quick_filer(tracker: IssueTracker, sleeps: Sleeps | None = None, **kw: Any) -> CarryoverFiler:
    """A filer for session ``s1`` whose waits go to ``sleeps``; ``kw`` for the filer."""
    retry = RetryPolicy(
        base_delay=0.01, settle=0.0, sleep=sleeps if sleeps is not None else Sleeps()
    )
    return CarryoverFiler(tracker, session="s1", retry=retry, **kw)
