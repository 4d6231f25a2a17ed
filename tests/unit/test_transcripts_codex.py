"""CodexJsonParser: ``codex exec --json`` lines -> events."""

from __future__ import annotations

import json
from typing import Any

from seawall.events import Conversation, Final, Message, ToolCall, ToolResult, Turn, Usage
from seawall.transcripts import CodexJsonParser


def line(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def item(kind: str, item_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": item_id, "type": kind, **fields}


def feed_all(parser: CodexJsonParser, *lines: str) -> list[Any]:
    return [event for text in lines for event in parser.feed(text)]


def test_command_execution_call_and_result_with_exit_code() -> None:
    parser = CodexJsonParser()
    started = item("command_execution", "i1", command="pytest -q", status="in_progress")
    done = item(
        "command_execution", "i1", command="pytest -q", aggregated_output="1 failed", exit_code=1
    )
    events = feed_all(
        parser,
        line("thread.started", thread_id="th"),
        line("turn.started"),
        line("item.started", item=started),
        line("item.completed", item=done),
    )
    named, turn, call, res = events
    assert named == Conversation(id="th")  # the thread, to continue it later
    assert isinstance(turn, Turn) and turn.number == 1
    assert isinstance(call, ToolCall)
    assert (call.name, dict(call.arguments), call.call_id) == (
        "command_execution",
        {"command": "pytest -q"},
        "i1",
    )
    assert isinstance(res, ToolResult)
    assert (res.exit_code, res.is_error, res.text, res.name) == (
        1,
        True,
        "1 failed",
        "command_execution",
    )


def test_successful_command_is_not_an_error_and_completed_without_start_emits_call() -> None:
    parser = CodexJsonParser()
    done = item("command_execution", "i2", command="ls", aggregated_output="a\n", exit_code=0)
    events = feed_all(parser, line("item.completed", item=done))
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["Turn", "ToolCall", "ToolResult"]
    assert not events[-1].is_error and events[-1].exit_code == 0


def test_file_change_call_shape() -> None:
    parser = CodexJsonParser()
    changes = [{"path": "src/a.py", "kind": "update"}, {"path": "b.md", "kind": "add"}]
    events = feed_all(
        parser,
        line("item.started", item=item("file_change", "f1", changes=changes, status="x")),
        line("item.completed", item=item("file_change", "f1", changes=changes, status="failed")),
    )
    call = next(e for e in events if isinstance(e, ToolCall))
    res = next(e for e in events if isinstance(e, ToolResult))
    assert call.name == "file_change"
    assert call.arguments == {"changes": changes}
    assert res.is_error


def test_turns_follow_model_responses() -> None:
    parser = CodexJsonParser()
    cmd = item("command_execution", "c1", command="ls", exit_code=0, aggregated_output="")
    cmd2 = dict(cmd, id="c2")
    events = feed_all(
        parser,
        line("turn.started"),
        line("item.completed", item=item("reasoning", "r1", text="thinking")),
        line("item.completed", item=cmd),
        line("item.completed", item=cmd2),
        line("item.completed", item=item("agent_message", "m1", text="All done.")),
    )
    assert [e.number for e in events if isinstance(e, Turn)] == [1, 2, 3]
    assert [e.text for e in events if isinstance(e, Message)] == ["All done."]


def test_turn_completed_gives_usage_and_final_with_last_message() -> None:
    parser = CodexJsonParser()
    usage = {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 9}
    events = feed_all(
        parser,
        line("thread.started", thread_id="th"),
        line("turn.started"),
        line("item.completed", item=item("agent_message", "m", text="STATUS: done")),
        line("turn.completed", usage=usage),
    )
    use = next(e for e in events if isinstance(e, Usage))
    final = events[-1]
    assert (use.input_tokens, use.cache_read_tokens, use.output_tokens) == (
        40,
        60,
        9,
    )  # uncached input, as for Claude Code
    assert use.message_id == "th:turn-1"
    assert isinstance(final, Final)
    assert (final.text, final.is_error, final.num_turns) == ("STATUS: done", False, 1)
    assert parser.finish() == []


def test_turn_failed_and_stream_error_are_error_finals() -> None:
    parser = CodexJsonParser()
    events = feed_all(
        parser,
        line("turn.started"),
        line("error", message="usage limit"),
        line("turn.failed", error={"message": "usage limit"}),
    )
    assert len(events) == 1
    assert isinstance(events[0], Final) and events[0].is_error
    assert events[0].text == "usage limit"
    assert parser.finish() == []
    parser.feed(line("error", message="stream disconnected"))
    (owed,) = parser.finish()
    assert isinstance(owed, Final) and owed.is_error and owed.subtype == "error"


def test_warnings_reasoning_todo_and_updates_give_no_events() -> None:
    parser = CodexJsonParser()
    events = feed_all(
        parser,
        line("item.completed", item=item("error", "e", message="skills shortened")),
        line("item.started", item=item("todo_list", "t", items=[])),
        line("item.updated", item=item("todo_list", "t", items=[])),
        line("item.completed", item=item("reasoning", "r", text="hmm")),
        line("token_count", info={}),
    )
    assert events == []
    assert parser.warnings == ["skills shortened"]
    assert parser.ignored == 2


def test_mcp_and_web_search_items() -> None:
    parser = CodexJsonParser()
    mcp = item("mcp_tool_call", "m", server="fs", tool="read", arguments={"p": 1}, status="failed")
    mcp["error"] = {"message": "denied"}
    events = feed_all(
        parser,
        line("item.completed", item=mcp),
        line("item.completed", item=item("web_search", "w", query="anyio")),
    )
    calls = [e for e in events if isinstance(e, ToolCall)]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(c.name, dict(c.arguments)) for c in calls] == [
        ("mcp__fs__read", {"p": 1}),
        ("web_search", {"query": "anyio"}),
    ]
    assert [(r.is_error, r.text) for r in results] == [(True, "denied"), (False, "")]


def test_malformed_lines_counted_never_raised() -> None:
    parser = CodexJsonParser()
    for garbage in ("nope", "{", "[]", '{"type": "item.completed", "item": 3}'):
        assert parser.feed(garbage) == []
    assert parser.malformed == 4
