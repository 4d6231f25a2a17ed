"""Starting an agent under the supervisor, and whether this machine can sandbox it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from coordinator.sandbox.landlock import abi_version
from coordinator.sandbox.policy import SandboxPolicy

__all__ = ["available", "supervised", "supervisor_argv", "unavailable_reason"]

_SANDBOX_DIR = Path(__file__).resolve().parent
_BOOT = f"""\
import sys, types
for name, path in (
    ("coordinator", {str(_SANDBOX_DIR.parent)!r}),
    ("coordinator.sandbox", {str(_SANDBOX_DIR)!r}),
):
    sys.modules[name] = package = types.ModuleType(name)
    package.__path__ = [path]
from coordinator.sandbox.supervise import main
sys.exit(main())
"""


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


def supervised() -> bool:
    """Whether agents run under the supervisor here (it needs Linux: a child subreaper,
    ``PR_SET_PDEATHSIG``, ``/proc``). Elsewhere an agent runs in its own process group,
    which is ended as a whole, and what left the group is not reached."""
    return sys.platform == "linux"


def supervisor_argv(
    argv: Sequence[str], *, policy: SandboxPolicy | None, grace: float
) -> list[str]:
    """``argv`` run under the supervisor, sandboxed by ``policy`` when one is given.

    ``-I`` keeps the agent's working directory and ``PYTHON*`` variables from changing
    which supervisor code runs; ``-S`` skips site-packages. The supervisor needs only the
    standard library and two modules of this package, so the boot code registers the
    package directories without running their ``__init__`` (whose imports would double
    the supervisor's start).
    """
    command = [sys.executable, "-I", "-S", "-c", _BOOT, "--grace", f"{grace:g}"]
    if policy is not None:
        command.append("--sandbox")
        for path in policy.writable:
            command += ["--write", str(path)]
        for path in policy.new_files:
            command += ["--new", str(path)]
    return [*command, "--", *argv]
