"""Reading only the turn fields of a line gives the same events as reading it whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.events import Event
from seawall.transcripts import TranscriptReader
from seawall.transcripts._common import decode_record
from tests.fixtures_path import transcript_files, transcripts_present


def _whole(lines: list[str]) -> tuple[list[Event], tuple[int, ...]]:
    """The events of ``lines`` with every record decoded whole."""
    reader = TranscriptReader()
    events: list[Event] = []
    for line in lines:
        record = None if reader._buffer else decode_record(line)
        events += reader.feed(line) if record is None else reader.feed_record(record)
    events += reader.finish()
    return events, _counts(reader)


def _lean(lines: list[str]) -> tuple[list[Event], tuple[int, ...]]:
    reader = TranscriptReader()
    events = [event for line in lines for event in reader.feed(line)]
    events += reader.finish()
    return events, _counts(reader)


def _counts(reader: TranscriptReader) -> tuple[int, ...]:
    return (reader.records, reader.malformed, reader.text_lines, reader.claude.ignored,
            reader.codex.ignored, reader.rollout.ignored, reader.claude.turns)  # fmt: skip


@pytest.mark.skipif(not transcripts_present(), reason="needs the shared fixtures")
@pytest.mark.parametrize("path", transcript_files(), ids=lambda path: path.parent.name)
def test_every_fixture_line_gives_the_same_events(path: Path) -> None:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    lean = _lean(lines)
    assert lean[0] or path.suffix == ".txt"
    assert lean == _whole(lines)


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_TYPES = st.sampled_from(["assistant", "user", "result", "system", "progress", "item.completed",
                          "response_item", "turn.failed", "error"]) | _VALUES  # fmt: skip
_BLOCK = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "tool_result"])},
    optional={"id": st.sampled_from(["t1", "t2"]), "tool_use_id": st.sampled_from(["t1", "t2"]),
              "name": st.sampled_from(["Bash", "Read"]), "input": _VALUES, "text": st.text(),
              "content": st.text() | _VALUES, "is_error": st.booleans()},
)  # fmt: skip
_RECORD = st.fixed_dictionaries(
    {"type": _TYPES},
    optional={"message": st.fixed_dictionaries({}, optional={"id": st.text(max_size=3),
                                                              "content": st.lists(_BLOCK) | _VALUES,
                                                              "usage": _VALUES}) | _VALUES,
              "parent_tool_use_id": _VALUES, "timestamp": st.just("2025-01-02T03:04:05Z") | _VALUES,
              "payload": _VALUES, "toolUseResult": _VALUES, "data": _VALUES, "item": _VALUES,
              "subtype": st.sampled_from(["init", "success"]) | _VALUES, "result": _VALUES,
              "error": _VALUES},
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(_RECORD, max_size=6), st.lists(st.sampled_from(["", "  ", "{", "}", "not json",
                                                                 "[1]", "1e999", '{"a": 1e999}']),
                                                max_size=2))  # fmt: skip
def test_any_records_give_the_same_events(
    records: list[dict[str, object]], extra: list[str]
) -> None:
    lines = [json.dumps(record) for record in records] + extra
    assert _lean(lines) == _whole(lines)
