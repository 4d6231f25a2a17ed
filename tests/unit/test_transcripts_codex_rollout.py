"""CodexRolloutParser on lines in the shape Codex 0.171 writes to its rollout file."""

from __future__ import annotations

import json
from typing import Any

from seawall.events import Message, ToolCall, ToolResult, Turn, Usage, edited_paths
from seawall.transcripts import CodexRolloutParser, TranscriptFormat, parse_lines
from seawall.transcripts.codex_rollout import patch_changes
from seawall.transcripts.reader import _classify

BAD_PATCH = "*** Begin Patch\n*** Update File: missing.txt\n@@\n-old\n+new\n*** End Patch\n"


def line(kind: str, **payload: Any) -> str:
    return json.dumps({"timestamp": "2026-12-01T08:42:11.532Z", "type": kind, "payload": payload})


def item(kind: str, **fields: Any) -> str:
    return line("response_item", type=kind, **fields)


ROLLOUT = [
    line("session_meta", id="th", cwd="/w", cli_version="0.171.0"),
    line("turn_context", turn_id="t1", cwd="/w", model="gpt-5.5"),
    item("message", role="user", content=[{"type": "input_text", "text": "Do it"}]),
    item("custom_tool_call", call_id="c1", name="apply_patch", input=BAD_PATCH, status="completed"),
    line(
        "token_usage_record",
        response_id="r1",
        usage={"input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 80},
    ),
    item(
        "custom_tool_call_output",
        call_id="c1",
        output="apply_patch verification failed: Failed to read file to update /w/missing.txt",
    ),
    item(
        "function_call",
        call_id="c2",
        name="exec_command",
        arguments='{"cmd": "sleep 9", "yield_time_ms": 200}',
    ),
    line("token_usage_record", response_id="r2", usage={"input_tokens": 1300, "output_tokens": 10}),
    item(
        "function_call_output",
        call_id="c2",
        output="Chunk ID: a\nProcess running with session ID 7\nOutput:\n",
    ),
    item(
        "function_call",
        call_id="c3",
        name="write_stdin",
        arguments='{"session_id": 7, "chars": ""}',
    ),
    item(
        "function_call_output",
        call_id="c3",
        output="Chunk ID: b\nProcess exited with code 2\nOutput:\nboom\n",
    ),
    item("message", role="assistant", content=[{"type": "output_text", "text": "STATUS: done"}]),
    line("token_usage_record", response_id="r2", usage={"input_tokens": 1300, "output_tokens": 10}),
    line("event_msg", type="task_complete", last_agent_message="STATUS: done"),
]


def test_calls_results_turns_and_usage_come_from_the_rollout() -> None:
    parser = CodexRolloutParser()
    events = [event for raw in ROLLOUT for event in parser.feed(raw)]
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["apply_patch", "exec_command", "write_stdin"]
    assert edited_paths(calls[0]) == ("missing.txt",)
    assert calls[1].arguments["command"] == "sleep 9"  # read as a shell command
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    assert results["c1"].is_error and results["c1"].name == "apply_patch"
    assert not results["c2"].is_error and results["c2"].exit_code is None
    assert results["c3"].is_error and results["c3"].exit_code == 2
    assert [e.number for e in events if isinstance(e, Turn)] == [1, 2, 3, 4]
    usages = [e for e in events if isinstance(e, Usage)]
    assert [(u.message_id, u.input_tokens, u.cache_read_tokens) for u in usages] == [
        ("r1", 1000, 200),
        ("r2", 1300, 0),
    ]  # a repeated response id is counted once
    assert {u.model for u in usages} == {"gpt-5.5"}  # from turn_context
    assert [e.text for e in events if isinstance(e, Message)] == ["STATUS: done"]
    assert parser.turns == 4


def test_patch_changes_names_every_file_of_a_patch() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: a.py\n+x\n*** Delete File: b.py\n*** Update File: c/d.py\n"
    )
    assert patch_changes(patch) == [
        {"path": "a.py", "kind": "add"},
        {"path": "b.py", "kind": "delete"},
        {"path": "c/d.py", "kind": "update"},
    ]
    assert patch_changes("no patch here") == []


def test_the_reader_recognises_and_parses_a_rollout() -> None:
    assert _classify(ROLLOUT[:5]) is TranscriptFormat.CODEX_ROLLOUT
    events = list(parse_lines(ROLLOUT))
    assert sum(isinstance(e, ToolCall) for e in events) == 3


def test_garbage_and_unknown_records_give_nothing() -> None:
    parser = CodexRolloutParser()
    for raw in [
        "",
        "not json",
        "[1]",
        line("world_state", full=True),
        json.dumps({"type": "response_item"}),
    ]:
        assert parser.feed(raw) == []
    assert parser.malformed == 2
