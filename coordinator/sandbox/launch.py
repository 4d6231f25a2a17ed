"""Starting an agent under the supervisor, and whether this machine can sandbox it."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from coordinator.sandbox.landlock import abi_version
from coordinator.sandbox.policy import SandboxPolicy

__all__ = ["available", "supervisor_argv", "unavailable_reason"]


def available() -> bool:
    """Whether this kernel can sandbox agents (Landlock is present and enabled)."""
    return abi_version() >= 1


def unavailable_reason() -> str:
    """Why agents cannot be sandboxed here, or "" when they can."""
    if sys.platform != "linux":
        return f"no OS sandbox on {sys.platform}: only Linux (Landlock) is supported"
    if not available():
        return "this Linux kernel has no Landlock (disabled, or older than 5.13)"
    return ""


def supervisor_argv(
    argv: Sequence[str], *, policy: SandboxPolicy | None, grace: float
) -> list[str]:
    """``argv`` run under the supervisor, sandboxed by ``policy`` when one is given.

    ``-I`` keeps the agent's working directory and ``PYTHON*`` variables from changing
    which supervisor code runs."""
    command = [sys.executable, "-I", "-m", "coordinator.sandbox.supervise"]
    command += ["--grace", f"{grace:g}"]
    if policy is not None:
        command += ["--policy", policy.to_json()]
    return [*command, "--", *argv]
