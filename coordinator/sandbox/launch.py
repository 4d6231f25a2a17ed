"""Starting an agent under the supervisor, and whether this machine can sandbox it."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path

from seawall.sandbox.landlock import abi_version
from seawall.sandbox.policy import SandboxPolicy

__all__ = [
    "agents_end_with_this_process",
    "available",
    "supervised",
    "supervisor_argv",
    "unavailable_reason",
]

_SANDBOX_DIR = Path(__file__).resolve().parent
_BOOT = f"""\
import sys, types
for name, path in (
    ("seawall", {str(_SANDBOX_DIR.parent)!r}),
    ("seawall.sandbox", {str(_SANDBOX_DIR)!r}),
):
    sys.modules[name] = package = types.ModuleType(name)
    package.__path__ = [path]
from seawall.sandbox.supervise import main
sys.exit(main())
"""
_END_WITH_STARTER: ContextVar[bool] = ContextVar("end_with_starter", default=False)


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


@contextlib.contextmanager
def agents_end_with_this_process() -> Iterator[None]:
    """Within this block (this context and the tasks it starts), agents started under the
    supervisor are ended when the process that started them dies, however it dies.

    Outside it an agent outlives a coordinator killed outright, so that ``resume`` can
    find, stop and salvage it; a process whose agents nobody would find again (a Ray
    worker, whose machine the coordinator does not watch) uses this block instead.
    """
    token = _END_WITH_STARTER.set(True)
    try:
        yield
    finally:
        _END_WITH_STARTER.reset(token)


def supervisor_argv(
    argv: Sequence[str], *, policy: SandboxPolicy | None, grace: float
) -> list[str]:
    """``argv`` run under the supervisor, sandboxed by ``policy`` when one is given.

    ``-I`` keeps the agent's working directory and ``PYTHON*`` variables from changing
    which supervisor code runs; ``-S`` skips site-packages. The supervisor needs only the
    standard library and two modules of this package, so the boot code registers the
    package directories without running their ``__init__`` (whose imports would double
    the supervisor's start). Within ``agents_end_with_this_process`` the supervisor is
    told this process's id (``--parent``) and ends the agent when it dies.
    """
    command = [sys.executable, "-I", "-S", "-c", _BOOT, "--grace", f"{grace:g}"]
    if _END_WITH_STARTER.get():
        command += ["--parent", str(os.getpid())]
    if policy is not None:
        command.append("--sandbox")
        for path in policy.writable:
            command += ["--write", str(path)]
        for path in policy.new_files:
            command += ["--new", str(path)]
        if policy.new_files and policy.placeholder_record is not None:
            command += ["--record", str(policy.placeholder_record)]
    return [*command, "--", *argv]
