"""ClaudeStreamParser: stream-json and on-disk session lines -> events."""

from __future__ import annotations

import json
from typing import Any

from seawall.events import (
    Conversation,
    Final,
    HumanTurn,
    Message,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
)
from seawall.transcripts import ClaudeStreamParser


def line(record: dict[str, Any]) -> str:
    return json.dumps(record)


def assistant(msg_id: str, *blocks: dict[str, Any], parent: str | None = None) -> str:
    usage = {"input_tokens": 3, "output_tokens": 7, "cache_read_input_tokens": 11}
    message = {"id": msg_id, "role": "assistant", "content": list(blocks), "usage": usage}
    return line({"type": "assistant", "message": message, "parent_tool_use_id": parent})


def tool_use(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def tool_result(call_id: str, content: Any, *, is_error: bool = False) -> str:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    block["is_error"] = is_error
    return line({"type": "user", "message": {"role": "user", "content": [block]}})


def result(**fields: Any) -> str:
    base = {"type": "result", "subtype": "success", "is_error": False, "result": "done"}
    return line(base | fields)


def test_turn_per_message_id_and_usage_once_per_message() -> None:
    parser = ClaudeStreamParser()
    events = [
        *parser.feed(assistant("m1", {"type": "text", "text": "Looking."})),
        *parser.feed(assistant("m1", tool_use("t1", "Read", file_path="a.py"))),
        *parser.feed(assistant("m2", tool_use("t2", "Bash", command="ls"))),
    ]
    assert [e.number for e in events if isinstance(e, Turn)] == [1, 2]
    usages = [e for e in events if isinstance(e, Usage)]
    assert [u.message_id for u in usages] == ["m1", "m2"]
    assert usages[0].input_tokens == 3 and usages[0].cache_read_tokens == 11
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.turn, dict(c.arguments)) for c in calls] == [
        ("Read", 1, {"file_path": "a.py"}),
        ("Bash", 2, {"command": "ls"}),
    ]
    assert [e.text for e in events if isinstance(e, Message)] == ["Looking."]
    assert parser.turns == 2


def test_subagent_tool_names_pass_through_and_nested_messages_add_no_turn() -> None:
    parser = ClaudeStreamParser()
    events = parser.feed(assistant("m1", tool_use("t1", "Task", prompt="explore")))
    events += parser.feed(assistant("m1", tool_use("t2", "Agent", prompt="review")))
    nested = parser.feed(assistant("sub1", tool_use("t3", "Edit", file_path="x"), parent="t1"))
    assert [c.name for c in events if isinstance(c, ToolCall)] == ["Task", "Agent"]
    assert not [e for e in nested if isinstance(e, Turn)]
    assert [c.name for c in nested if isinstance(c, ToolCall)] == ["Edit"]
    assert parser.turns == 1


def test_tool_result_error_flag_exit_code_and_text_blocks() -> None:
    parser = ClaudeStreamParser()
    parser.feed(assistant("m1", tool_use("t1", "Bash", command="pytest")))
    parser.feed(assistant("m1", tool_use("t2", "Read", file_path="a")))
    (failed,) = parser.feed(tool_result("t1", "Exit code 2\nboom", is_error=True))
    (ok,) = parser.feed(tool_result("t2", [{"type": "text", "text": "one"}, {"type": "image"}]))
    assert isinstance(failed, ToolResult) and isinstance(ok, ToolResult)
    assert (failed.is_error, failed.exit_code, failed.name, failed.cancelled) == (
        True,
        2,
        "Bash",
        False,
    )
    assert (ok.is_error, ok.text, ok.name, ok.exit_code) == (False, "one", "Read", None)


def test_sibling_cancelled_result_is_marked_cancelled() -> None:
    parser = ClaudeStreamParser()
    parser.feed(assistant("m1", tool_use("t1", "Bash", command="false"), tool_use("t2", "Read")))
    text = "<tool_use_error>Sibling tool call errored</tool_use_error>"
    (first,) = parser.feed(tool_result("t1", "Exit code 1", is_error=True))
    (second,) = parser.feed(tool_result("t2", text, is_error=True))
    assert isinstance(first, ToolResult) and isinstance(second, ToolResult)
    assert not first.cancelled
    assert second.cancelled and second.is_error


def test_final_success_and_failures() -> None:
    parser = ClaudeStreamParser()
    (ok,) = parser.feed(result(num_turns=4, total_cost_usd=0.25, duration_ms=900))
    (api_failure,) = parser.feed(result(is_error=True, result="API Error: 529 overloaded"))
    (max_turns,) = parser.feed(line({"type": "result", "subtype": "error_max_turns"}))
    assert isinstance(ok, Final) and not ok.is_error
    assert (ok.num_turns, ok.cost_usd, ok.duration_ms, ok.text) == (4, 0.25, 900, "done")
    assert isinstance(api_failure, Final) and api_failure.is_error
    assert api_failure.subtype == "success" and "529" in api_failure.text
    assert isinstance(max_turns, Final) and max_turns.is_error
    assert max_turns.subtype == "error_max_turns"


def test_init_recorded_unknown_ignored_malformed_counted() -> None:
    parser = ClaudeStreamParser()
    init = {"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-x"}
    assert parser.feed(line(init)) == [Conversation(id="s1")]  # the session, to continue it
    assert (parser.session_id, parser.model) == ("s1", "claude-x")
    assert parser.feed(line({"type": "stream_event", "event": {}})) == []
    assert parser.feed(line({"type": "progress", "data": {}})) == []
    assert parser.ignored == 2
    for garbage in ("not json", "{broken", "[1, 2]", "\x00\xff", '"text"'):
        assert parser.feed(garbage) == []
    assert parser.feed("   \n") == []
    assert parser.malformed == 5
    assert parser.feed(line({"type": "assistant", "message": "oops"})) == []
    assert parser.malformed == 6


def test_on_disk_session_lines_carry_their_timestamps() -> None:
    parser = ClaudeStreamParser()
    record = {
        "type": "assistant",
        "sessionId": "s",
        "timestamp": "2026-02-11T21:41:48.049Z",
        "message": {"id": "m", "content": [{"type": "text", "text": "hi"}]},
    }
    prompt = {"type": "user", "message": {"role": "user", "content": "do the thing"}}
    events = parser.feed(line(record))
    assert events and all(e.at == 1770846108.049 for e in events)
    assert parser.feed(line(prompt)) == [HumanTurn(text="do the thing", at=0.0)]


def test_clock_stamps_live_events() -> None:
    parser = ClaudeStreamParser(clock=lambda: 42.0)
    events = parser.feed(assistant("m", {"type": "text", "text": "x"}))
    assert {e.at for e in events} == {42.0}


def test_long_tool_output_keeps_head_and_tail() -> None:
    parser = ClaudeStreamParser()
    parser.feed(assistant("m", tool_use("t", "Bash", command="make")))
    text = "HEAD" + "x" * 100_000 + "TAIL"
    (res,) = parser.feed(tool_result("t", text, is_error=True))
    assert isinstance(res, ToolResult)
    assert res.text.startswith("HEAD") and res.text.endswith("TAIL")
    assert len(res.text) < 20_000


def _user(content: Any, **fields: Any) -> str:
    return line({"type": "user", "message": {"role": "user", "content": content}, **fields})


def test_a_persons_prompt_and_interruption_are_human_turns() -> None:
    parser = ClaudeStreamParser()
    assert parser.feed(_user("now fix the tests")) == [HumanTurn(text="now fix the tests")]
    interrupted = [{"type": "text", "text": "[Request interrupted by user for tool use]"}]
    (turn,) = parser.feed(_user(interrupted))
    assert isinstance(turn, HumanTurn) and "interrupted" in turn.text


def test_lines_claude_code_writes_itself_are_no_human_turn() -> None:
    parser = ClaudeStreamParser()
    for content in (
        "<task-notification>\n<task-id>b1</task-id>",
        "<local-command-stdout>Compacted</local-command-stdout>",
        "This session is being continued from a previous conversation that ran out of context.",
        "Stop hook feedback:\n[stop.sh]: # Running Quality Checks",
    ):
        assert parser.feed(_user(content)) == [], content
    assert parser.feed(_user("Caveat: the messages below", isMeta=True)) == []
    meta = [{"type": "text", "text": "Base directory for this skill"}]
    assert parser.feed(_user(meta, isMeta=True)) == []


def test_a_call_the_person_refused_is_refused_not_failed() -> None:
    parser = ClaudeStreamParser()
    parser.feed(assistant("m", tool_use("t", "WebFetch", url="https://example.com")))
    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected "
        "(eg. if it was a file edit, the new_string was NOT written to the file)."
    )
    (res,) = parser.feed(tool_result("t", rejected, is_error=True))
    assert isinstance(res, ToolResult) and res.refused and res.is_error
    parser.feed(assistant("n", tool_use("u", "Bash", command="false")))
    (failed,) = parser.feed(tool_result("u", "Exit code 1", is_error=True))
    assert isinstance(failed, ToolResult) and not failed.refused
