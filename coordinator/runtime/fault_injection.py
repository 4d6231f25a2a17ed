"""Named kill points for crash-recovery tests.

A kill point does nothing until a test arms it: ``arm("between-merges")`` (or
``arm("between-merges", nth=2)``, the second time the point is reached) makes the
process kill itself with SIGKILL there, so the tests can prove ``seawall resume`` keeps
its guarantees after a crash at each point. Library code never reads the environment
for this: a program that embeds seawall cannot be killed by a stray variable. Only the
``seawall`` command arms a point, from ``SEAWALL_KILL_AT=<point>[:<n>]``, and only a
point named in ``KILL_POINTS`` (anything else is an error), so crash tests can drive the
real command line. Disarmed (always, outside those tests), a kill point costs one
attribute lookup.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping

from seawall.errors import ConfigurationError

__all__ = ["KILL_POINTS", "arm", "arm_from_environment", "disarm", "kill_point"]

KILL_POINTS = (
    "after-workspaces",
    "after-agent-finished",
    "between-merges",
    "before-advance",
    "mid-advance",
    "after-issue-created",
    "while-writing-state",
    "after-push",
    "after-pull-request",
)

ENVIRONMENT_VARIABLE = "SEAWALL_KILL_AT"


class _Armed:
    __slots__ = ("nth", "point", "reached")

    def __init__(self, point: str, nth: int) -> None:
        self.point = point
        self.nth = nth
        self.reached = 0


_armed: _Armed | None = None


def arm(point: str, *, nth: int = 1) -> None:
    """Kill this process the ``nth`` time ``point`` is reached (tests only)."""
    global _armed
    if point not in KILL_POINTS:
        raise ConfigurationError(
            f"unknown kill point {point!r}; the kill points are: {', '.join(KILL_POINTS)}"
        )
    if nth < 1:
        raise ConfigurationError(f"kill point {point!r}: the count must be 1 or more, not {nth}")
    _armed = _Armed(point, nth)


def disarm() -> None:
    """Make every kill point a no-op again."""
    global _armed
    _armed = None


def arm_from_environment(environ: Mapping[str, str] | None = None) -> None:
    """Arm the point named by ``SEAWALL_KILL_AT`` (the command line's entry calls this)."""
    wanted = (os.environ if environ is None else environ).get(ENVIRONMENT_VARIABLE, "")
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    try:
        count = int(nth or 1)
    except ValueError:
        raise ConfigurationError(
            f"{ENVIRONMENT_VARIABLE}={wanted!r}: the count after ':' must be a number"
        ) from None
    arm(point, nth=count)


def kill_point(name: str) -> None:
    """Die here, at once and without cleanup, when a test armed this point."""
    armed = _armed
    if armed is None or armed.point != name:
        return
    armed.reached += 1
    if armed.reached >= armed.nth:
        os.kill(os.getpid(), signal.SIGKILL)
