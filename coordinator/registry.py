"""A lazy name registry for adapters, open to third parties through entry points.

Pass adapter instances to the library directly; names are a convenience for the CLI
and plan files. Built-in names resolve without installed metadata (a source checkout);
third-party packages add theirs under the entry-point groups ``seawall.trackers`` and
``seawall.runners``.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from types import MappingProxyType

from coordinator.errors import ConfigurationError

__all__ = ["RUNNER_GROUP", "TRACKER_GROUP", "available", "resolve"]

TRACKER_GROUP = "seawall.trackers"
RUNNER_GROUP = "seawall.runners"

_BUILTIN = MappingProxyType(
    {
        TRACKER_GROUP: MappingProxyType(
            {
                "local": "adapters.trackers.local:LocalTracker",
                "memory": "adapters.trackers.memory:MemoryTracker",
                "github": "adapters.trackers.github:GitHubTracker",
                "gitlab": "adapters.trackers.gitlab:GitLabTracker",
            }
        ),
        RUNNER_GROUP: MappingProxyType(
            {
                "callable": "adapters.runners.callable:CallableRunner",
                "scripted": "adapters.runners.scripted:ScriptedRunner",
                "command": "adapters.runners.command:CommandRunner",
                "claude-code": "adapters.runners.claude_code:ClaudeCodeRunner",
                "codex": "adapters.runners.codex:CodexRunner",
                "ray": "adapters.runners.ray:RayRunner",
            }
        ),
    }
)


def _targets(group: str) -> dict[str, str]:
    targets = dict(_BUILTIN.get(group, {}))
    for entry in entry_points(group=group):
        targets.setdefault(entry.name, entry.value)
    return targets


def available(group: str) -> tuple[str, ...]:
    """The names that resolve in ``group``, sorted."""
    return tuple(sorted(_targets(group)))


def resolve(group: str, name: str) -> object:
    """Import and return the object registered as ``name`` in ``group``.

    Raises ``ConfigurationError`` naming the known names when ``name`` is unknown.
    An adapter whose optional SDK is missing raises its own ``MissingExtraError``.
    """
    targets = _targets(group)
    target = targets.get(name)
    if target is None:
        kind = group.rsplit(".", 1)[-1]
        raise ConfigurationError(
            f"unknown {kind[:-1]} {name!r}; known: {', '.join(sorted(targets)) or 'none'}"
        )
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module
