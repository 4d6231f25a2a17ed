"""Kill points fire only when a test arms them; the environment alone never arms library code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from seawall.errors import ConfigurationError
from seawall.runtime import fault_injection as faults


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_stray_variable_does_not_kill_an_embedding_program() -> None:
    result = _run(
        "from seawall.runtime.fault_injection import kill_point\n"
        "kill_point('between-merges')\nprint('alive')",
        SEAWALL_KILL_AT="between-merges",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "alive"


def test_an_armed_point_kills_on_the_nth_time() -> None:
    result = _run(
        "from seawall.runtime import fault_injection as faults\n"
        "faults.arm('mid-advance', nth=2)\n"
        "faults.kill_point('mid-advance')\nprint('first', flush=True)\n"
        "faults.kill_point('between-merges')\n"
        "faults.kill_point('mid-advance')\nprint('second')",
    )
    assert result.returncode == -signal.SIGKILL
    assert result.stdout.split() == ["first"]


def test_the_command_line_arms_from_the_environment() -> None:
    result = _run(
        "from seawall.runtime import fault_injection as faults\n"
        "faults.arm_from_environment()\n"
        "faults.kill_point('before-advance')\nprint('alive')",
        SEAWALL_KILL_AT="before-advance",
    )
    assert result.returncode == -signal.SIGKILL


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("no-such-point", "unknown kill point 'no-such-point'"),
        ("mid-advance:x", "must be a number"),
    ],
)
def test_bad_values_are_named(value: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        faults.arm_from_environment({"SEAWALL_KILL_AT": value})
    faults.disarm()


def test_disarm_makes_points_no_ops() -> None:
    faults.arm("after-workspaces")
    faults.disarm()
    faults.kill_point("after-workspaces")  # would SIGKILL the test run if still armed
    assert faults._armed is None
