"""Codex's half of human turns: the person's own prompts, their interrupting a turn and
their refusing a call, read from rollout files and ``exec --json`` streams."""

from __future__ import annotations

import json
from typing import Any

import pytest

from seawall.breakers import AgentBreaker, BreakerKind
from seawall.events import Final, HumanTurn, ToolCall, ToolResult, Turn
from seawall.transcripts import CodexJsonParser, CodexRolloutParser, parse_file, parse_lines
from tests.fixtures_path import TRANSCRIPTS, transcripts_present


def line(record: str, **payload: Any) -> str:
    return json.dumps({"timestamp": "2026-12-01T08:42:11.532Z", "type": record, "payload": payload})


def item(kind: str, **fields: Any) -> str:
    return line("response_item", type=kind, **fields)


def user_message(text: str, **more: Any) -> str:
    return line("event_msg", type="user_message", message=text, images=[], **more)


def shell(call_id: str, command: str) -> str:
    arguments = json.dumps({"cmd": command})
    return item("function_call", call_id=call_id, name="exec_command", arguments=arguments)


def output(call_id: str, text: str) -> str:
    return item("function_call_output", call_id=call_id, output=text)


def failing(call_id: str, command: str, code: int = 47) -> list[str]:
    return [shell(call_id, command), output(call_id, f"Process exited with code {code}\nboom")]


def events_of(lines: list[str]) -> list[Any]:
    parser = CodexRolloutParser()
    return [event for raw in lines for event in parser.feed(raw)]


def test_what_the_person_typed_is_a_human_turn() -> None:
    events = events_of(
        [
            item("message", role="user", content=[{"type": "input_text", "text": "Fix it"}]),
            user_message("Fix it"),
            item("message", role="assistant", content=[{"type": "output_text", "text": "On it"}]),
            user_message("no, the other file"),
        ]
    )
    humans = [e for e in events if isinstance(e, HumanTurn)]
    # the user-role response item repeats the event: one human turn per prompt, not two
    assert [h.text for h in humans] == ["Fix it", "no, the other file"]


@pytest.mark.parametrize(
    "raw",
    [
        user_message("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
        user_message("<user_instructions>\nbe brief\n</user_instructions>"),
        user_message("# AGENTS.md instructions for /w\n\nuse uv"),
        user_message("<turn_aborted>\nThe user interrupted the previous turn</turn_aborted>"),
        user_message("Run the tests", kind="environment_context"),
        user_message("be brief", kind="user_instructions"),
        item("message", role="user", content=[{"type": "input_text", "text": "typed"}]),
        line("event_msg", type="turn_aborted", reason="replaced"),
    ],
)
def test_what_codex_writes_itself_is_no_human_turn(raw: str) -> None:
    assert [e for e in events_of([raw]) if isinstance(e, HumanTurn)] == []


def test_a_plain_kind_of_an_older_codex_is_the_person() -> None:
    events = events_of([user_message("try again", kind="plain")])
    assert [e.text for e in events if isinstance(e, HumanTurn)] == ["try again"]


def test_an_interrupted_turn_is_the_person_stopping_the_agent() -> None:
    events = events_of([line("event_msg", type="turn_aborted", turn_id="t2", reason="interrupted")])
    assert len(events) == 1 and isinstance(events[0], HumanTurn)


def test_the_model_answering_a_person_starts_a_new_turn() -> None:
    events = events_of(
        [
            item("message", role="assistant", content=[{"type": "output_text", "text": "Done"}]),
            user_message("and the README?"),
            item("message", role="assistant", content=[{"type": "output_text", "text": "Sure"}]),
        ]
    )
    assert [e.number for e in events if isinstance(e, Turn)] == [1, 2]


@pytest.mark.parametrize(
    "text",
    [
        "exec command rejected by user",
        "patch rejected by user",
        "writing outside of the project; rejected by user approval settings",
    ],
)
def test_a_refused_call_is_refused_not_failed(text: str) -> None:
    events = events_of([shell("c1", "curl -sS https://example.com"), output("c1", text)])
    result = events[-1]
    assert isinstance(result, ToolResult) and result.refused and result.is_error


def test_a_failure_that_mentions_a_rejection_is_still_a_failure() -> None:
    events = events_of(
        [
            shell("c1", "grep -r 'rejected by user' src"),
            output("c1", "Process exited with code 1\nsrc/a.py: exec command rejected by user"),
            item("custom_tool_call", call_id="c2", name="apply_patch", input="*** Begin Patch\n"),
            item("custom_tool_call_output", call_id="c2", output="patch rejected: empty patch"),
        ]
    )
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.is_error, r.refused) for r in results] == [(True, False), (True, False)]


def test_a_declined_file_change_is_refused() -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"
    declined = {"type": "FileChange", "id": "c1", "status": "declined", "changes": {}}
    events = events_of(
        [
            item("custom_tool_call", call_id="c1", name="apply_patch", input=patch),
            line("event_msg", type="item_completed", item=declined),
            item("custom_tool_call_output", call_id="c1", output="patch rejected by user"),
            line("event_msg", type="item_completed", item={**declined, "id": "c9"}),
        ]
    )
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.call_id, r.is_error, r.refused) for r in results] == [
        ("c1", True, True),
        ("c9:file_change", True, True),
    ]


def test_three_refusals_by_the_person_trip_nothing() -> None:
    lines = [
        line_ for n in range(3)
        for line_ in (shell(f"c{n}", f"curl -sS https://example.com/{n}"),
                      output(f"c{n}", "exec command rejected by user"))
    ]  # fmt: skip
    breaker = AgentBreaker(clock=lambda: 0.0)
    assert [t for t in map(breaker.observe, parse_lines(lines)) if t is not None] == []
    assert breaker.consecutive_failures == 0


def test_a_person_speaking_ends_the_streak_of_failures() -> None:
    two = [*failing("c1", "curl -sS https://a.example"), *failing("c2", "curl -sS https://b.ex")]
    third = failing("c3", "curl -sS https://c.example")
    between = AgentBreaker(clock=lambda: 0.0)
    events = parse_lines([*two, user_message("the VPN is up now, go on"), *third])
    assert [t for t in map(between.observe, events) if t is not None] == []
    without = AgentBreaker(clock=lambda: 0.0)
    trips = [t for t in map(without.observe, parse_lines([*two, *third])) if t is not None]
    assert [t.kind for t in trips] == [BreakerKind.CONSECUTIVE_FAILURES]


def test_exec_json_a_declined_command_is_refused() -> None:
    parser = CodexJsonParser()
    declined = {
        "id": "i1",
        "type": "command_execution",
        "command": "rm -rf build",
        "aggregated_output": "exec command rejected by user",
        "exit_code": None,
        "status": "declined",
    }
    failed = {**declined, "id": "i2", "aggregated_output": "boom", "exit_code": 1}
    failed["status"] = "failed"
    events = [
        e
        for raw in (json.dumps({"type": "item.completed", "item": it}) for it in (declined, failed))
        for e in parser.feed(raw)
    ]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.is_error, r.refused) for r in results] == [(True, True), (True, False)]


CODEX_FIXTURES = (
    "yuanyuanyuan__stark-repo-analyzer-skill/codex-events.jsonl",
    "link-assistant__hive-mind/issue-729-codex-loop/rapid-loop-section.txt",
)


@pytest.mark.skipif(not transcripts_present(), reason=f"no public transcripts at {TRANSCRIPTS}")
@pytest.mark.parametrize("relative", CODEX_FIXTURES)
def test_public_codex_streams_hold_no_person_and_no_refusal(relative: str) -> None:
    """The public Codex captures are unattended ``exec --json`` runs: the stream names no
    prompt, and an orchestrator restarting Codex (``turn.started`` after ``turn.failed``)
    is no person speaking."""
    events = list(parse_file(TRANSCRIPTS / relative))
    assert [e for e in events if isinstance(e, ToolCall)], "the fixture's calls were read"
    assert [e for e in events if isinstance(e, HumanTurn)] == []
    assert [e for e in events if isinstance(e, ToolResult) and e.refused] == []


@pytest.mark.skipif(not transcripts_present(), reason=f"no public transcripts at {TRANSCRIPTS}")
def test_a_person_between_the_public_restart_loop_runs_does_not_hide_it() -> None:
    """The public restart loop (ten runs, each ending in the same ``turn.failed``) with a
    person's turn put before every restart: the streak of consecutive failures starts
    over at each, but the same failure of the run is counted on, and trips at the third
    failed run as it does unattended."""
    events = list(parse_file(TRANSCRIPTS / CODEX_FIXTURES[1]))
    failed_runs = [e for e in events if isinstance(e, Final) and e.is_error]
    assert len(failed_runs) >= 3
    with_person: list[Any] = []
    for event in events:
        with_person.append(event)
        if isinstance(event, Final) and event.is_error:
            with_person.append(HumanTurn(text="try again"))
    for stream in (events, with_person):
        breaker = AgentBreaker(clock=lambda: 0.0)
        trips = []
        runs = 0
        for event in stream:
            runs += isinstance(event, Final) and event.is_error
            trip = breaker.observe(event)
            if trip is not None:
                trips.append((runs, trip.kind))
        assert trips[0] == (3, BreakerKind.COMMAND_FAILURES)
