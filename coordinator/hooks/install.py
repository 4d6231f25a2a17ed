"""``seawall hooks install``: add seawall's hooks to ``.claude/settings.json``.

Idempotent and conservative: every other setting and every hook of the user stays as
it was (order included); seawall's own entries are recognised by their command
(``... seawall hook <name>``) and replaced, so installing twice, or again with another
executable path, leaves exactly one entry per event. A settings file that is not a
JSON object is refused, never overwritten.

The command is the absolute path of the ``seawall`` executable when one is found (a
hook whose command cannot be found fails open in Claude Code, so a bare name that is
not on the agents' PATH would silently disarm the guard); ``command=`` overrides it.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seawall.codec import JsonObject
from seawall.errors import ConfigurationError
from seawall.runtime.files import atomic_write_text
from seawall.scope.manifest import validate_session_id

__all__ = [
    "HOOKS",
    "InstallResult",
    "default_command",
    "install_hooks",
    "installed_hooks",
    "load_settings",
    "save_settings",
    "settings_path",
]

# event -> (matcher or None, subcommand)
HOOKS: dict[str, tuple[str | None, str]] = {
    "PreToolUse": ("*", "pre-tool-use"),
    "PostToolUse": ("*", "post-tool-use"),
    "SubagentStop": (None, "subagent-stop"),
}
_OURS = re.compile(
    r"(?:^|[\s/\"'])seawall(?:\.exe)?[\"']?\s+hook\s+(pre-tool-use|post-tool-use|subagent-stop)"
    r"(?:\s+--session\s+\S+)?\s*$"
)
_TIMEOUT_S = 30


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallResult:
    """What ``install_hooks`` did."""

    path: Path
    command: str
    changed: bool
    events: tuple[str, ...]


def settings_path(repo: Path) -> Path:
    return Path(repo) / ".claude" / "settings.json"


def default_command() -> str:
    """The absolute path of the ``seawall`` executable, else ``seawall``."""
    found = shutil.which("seawall")
    if found:
        return str(Path(found).resolve())
    sibling = Path(sys.executable).with_name("seawall")
    return str(sibling) if sibling.exists() else "seawall"


def install_hooks(
    repo: Path, *, command: str | None = None, session: str | None = None
) -> InstallResult:
    """Add seawall's PreToolUse, PostToolUse and SubagentStop hooks to the repository.

    With ``session``, each hook command names it (``--session S``): the hooks then serve
    that session's manifests only.
    """
    base = command or default_command()
    suffix = f" --session {validate_session_id(session)}" if session else ""
    path = settings_path(repo)
    settings = load_settings(path)
    before = json.dumps(settings, sort_keys=False)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigurationError(f"{path}: 'hooks' is not an object; fix it by hand first")
    for event, (matcher, name) in HOOKS.items():
        hooks[event] = _merged(
            hooks.get(event), event, matcher, f"{_quote(base)} hook {name}{suffix}", path
        )
    changed = json.dumps(settings, sort_keys=False) != before
    if changed:
        save_settings(path, settings)
    return InstallResult(path=path, command=base, changed=changed, events=tuple(HOOKS))


def installed_hooks(settings: JsonObject) -> tuple[str, ...]:
    """The events of ``HOOKS`` whose seawall hook ``settings`` hold."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return ()
    found: list[str] = []
    for event in HOOKS:
        groups = hooks.get(event)
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(entries, list) and any(_is_ours(hook) for hook in entries):
                found.append(event)
                break
    return tuple(found)


def save_settings(path: Path, settings: JsonObject) -> None:
    """Write ``settings`` to ``path`` atomically (its folder made when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(settings, indent=2, ensure_ascii=False) + "\n")


def _quote(command: str) -> str:
    return command if " " not in command else shlex.quote(command)


def load_settings(path: Path) -> JsonObject:
    """The settings object in ``path`` ({} when the file is missing or empty); a file
    that is not a JSON object is refused (``ConfigurationError``), never overwritten."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{path} is not valid JSON ({exc}); not changing it") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path} is not a JSON object; not changing it")
    return data


def _merged(groups: object, event: str, matcher: str | None, command: str, path: Path) -> list[Any]:
    """The event's matcher groups without old seawall entries, plus the current one."""
    if groups is None:
        groups = []
    if not isinstance(groups, list):
        raise ConfigurationError(f"{path}: hooks.{event} is not a list; fix it by hand first")
    out: list[Any] = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            out.append(group)
            continue
        kept = [h for h in group["hooks"] if not _is_ours(h)]
        if kept or not group["hooks"]:
            out.append({**group, "hooks": kept} if len(kept) != len(group["hooks"]) else group)
    entry: JsonObject = {"hooks": [{"type": "command", "command": command, "timeout": _TIMEOUT_S}]}
    if matcher is not None:
        entry = {"matcher": matcher, **entry}
    out.append(entry)
    return out


def _is_ours(hook: object) -> bool:
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    command = hook.get("command")
    return isinstance(command, str) and _OURS.search(command) is not None
