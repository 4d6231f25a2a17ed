"""Dropping noisy lines: the same lines as one multi-line pattern, found faster."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.breakers.signature import _DURATION, _URL, drop_noisy_lines
from seawall.events import ToolResult
from seawall.transcripts import TranscriptReader
from tests.fixtures_path import TRANSCRIPTS, transcripts_present

# the rule as one pattern: a line with a URL or a duration anywhere, with its newline
_RULE = re.compile(
    rf"^[^\n]*?(?:{_URL.pattern}|{_DURATION.pattern})[^\n]*(?:\n|$)",
    re.IGNORECASE | re.MULTILINE,
)


def _rule(text: str) -> str:
    return _RULE.sub("", text)


@pytest.mark.parametrize(
    "text",
    [
        "", "plain\n", "took", "a\nRan 5 tests in 0.31s\nb", "x 5\nms later\ny", "5\nmsx\nz",
        "see HTTPS://x.org\nok", "TIME: 3\n", "Finished In 2s", "12:30 ELAPSED\n\n",
        "a://b 3s\nc\n", "line\r\n4 secs\r\nend", "ſ K took\n", "1.5 µs\n2 µs",
    ],
)  # fmt: skip
def test_table(text: str) -> None:
    assert drop_noisy_lines(text) == _rule(text)


def test_a_duration_split_over_two_lines_takes_both() -> None:
    assert drop_noisy_lines("a\nwaited 5\nms then\nb") == "a\nb"


_PIECES = [*"0123456789 \n\t.:/-abcdefhimnorstuwKſİ", "://", "ms", "took", "sec", "time:"]
_ALPHABET = st.sampled_from(_PIECES)


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_same_lines_as_the_rule(text: str) -> None:
    assert drop_noisy_lines(text) == _rule(text)


@given(st.text(max_size=60))
def test_same_lines_as_the_rule_on_any_text(text: str) -> None:
    assert drop_noisy_lines(text) == _rule(text)


@pytest.mark.skipif(not transcripts_present(), reason="needs the shared fixtures")
def test_same_lines_as_the_rule_on_every_fixture_output() -> None:
    outputs = 0
    for path in sorted(TRANSCRIPTS.rglob("*.jsonl")):
        reader = TranscriptReader()
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            for event in reader.feed(line):
                if isinstance(event, ToolResult) and event.text:
                    outputs += 1
                    assert drop_noisy_lines(event.text) == _rule(event.text), path
    assert outputs > 500
