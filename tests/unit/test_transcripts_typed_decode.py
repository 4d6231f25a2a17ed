"""Claude Code lines decoded straight into typed records give the events of the plain
reading (every line decoded to a plain object, then read by ``feed_record``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.events import Event, Message, ToolCall, ToolResult, Turn, Usage
from seawall.transcripts import ClaudeStreamParser, TranscriptReader
from seawall.transcripts._claude_lines import decode_claude_line
from seawall.transcripts._common import decode_record
from tests.bench.bench_detectors import synthetic_mix
from tests.fixtures_path import transcript_files, transcripts_present

Counts = tuple[int | str | None, ...]


def _plain(lines: list[str]) -> tuple[list[Event], Counts]:
    """The events of ``lines`` with every JSON object decoded plainly."""
    reader = TranscriptReader()
    events: list[Event] = []
    for line in lines:
        record = None if reader._buffer else decode_record(line)
        events += reader.feed(line) if record is None else reader.feed_record(record)
    events += reader.finish()
    return events, _counts(reader)


def _typed(lines: list[str]) -> tuple[list[Event], Counts]:
    reader = TranscriptReader()
    events = [event for line in lines for event in reader.feed(line)]
    events += reader.finish()
    return events, _counts(reader)


def _counts(reader: TranscriptReader) -> Counts:
    claude = reader.claude
    return (reader.records, reader.malformed, reader.text_lines, claude.ignored,
            reader.codex.ignored, reader.rollout.ignored, claude.turns, claude.session_id,
            claude.model)  # fmt: skip


def _ticks() -> Callable[[], float]:
    """A clock that moves one second a reading, so each event shows when it was read."""
    counter: Iterator[int] = iter(range(1_000_000))
    return lambda: float(next(counter))


def _parser_events(lines: list[str], *, typed: bool) -> tuple[list[Event], Counts]:
    """The events of a ``ClaudeStreamParser`` with a clock (a live stream) fed by line,
    or fed each line's plain object."""
    parser = ClaudeStreamParser(clock=_ticks())
    events: list[Event] = []
    for line in lines:
        record = None if typed else decode_record(line)
        events += parser.feed(line) if record is None else parser.feed_record(record)
    return events, (parser.malformed, parser.ignored, parser.turns)


@pytest.mark.skipif(not transcripts_present(), reason="needs the shared fixtures")
@pytest.mark.parametrize("path", transcript_files(), ids=lambda path: path.parent.name)
def test_every_fixture_line_gives_the_events_of_the_plain_reading(path: Path) -> None:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    typed = _typed(lines)
    assert typed == _plain(lines)
    assert _parser_events(lines, typed=True) == _parser_events(lines, typed=False)
    if path.suffix == ".jsonl" and typed[1][6]:  # a Claude Code transcript with turns
        assert any(decode_claude_line(line) is not None for line in lines)


def test_every_synthetic_benchmark_line_gives_the_events_of_the_plain_reading() -> None:
    files = synthetic_mix(agents=12, calls=150)
    for lines in files:
        assert all(decode_claude_line(line) is not None for line in lines)  # the typed path
        typed = _typed(lines)
        assert typed == _plain(lines)
        kinds = {type(event) for event in typed[0]}
        assert kinds == {Turn, Usage, ToolCall, ToolResult, Message}
        assert _parser_events(lines, typed=True) == _parser_events(lines, typed=False)


def _assistant(*blocks: object, usage: object = None, **fields: object) -> str:
    message: dict[str, object] = {"id": "m1", "content": list(blocks)}
    if usage is not None:
        message["usage"] = usage
    return json.dumps({"type": "assistant", "message": message, **fields})


def _user(*blocks: object) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": list(blocks)}})


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (  # a float count is no count
            _assistant(usage={"input_tokens": 10.0, "output_tokens": 2}),
            [Turn(number=1), Usage(message_id="m1", input_tokens=0, output_tokens=2)],
        ),
        (  # nor is a boolean
            _assistant(usage={"input_tokens": True, "cache_read_input_tokens": 4}),
            [Turn(number=1), Usage(message_id="m1", cache_read_tokens=4)],
        ),
        (  # a block type the parser does not read, and a block that is not an object
            _assistant({"type": "future_block", "x": 1}, "stray", {"type": "text", "text": "hi"}),
            [Turn(number=1), Message(text="hi", turn=1)],
        ),
        (  # an id that is a number reads as its text; input that is a list as no input
            _assistant({"type": "tool_use", "id": 7, "name": "Bash", "input": ["ls"]}),
            [Turn(number=1), ToolCall(call_id="7", name="Bash", arguments={}, turn=1)],
        ),
        (  # a tool result whose parts are not all text
            _user({"type": "tool_result", "tool_use_id": "t", "content": [{"text": 3}, "x"]}),
            [ToolResult(call_id="t", text="")],
        ),
        (  # an is_error that is not true is no error
            _user({"type": "tool_result", "tool_use_id": "t", "content": "ok", "is_error": 1}),
            [ToolResult(call_id="t", text="ok")],
        ),
        (  # a timestamp that is a number gives no time
            _assistant({"type": "text", "text": "a"}, timestamp=12),
            [Turn(number=1), Message(text="a", turn=1)],
        ),
    ],
)
def test_a_line_of_an_odd_shape_is_refused_and_read_plainly(
    line: str, expected: list[Event]
) -> None:
    assert decode_claude_line(line) is None
    assert _typed([line]) == _plain([line])
    assert _typed([line])[0] == expected


def test_a_line_the_typed_decoder_reads_gives_its_events() -> None:
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "false"}}
    thinking = {"type": "thinking", "thinking": "hm", "signature": "s"}
    usage = {"input_tokens": 5, "cache_creation_input_tokens": 2}
    parts = [{"type": "text", "text": "Exit code 1"}, {"type": "text", "text": ""}]
    lines = [
        _assistant(thinking, call, usage=usage, timestamp="2025-01-02T03:04:05Z"),
        _user({"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": parts}),
    ]
    assert all(decode_claude_line(line) is not None for line in lines)
    at = 1735787045.0
    assert _typed(lines)[0] == [
        Turn(number=1, at=at),
        Usage(message_id="m1", input_tokens=5, cache_write_tokens=2, at=at),
        ToolCall(call_id="t1", name="Bash", arguments={"command": "false"}, turn=1, at=at),
        ToolResult(call_id="t1", is_error=True, text="Exit code 1\n", name="Bash", exit_code=1),
    ]


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                  max_size=3),
    max_leaves=6,
)  # fmt: skip
_PART = st.fixed_dictionaries({}, optional={"type": st.sampled_from(["text", "image"]),
                                             "text": st.text(max_size=4) | _VALUES})  # fmt: skip
_BLOCK = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "server_tool_use", "tool_result", "thinking",
                              "redacted_thinking", "image", "other"]) | _VALUES},
    optional={"id": st.sampled_from(["t1", "t2", ""]) | _VALUES,
              "tool_use_id": st.sampled_from(["t1", "t2"]) | _VALUES,
              "name": st.sampled_from(["Bash", "Read"]) | _VALUES,
              "input": st.dictionaries(st.text(max_size=3), _VALUES, max_size=2) | _VALUES,
              "text": st.text(max_size=6) | _VALUES,
              "content": st.text(max_size=6) | st.lists(_PART | _VALUES, max_size=3) | _VALUES,
              "is_error": st.booleans() | _VALUES},
)  # fmt: skip
_COUNT = st.integers(min_value=-3, max_value=2**70) | _VALUES
_MESSAGE = st.fixed_dictionaries(
    {},
    optional={"id": st.sampled_from(["m1", "m2", ""]) | _VALUES,
              "model": st.sampled_from(["opus", ""]) | _VALUES,
              "usage": st.fixed_dictionaries({}, optional={"input_tokens": _COUNT,
                                                           "output_tokens": _COUNT}) | _VALUES,
              "content": st.lists(_BLOCK | _VALUES, max_size=4) | _VALUES},
)  # fmt: skip
_RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["assistant", "user", "progress", "result"]) | _VALUES},
    optional={"message": _MESSAGE | _VALUES,
              "parent_tool_use_id": st.sampled_from(["toolu_1", ""]) | _VALUES,
              "timestamp": st.sampled_from(["2025-01-02T03:04:05Z", "2025-13-40", ""]) | _VALUES},
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_RECORD, max_size=6))
def test_any_records_give_the_events_of_the_plain_reading(
    records: list[dict[str, object]],
) -> None:
    lines = [json.dumps(record) for record in records]
    assert _typed(lines) == _plain(lines)
    assert _parser_events(lines, typed=True) == _parser_events(lines, typed=False)
