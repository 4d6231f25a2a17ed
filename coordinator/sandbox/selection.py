"""Which sandbox a session gives each agent it dispatches, and when it refuses to.

Every agent gets one where the kernel can enforce it: its worktree, or (in place) its
scope's literal prefixes (the whole repository minus ``.git``, ``.seawall`` and Claude
Code's project settings when enforcement is ``off``). Where no sandbox is available, an
in-place wave under ``strict`` enforcement would leave the hooks (which only see the
agent CLI's own tools) and the post-wave check as the only barriers: the session refuses
it unless the plan sets ``accept_hooks_only = true`` (or ``seawall run
--accept-hooks-only``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from seawall.errors import ConfigurationError
from seawall.model import Enforcement
from seawall.sandbox.launch import unavailable_reason
from seawall.sandbox.policy import SandboxPolicy, scope_policy, workspace_policy

__all__ = ["agent_sandbox", "sandbox_notice"]


def agent_sandbox(
    *,
    task_id: str,
    workspace: Path,
    in_place: bool,
    scope: Sequence[str],
    enforcement: Enforcement,
    accept_hooks_only: bool,
    starts_processes: bool = True,
    extra_writable: Sequence[str] = (),
    missing: str | None = None,
    placeholder_record: Path | None = None,
) -> SandboxPolicy | None:
    """The sandbox of one agent; None for a runner that starts no processes
    (``starts_processes``), or where this machine has no sandbox and that is accepted.

    ``extra_writable`` are the plan's ``sandbox_writable`` paths (``~/`` expanded),
    granted to every agent. Raises ``ConfigurationError`` for a strict in-place agent
    that cannot be sandboxed when hooks-only enforcement was not accepted. ``missing``
    is why there is no sandbox here (default: this machine's answer; "" when there is
    one). ``placeholder_record`` is where an in-place agent's empty placeholders are
    listed (see ``seawall.sandbox.placeholders``).
    """
    if not starts_processes:
        return None  # an in-process agent: no sandbox applies to it
    missing = unavailable_reason() if missing is None else missing
    if missing:
        if in_place and enforcement is Enforcement.STRICT and not accept_hooks_only:
            raise ConfigurationError(
                f"task {task_id!r}: cannot enforce strict scope in place: {missing}. "
                'Run the wave in worktrees (isolation = "worktree"), or accept hooks-only '
                "enforcement with `accept_hooks_only = true` in [session] "
                "(`seawall run --accept-hooks-only`)"
            )
        return None
    extra = [Path(path).expanduser() for path in extra_writable]
    if not in_place:
        return workspace_policy(workspace).with_paths(extra)
    grants = ("**",) if enforcement is Enforcement.OFF else scope
    policy = scope_policy(workspace, grants, create=True).with_paths(extra)
    return dataclasses.replace(policy, placeholder_record=placeholder_record)


def sandbox_notice(*, accept_hooks_only: bool, missing: str | None = None) -> str:
    """What the session says at its start about the OS sandbox."""
    missing = unavailable_reason() if missing is None else missing
    if not missing:
        return "agents are sandboxed by the kernel (Landlock): writes outside their scope fail"
    accepted = " (accepted: accept_hooks_only)" if accept_hooks_only else ""
    return (
        f"no OS sandbox: {missing}; scope is enforced by hooks and the post-wave check "
        f"only{accepted}; strict in-place waves are refused unless accept_hooks_only is set"
    )
