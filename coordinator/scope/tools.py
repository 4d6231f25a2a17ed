"""Tools other than Claude Code's built-in ones (MCP tools ``mcp__<server>__<tool>`` and
the rest): what they may write, read from their arguments.

Built-in tools that only read or talk (``Read``, ``Grep``, ``Glob``, ``WebFetch``,
``TodoWrite``, ``Task`` ...) write nothing. An MCP tool whose name says it reads
(``read_file``, ``list_directory``, ``git_status``, ``search_*`` ...) writes nothing
either. Any other tool is judged by its path-like arguments (``path``, ``file_path``,
``source``, ``destination``, ``repo_path``, ``paths`` ...): each must be in scope. A
tool that names no path is unknown (denied in strict). A git tool that commits,
pushes, resets or switches is refused like the git command it stands for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from seawall.codec import JsonView

__all__ = ["BUILT_IN_READERS", "ToolPaths", "other_tool_paths"]

BUILT_IN_READERS = frozenset(
    {
        "Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "TodoRead",
        "Task", "Agent", "NotebookRead", "BashOutput", "KillShell", "KillBash",
        "ExitPlanMode", "SlashCommand", "Skill", "ListMcpResourcesTool",
        "ReadMcpResourceTool", "AskUserQuestion",
    }
)  # fmt: skip
_READ_ONLY = re.compile(
    r"(?:read|list|get|search|find|show|view|describe|fetch|query|directory_tree|"
    r"git_status|git_log|git_diff|git_show|git_blame)(?:_|$)"
)
_WRITE_VERBS = re.compile(
    r"write|edit|create|delete|remove|move|rename|replace|update|set|put|patch|apply|"
    r"commit|push|insert|append|upload|save|copy|mkdir|touch|chmod|install|run|exec"
)
_GIT_WRITES = re.compile(
    r"git_(?:commit|add|reset|push|checkout|create_branch|stash|rm|mv|clean|merge|rebase|"
    r"tag|restore|switch|init|clone|pull|fetch|cherry_pick|revert)"
)
_PATH_KEY = re.compile(
    r"(?:^|_)(?:path|paths|file|files|filename|dir|directory|source|destination|dest|"
    r"target|repo|cwd|output|root|folder)(?:_|$)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class ToolPaths:
    """What a tool call may write: nothing (``read_only``), a refusal, or these paths."""

    read_only: bool = False
    refusal: str = ""
    paths: tuple[str, ...] = ()


def other_tool_paths(
    tool: str,
    tool_input: JsonView,  # as the agent CLI gave it
) -> ToolPaths:
    """Judge a tool that is neither a file tool nor Bash (see the module docstring)."""
    if tool in BUILT_IN_READERS:
        return ToolPaths(read_only=True)
    action = tool.split("__", 2)[-1] if tool.startswith("mcp__") else tool
    action = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", action).lower()
    if _GIT_WRITES.search(action):
        return ToolPaths(
            refusal="a dispatched agent does not write git state; the coordinator records "
            "and merges this task's files itself"
        )
    if _READ_ONLY.match(action) and not _WRITE_VERBS.search(action):
        return ToolPaths(read_only=True)
    return ToolPaths(paths=tuple(dict.fromkeys(_paths(tool_input, depth=0))))


def _paths(value: object, *, depth: int, key: str = "") -> list[str]:
    """Path-like strings in ``value``: under a path-like key, at any nesting (bounded)."""
    if depth > 4:
        return []
    if isinstance(value, Mapping):
        found: list[str] = []
        for name, item in value.items():
            found.extend(_paths(item, depth=depth + 1, key=str(name)))
        return found
    if isinstance(value, list | tuple):
        return [p for item in value for p in _paths(item, depth=depth + 1, key=key)]
    if isinstance(value, str) and value and _PATH_KEY.search(key):
        return [value]
    return []
