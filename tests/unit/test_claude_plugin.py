"""The Claude Code plugin in examples/ stays in step with seawall's own hook table."""

from __future__ import annotations

import json
import re
from pathlib import Path

from seawall.hooks.install import HOOKS

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "claude-code-plugin"


def test_the_manifest_names_the_plugin() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "seawall"
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])


def test_the_hooks_are_seawalls_hook_table() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(HOOKS)
    for event, (matcher, name) in HOOKS.items():
        (entry,) = hooks[event]
        assert entry.get("matcher") == matcher, event
        (hook,) = entry["hooks"]
        assert hook == {"type": "command", "command": f"seawall hook {name}", "timeout": 30}


def test_the_mcp_server_and_the_skill_are_there() -> None:
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers["seawall"] == {"command": "seawall", "args": ["mcp"]}
    skill = (PLUGIN / "skills" / "seawall-waves" / "SKILL.md").read_text()
    front = skill.split("---")[1]
    assert "name: seawall-waves" in front and "description:" in front
    assert "`next`" in skill and "outputs" in skill
    command = (PLUGIN / "commands" / "seawall.md").read_text()
    assert "$ARGUMENTS" in command
