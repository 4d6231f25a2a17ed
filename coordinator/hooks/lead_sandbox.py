"""Claude Code's sandbox in a lead's project settings: written, checked, and reported.

``seawall hooks install`` writes it with the hooks (``install_sandbox``); ``seawall
next`` and ``seawall wave prepare`` add what is missing before they prepare a wave
(``ensure_sandbox``: the folder of the plan's worktrees, say), unless the user turned
the sandbox off; ``seawall hooks install --check`` reports the boundary a lead started
in the repository will have (``lead_boundary``). What the settings say, and why, is in
``seawall.sandbox.claude_code``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from seawall.codec import JsonView
from seawall.errors import ConfigurationError
from seawall.git.workspaces import worktree_root as configured_worktree_root
from seawall.hooks.install import (
    HOOKS,
    installed_hooks,
    load_settings,
    save_settings,
    settings_path,
)
from seawall.sandbox.claude_code import (
    Prerequisites,
    check_prerequisites,
    merge_sandbox,
    sandbox_gaps,
    sandbox_settings,
)

__all__ = [
    "LeadBoundary",
    "SandboxInstall",
    "ensure_sandbox",
    "install_sandbox",
    "lead_boundary",
    "turn_sandbox_off",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxInstall:
    """What ``install_sandbox`` did: the settings file, and whether it changed."""

    path: Path
    changed: bool


def install_sandbox(repo: Path, *, worktree_root: str | None = None) -> SandboxInstall:
    """Merge seawall's ``sandbox`` settings into the repository's ``.claude/settings.json``.

    Every other key stays; the lists gain what they lack; writing twice changes nothing.
    ``worktree_root`` is the plan's ``[session] worktree_root`` (default: the default
    folder). ``.seawall/`` is made when missing, so that the sandbox has a folder to
    make read-only rather than an empty file in its place."""
    root = Path(os.path.realpath(repo))
    path = settings_path(root)
    settings = load_settings(path)
    wanted = sandbox_settings(root, worktree_root=configured_worktree_root(root, worktree_root))
    merged = merge_sandbox(settings.get("sandbox"), wanted, where=str(path))
    (root / ".seawall").mkdir(exist_ok=True)
    if merged == settings.get("sandbox"):
        return SandboxInstall(path=path, changed=False)
    save_settings(path, {**settings, "sandbox": merged})
    return SandboxInstall(path=path, changed=True)


def turn_sandbox_off(repo: Path) -> SandboxInstall:
    """Record ``sandbox.enabled: false`` (``hooks install --no-sandbox``): the lead runs
    without Claude Code's sandbox, and ``seawall next`` does not add it back."""
    path = settings_path(Path(repo))
    settings = load_settings(path)
    current = settings.get("sandbox")
    if isinstance(current, Mapping) and current.get("enabled") is False:
        return SandboxInstall(path=path, changed=False)
    sandbox = dict(current) if isinstance(current, Mapping) else {}
    save_settings(path, {**settings, "sandbox": {**sandbox, "enabled": False}})
    return SandboxInstall(path=path, changed=True)


def ensure_sandbox(
    repo: Path,
    *,
    worktree_root: str | None = None,
    prerequisites: Callable[[], Prerequisites] = check_prerequisites,
) -> str:
    """Before ``seawall next`` or ``wave prepare`` prepares a wave: add what the settings
    lack, when this machine can run the sandbox; the line to print ("" when nothing was
    to do). A sandbox the user turned off (``enabled: false``) is left off; settings
    seawall cannot read are left as they are, and the line says so (the session goes
    on: they are the user's to fix)."""
    root = Path(os.path.realpath(repo))
    path = settings_path(root)
    try:
        settings = load_settings(path)
        current = settings.get("sandbox")
        if isinstance(current, Mapping) and current.get("enabled") is False:
            return ""
        wanted = sandbox_settings(root, worktree_root=configured_worktree_root(root, worktree_root))
        if not sandbox_gaps(current, wanted):
            return ""
        found = prerequisites()
        if not found.ok:
            return (
                f"seawall: a lead's subagents in {root} have no OS sandbox: "
                f"{'; '.join(found.problems)}; then `seawall hooks install` writes it"
            )
        install_sandbox(root, worktree_root=worktree_root)
    except ConfigurationError as exc:
        return f"seawall: Claude Code's sandbox settings not written: {exc}"
    return (
        f"seawall: Claude Code's sandbox for a lead's subagents written to {path} "
        "(a running lead applies it from its next command)"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class LeadBoundary:
    """The boundary a lead started in a repository will have: seawall's hooks, Claude
    Code's sandbox (what it lacks of seawall's settings, what it lets write), and
    whether this machine can run it."""

    path: Path
    hooks: tuple[str, ...]
    sandbox_off: bool
    gaps: tuple[str, ...]
    writable: tuple[str, ...]
    read_only: tuple[str, ...]
    domains: tuple[str, ...]
    prerequisites: Prerequisites

    def complete(self, *, hooks: bool = True) -> bool:
        """Whether the lead will have every layer (``hooks`` False: hooks come from
        elsewhere, the Claude Code plugin)."""
        hooked = not hooks or len(self.hooks) == len(HOOKS)
        return hooked and not self.sandbox_off and not self.gaps and self.prerequisites.ok

    def lines(self, *, hooks: bool = True) -> list[str]:
        """The report, one fact per line."""
        out = [f"settings: {self.path}"]
        if hooks:
            missing = [event for event in HOOKS if event not in self.hooks]
            out.append(
                "seawall's hooks: "
                + ("all installed" if not missing else f"missing {', '.join(missing)}")
            )
        if self.sandbox_off:
            out.append("Claude Code's sandbox: turned off (sandbox.enabled is false)")
        elif self.gaps:
            out.append("Claude Code's sandbox: incomplete: " + "; ".join(self.gaps))
        else:
            out.append(
                "Claude Code's sandbox: required (the lead does not start without it), no "
                "unsandboxed fallback; seawall's own steps run outside it, alone"
            )
        if not self.sandbox_off:
            out.append("  writable: " + ", ".join([*self.writable, "Claude Code's $TMPDIR"]))
            out.append("  read-only: " + ", ".join(self.read_only))
            out.append(
                "  network: "
                + (
                    ", ".join(self.domains)
                    if self.domains
                    else "closed (no sandbox.network.allowedDomains)"
                )
            )
        out.append(
            "prerequisites: "
            + ("all present" if self.prerequisites.ok else "; ".join(self.prerequisites.problems))
        )
        out.append(
            "per-task scopes: seawall's PreToolUse hook and the post-wave check (the "
            "sandbox is one policy for the lead and all its subagents)"
        )
        return out


def lead_boundary(
    repo: Path,
    *,
    worktree_root: str | None = None,
    prerequisites: Callable[[], Prerequisites] = check_prerequisites,
) -> LeadBoundary:
    """What ``seawall hooks install --check`` reports for ``repo``."""
    root = Path(os.path.realpath(repo))
    path = settings_path(root)
    settings = load_settings(path)
    current = settings.get("sandbox")
    wanted = sandbox_settings(root, worktree_root=configured_worktree_root(root, worktree_root))
    sandbox: JsonView = current if isinstance(current, Mapping) else {}
    filesystem = sandbox.get("filesystem")
    files: JsonView = filesystem if isinstance(filesystem, Mapping) else {}
    network = sandbox.get("network")
    domains = network.get("allowedDomains") if isinstance(network, Mapping) else None
    return LeadBoundary(
        path=path,
        hooks=installed_hooks(settings),
        sandbox_off=sandbox.get("enabled") is False,
        gaps=tuple(sandbox_gaps(current, wanted)),
        writable=_strings(files.get("allowWrite")),
        read_only=_strings(files.get("denyWrite")),
        domains=_strings(domains),
        prerequisites=prerequisites(),
    )


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) else ()
