"""Whole transcripts: format sniffing, logs with embedded JSON, the real fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.events import Final, ToolCall, ToolResult, Turn
from seawall.transcripts import TranscriptFormat, parse_file, parse_lines, sniff_format
from tests.fixtures_path import TRANSCRIPTS, transcripts_present

FIXTURES = TRANSCRIPTS
needs_fixtures = pytest.mark.skipif(
    not transcripts_present(),
    reason=f"real transcripts not present at {FIXTURES} (set SEAWALL_FIXTURES)",
)


def fixture_files(suffix: str) -> list[Path]:
    return sorted(FIXTURES.rglob(f"*{suffix}")) if FIXTURES.is_dir() else []


def test_plain_text_and_binary_give_no_events(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n{ not json\n}\n[INFO] nothing\n")
    binary = tmp_path / "blob.jsonl"
    binary.write_bytes(bytes(range(256)) * 50)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert list(parse_file(text)) == []
    assert list(parse_file(binary)) == []
    assert list(parse_file(empty)) == []
    assert sniff_format(text) is TranscriptFormat.TEXT
    assert sniff_format(empty) is TranscriptFormat.EMPTY


def test_log_with_prefixed_pretty_printed_and_split_json() -> None:
    record = {
        "type": "assistant",
        "message": {"id": "m", "content": [{"type": "tool_use", "id": "t", "name": "Bash"}]},
    }
    pretty = json.dumps(record, indent=2).splitlines(keepends=True)
    one_line = json.dumps({"type": "result", "subtype": "success", "result": "ok"})
    lines = [
        "[2025-11-14T20:01:16.782Z] [INFO] starting\n",
        f"[2025-11-14T20:01:17.000Z] [INFO] {pretty[0]}",
        *pretty[1:],
        "\n",
        f"[2025-11-14T20:01:18.000Z] [INFO] {one_line[:30]}\n",
        f"[2025-11-14T20:01:18.001Z] [INFO] {one_line[30:]}\n",
    ]
    events = list(parse_lines(lines))
    assert [type(e).__name__ for e in events] == ["Turn", "ToolCall", "Final"]


def test_mixed_codex_and_claude_records_route_to_their_parser() -> None:
    lines = [
        json.dumps({"type": "turn.started"}),
        json.dumps(
            {
                "type": "item.completed",
                "item": {"id": "1", "type": "command_execution", "command": "x", "exit_code": 3},
            }
        ),
        json.dumps({"type": "result", "subtype": "success", "is_error": True, "result": "e"}),
    ]
    events = list(parse_lines(lines))
    results = [e for e in events if isinstance(e, ToolResult)]
    finals = [e for e in events if isinstance(e, Final)]
    assert results[0].exit_code == 3 and results[0].is_error
    assert finals[0].is_error


@needs_fixtures
@pytest.mark.parametrize("path", fixture_files(".jsonl"), ids=lambda p: p.name)
def test_every_fixture_jsonl_parses_into_tool_events(path: Path) -> None:
    events = list(parse_file(path))
    calls = {e.call_id for e in events if isinstance(e, ToolCall)}
    results = {e.call_id for e in events if isinstance(e, ToolResult)}
    assert any(isinstance(e, Turn) for e in events)
    assert sniff_format(path) in {
        TranscriptFormat.CLAUDE_SESSION,
        TranscriptFormat.CODEX,
    }
    assert results <= calls  # every result answers a call the parser saw


@needs_fixtures
@pytest.mark.parametrize("path", fixture_files(".txt"), ids=lambda p: p.name)
def test_every_fixture_log_is_read_without_error(path: Path) -> None:
    events = list(parse_file(path))
    assert sniff_format(path) is TranscriptFormat.LOG
    assert any(isinstance(e, Final) for e in events)


@needs_fixtures
def test_fixture_sibling_cancellations_are_marked() -> None:
    cancelled = [
        e
        for path in fixture_files(".jsonl")
        for e in parse_file(path)
        if isinstance(e, ToolResult) and e.cancelled
    ]
    assert cancelled, "the fixtures hold sibling-cancelled tool results"
    assert all(e.is_error and "Sibling tool call errored" in e.text for e in cancelled)


@needs_fixtures
def test_codex_fixture_commands_have_exit_codes() -> None:
    path = FIXTURES / "yuanyuanyuan__stark-repo-analyzer-skill" / "codex-events.jsonl"
    events = list(parse_file(path))
    commands = [e for e in events if isinstance(e, ToolResult) and e.name == "command_execution"]
    assert len(commands) == 20
    assert all(e.exit_code is not None for e in commands)
    assert all(e.is_error == (e.exit_code != 0) for e in commands)


@needs_fixtures
def test_codex_loop_log_reports_each_failed_turn() -> None:
    path = (
        FIXTURES / "link-assistant__hive-mind" / "issue-729-codex-loop" / "rapid-loop-section.txt"
    )
    finals = [e for e in parse_file(path) if isinstance(e, Final)]
    failed = [f for f in finals if f.is_error]
    assert len(failed) == 10
    assert all("usage limit" in f.text for f in failed)


def test_a_broken_object_does_not_swallow_the_records_after_it() -> None:
    record = json.dumps({"type": "result", "subtype": "success", "result": "ok"})
    lines = ["{half a record\n", "  still broken\n", record + "\n"]
    events = list(parse_lines(lines))
    assert [type(e).__name__ for e in events] == ["Final"]


def test_public_names_of_the_package() -> None:
    import seawall.transcripts as package

    assert set(package.__all__) == {
        "CODEX_EVENT_TYPES",
        "SIBLING_ERROR_MARKER",
        "ClaudeStreamParser",
        "CodexJsonParser",
        "CodexRolloutParser",
        "TranscriptFormat",
        "TranscriptReader",
        "parse_file",
        "parse_lines",
        "sniff_format",
    }
    assert all(hasattr(package, name) for name in package.__all__)


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "result", "total_cost_usd": NaN, "result": "done"}',
        '{"type": "result", "total_cost_usd": 1e400, "result": "done"}',
        '{"type": "result", "result": "half \\ud83d of a pair"}',
        '  {"type": "result", "result": "blank space around"}  \n',
        '{"type": "result", "result": "a", "result": "the last of a repeated key"}',
    ],
)
def test_a_line_json_accepts_reads_as_json_reads_it(text: str) -> None:
    (final,) = parse_lines([text])
    assert isinstance(final, Final)
    assert final.text == json.loads(text)["result"]
