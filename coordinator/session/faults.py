"""Named kill points for crash-recovery tests.

``SEAWALL_KILL_AT=<point>`` in the coordinator's environment makes it kill itself with
SIGKILL when it reaches that point, so the tests can prove ``seawall resume`` keeps its
guarantees after a crash at each of them. Unset (always, outside those tests), a kill
point costs one environment lookup.
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
    "after-issue-created",
    "while-writing-state",
)


def kill_point(name: str) -> None:
    """Die here, at once and without cleanup, when ``SEAWALL_KILL_AT`` names this point."""
    if os.environ.get("SEAWALL_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
