"""Gemini CLI's stream-json lines (as the real 0.61 CLI printed them) read as events."""

from __future__ import annotations

import json

from seawall.adapters.runners.gemini import (
    GEMINI_TOOLS,
    GeminiJsonParser,
    GeminiRunner,
    gemini_limit,
)
from seawall.events import Event, Final, LimitKind, Message, ToolCall, ToolResult, Turn, Usage

LINES = [
    {"type": "init", "session_id": "1bbd6557", "model": "gemini-2.5-pro"},
    {"type": "message", "role": "user", "content": "Work GEM-1."},
    {"type": "message", "role": "assistant", "content": "I'll ", "delta": True},
    {"type": "message", "role": "assistant", "content": "write it.", "delta": True},
    {
        "type": "tool_use",
        "tool_name": "write_file",
        "tool_id": "write_file__call_t0_0",
        "parameters": {"file_path": "/w/hello.txt", "content": "hi\n"},
    },
    {"type": "tool_result", "tool_id": "write_file__call_t0_0", "status": "success"},
    {
        "type": "tool_use",
        "tool_name": "run_shell_command",
        "tool_id": "run_shell_command__call_t1_0",
        "parameters": {"command": "exit 3", "description": "x"},
    },
    {
        "type": "tool_result",
        "tool_id": "run_shell_command__call_t1_0",
        "status": "success",
        "output": "Command exited with code: 3",
    },
    {"type": "message", "role": "assistant", "content": "Done.\nSTATUS: done", "delta": True},
    {
        "type": "result",
        "status": "success",
        "stats": {"input_tokens": 3600, "output_tokens": 240, "cached": 1000, "tool_calls": 2},
    },
]


def _events() -> list[Event]:
    parser = GeminiJsonParser()
    events: list[Event] = []
    for line in ["YOLO mode is enabled.", *map(json.dumps, LINES)]:
        events += parser.feed(line)
    return events + parser.finish()


def test_turns_start_where_the_model_speaks_after_a_result_and_pieces_are_joined() -> None:
    events = _events()
    assert [e.number for e in events if isinstance(e, Turn)] == [1, 2, 3]
    assert [e.text for e in events if isinstance(e, Message)] == [
        "I'll write it.",
        "Done.\nSTATUS: done",
    ]


def test_calls_results_and_a_shell_exit_code() -> None:
    events = _events()
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.turn) for c in calls] == [("write_file", 1), ("run_shell_command", 2)]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.is_error, r.exit_code) for r in results] == [(False, None), (True, 3)]
    write = GEMINI_TOOLS.normalise(calls[0])
    assert isinstance(write, ToolCall) and write.name == "Write"
    assert write.arguments["file_path"] == "/w/hello.txt"


def test_the_result_gives_uncached_input_the_cached_share_and_the_final_text() -> None:
    events = _events()
    (usage,) = [e for e in events if isinstance(e, Usage)]
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (2600, 1000, 240)
    (final,) = [e for e in events if isinstance(e, Final)]
    assert final.text == "Done.\nSTATUS: done" and not final.is_error and final.num_turns == 3


def test_a_failed_run_is_an_error_with_its_message() -> None:
    parser = GeminiJsonParser()
    parser.feed(json.dumps({"type": "message", "role": "assistant", "content": "Trying."}))
    error = {"type": "FatalAuthenticationError", "message": "API key not valid"}
    (final,) = [
        e
        for e in parser.feed(json.dumps({"type": "result", "status": "error", "error": error}))
        if isinstance(e, Final)
    ]
    assert final.is_error and final.subtype == "FatalAuthenticationError"
    assert final.text == "Trying.\nAPI key not valid"


def test_a_gemini_limit_holds_its_own_provider() -> None:
    """Not the shared hold of runners that name no provider ("")."""
    assert GeminiRunner().provider == "google"


def test_the_clis_429_message_after_its_retries_is_a_rate_limit_and_a_daily_quota_usage() -> None:
    # the result line of gemini 0.61.0 after ten attempts against a lasting 429 (measured)
    rate = (
        '{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: '
        "Resource has been exhausted (e.g. check quota).]\\nPlease wait and try again later. "
        "To increase your limits, request a quota increase through AI Studio, or switch to "
        'another /auth method"},"stats":{"input_tokens":0,"output_tokens":0,"cached":0}}'
    )
    parser = GeminiJsonParser()
    final = next(e for e in parser.feed(rate) if isinstance(e, Final))
    assert final.is_error and final.limit is not None
    assert final.limit.kind is LimitKind.RATE and final.limit.resets_at is None
    daily = gemini_limit("[API Error: You have exhausted your daily quota on this model.]")
    assert daily is not None and daily.kind is LimitKind.USAGE
    # any other error is the agent's failure
    assert gemini_limit("[API Error: the request is too large (Status: INVALID_ARGUMENT)]") is None
