"""Named kill points for crash-recovery tests.

``SEAWALL_KILL_AT=<point>`` (or ``<point>:<n>``, the n-th time the point is reached) in
the coordinator's environment makes it kill itself with SIGKILL there, so the tests can
prove ``seawall resume`` keeps its guarantees after a crash at each of them. Unset
(always, outside those tests), a kill point costs one environment lookup.
"""

from __future__ import annotations

import os
import signal

__all__ = ["KILL_POINTS", "kill_point"]

KILL_POINTS = (
    "after-workspaces",
    "after-agent-finished",
    "between-merges",
    "before-advance",
    "mid-advance",
    "after-issue-created",
    "while-writing-state",
)


_reached: dict[str, int] = {}


def kill_point(name: str) -> None:
    """Die here, at once and without cleanup, when ``SEAWALL_KILL_AT`` names this point."""
    wanted = os.environ.get("SEAWALL_KILL_AT")
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    if point != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
