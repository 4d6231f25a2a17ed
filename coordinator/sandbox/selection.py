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
from enum import StrEnum
from pathlib import Path

from seawall.errors import ConfigurationError
from seawall.model import Enforcement
from seawall.sandbox.launch import unavailable_reason
from seawall.sandbox.policy import SandboxPolicy, scope_policy, workspace_policy

__all__ = ["SandboxChoice", "agent_sandbox", "sandbox_choice", "sandbox_notice"]


class SandboxChoice(StrEnum):
    """What confines one agent's writes while it runs, as dispatch decides it."""

    IN_PROCESS = "in-process"  # a runner that starts no process: nothing to sandbox
    WORKTREE = "worktree"  # the kernel: its worktree (and sandbox_writable)
    SCOPE = "scope"  # the kernel: its scope in the repository (and sandbox_writable)
    REPOSITORY = "repository"  # the kernel: the repository (enforcement off, in place)
    NONE = "none"  # no sandbox on this machine, and that is accepted
    REFUSED = "refused"  # strict in place without a sandbox, not accepted: no dispatch

    def describe(self, missing: str = "") -> str:
        """In a few words, for ``seawall plan``."""
        return {
            SandboxChoice.IN_PROCESS: "no OS sandbox (the agent runs in seawall's process)",
            SandboxChoice.WORKTREE: "the kernel's sandbox (Landlock): writes outside its "
            "worktree fail",
            SandboxChoice.SCOPE: "the kernel's sandbox (Landlock): writes outside its scope fail",
            SandboxChoice.REPOSITORY: "the kernel's sandbox (Landlock): writes outside the "
            "repository fail (enforcement off)",
            SandboxChoice.NONE: f"no OS sandbox ({missing}; accepted: accept_hooks_only)",
            SandboxChoice.REFUSED: f"refused: strict in place needs a sandbox ({missing}); "
            'set accept_hooks_only or isolation = "worktree"',
        }[self]


def sandbox_choice(
    *,
    in_place: bool,
    enforcement: Enforcement,
    accept_hooks_only: bool,
    starts_processes: bool = True,
    missing: str | None = None,
) -> tuple[SandboxChoice, str]:
    """What sandbox an agent gets, and why there is none when there is none (this
    machine's answer unless ``missing`` is given). ``agent_sandbox`` builds the sandbox
    it chooses; ``seawall plan`` shows it."""
    if not starts_processes:
        return SandboxChoice.IN_PROCESS, ""
    missing = unavailable_reason() if missing is None else missing
    if missing:
        if in_place and enforcement is Enforcement.STRICT and not accept_hooks_only:
            return SandboxChoice.REFUSED, missing
        return SandboxChoice.NONE, missing
    if not in_place:
        return SandboxChoice.WORKTREE, ""
    if enforcement is Enforcement.OFF:
        return SandboxChoice.REPOSITORY, ""
    return SandboxChoice.SCOPE, ""


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
    choice, missing = sandbox_choice(
        in_place=in_place,
        enforcement=enforcement,
        accept_hooks_only=accept_hooks_only,
        starts_processes=starts_processes,
        missing=missing,
    )
    if choice is SandboxChoice.REFUSED:
        raise ConfigurationError(
            f"task {task_id!r}: cannot enforce strict scope in place: {missing}. "
            'Run the wave in worktrees (isolation = "worktree"), or accept hooks-only '
            "enforcement with `accept_hooks_only = true` in [session] "
            "(`seawall run --accept-hooks-only`)"
        )
    if choice in (SandboxChoice.IN_PROCESS, SandboxChoice.NONE):
        return None
    extra = [Path(path).expanduser() for path in extra_writable]
    if choice is SandboxChoice.WORKTREE:
        return workspace_policy(workspace).with_paths(extra)
    grants = ("**",) if choice is SandboxChoice.REPOSITORY else scope
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
