"""Real-shaped transcript records and plan tables: seeds for the fuzzers.

The records follow what Claude Code (``claude -p --output-format stream-json --verbose``)
and Codex (``codex exec --json``) print; the fuzzers mutate them field by field.
"""

from __future__ import annotations

import json
import math
from typing import Any

CLAUDE_RECORDS: list[dict[str, Any]] = [
    {
        "type": "system",
        "subtype": "init",
        "session_id": "5b1c",
        "model": "claude-sonnet-4-5",
        "tools": ["Bash", "Edit", "Read"],
        "cwd": "/work/repo",
    },
    {
        "type": "assistant",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look at the tests."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "Bash",
                    "input": {"command": "pytest -q", "description": "run tests"},
                },
            ],
            "usage": {
                "input_tokens": 1200,
                "output_tokens": 80,
                "cache_read_input_tokens": 900,
                "cache_creation_input_tokens": 12,
            },
        },
        "parent_tool_use_id": None,
        "session_id": "5b1c",
        "timestamp": "2025-10-01T12:00:00.000Z",
    },
    {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "is_error": True,
                    "content": "Exit code 1\n1 failed, 3 passed",
                }
            ],
        },
        "session_id": "5b1c",
    },
    {
        "type": "assistant",
        "message": {
            "id": "msg_02",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_02",
                    "name": "Edit",
                    "input": {
                        "file_path": "/work/repo/src/a.py",
                        "old_string": "a",
                        "new_string": "b",
                    },
                }
            ],
        },
        "parent_tool_use_id": "toolu_00",
    },
    {
        "type": "user",
        "message": {
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_02",
                    "content": [{"type": "text", "text": "Sibling tool call errored"}],
                    "is_error": True,
                }
            ]
        },
    },
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "Fixed it.\nSTATUS: done — tests pass",
        "num_turns": 4,
        "total_cost_usd": 0.0123,
        "duration_ms": 5321,
        "session_id": "5b1c",
    },
]

CODEX_RECORDS: list[dict[str, Any]] = [
    {"type": "thread.started", "thread_id": "th_1"},
    {"type": "turn.started"},
    {
        "type": "item.started",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "bash -lc 'pytest -q'",
            "status": "in_progress",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "bash -lc 'pytest -q'",
            "aggregated_output": "1 failed",
            "exit_code": 1,
            "status": "failed",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_2",
            "type": "file_change",
            "changes": [{"path": "src/a.py", "kind": "update"}],
            "status": "completed",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_3",
            "type": "mcp_tool_call",
            "server": "docs",
            "tool": "search",
            "arguments": {"q": "x"},
            "result": {"content": []},
            "status": "completed",
        },
    },
    {"type": "item.completed", "item": {"id": "item_4", "type": "agent_message", "text": "Done."}},
    {"type": "error", "message": "stream disconnected"},
    {"type": "turn.failed", "error": {"message": "rate limited"}},
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 5000, "cached_input_tokens": 4000, "output_tokens": 300},
    },
]

REAL_RECORDS = CLAUDE_RECORDS + CODEX_RECORDS


def to_line(record: Any) -> str:
    """A JSON line as an agent CLI would print it (NaN and Infinity allowed: Python's
    ``json`` reads them, so a parser must survive them)."""
    return json.dumps(record, allow_nan=True)


def toml_value(value: Any) -> str:
    """A TOML rendering of a JSON-like value (inline tables and arrays; TOML has no null,
    so None becomes an empty string)."""
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise TypeError(f"no TOML for {type(value).__name__}")


def toml_document(data: dict[str, Any]) -> str:
    """A TOML document whose top-level keys hold ``data`` (each as one inline value)."""
    return "\n".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in data.items()) + "\n"
