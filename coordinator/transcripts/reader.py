"""Reading whole transcripts: format sniffing, log unwrapping, parser dispatch."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from enum import StrEnum
from itertools import islice
from pathlib import Path

from seawall.codec import JsonView
from seawall.events import Conversation, Event
from seawall.transcripts._claude_lines import CLAUDE_LINE_DECODER
from seawall.transcripts._common import decode_record, decode_turn_record
from seawall.transcripts.claude import ClaudeStreamParser
from seawall.transcripts.codex import CODEX_EVENT_TYPES, CodexJsonParser
from seawall.transcripts.codex_rollout import ROLLOUT_RECORD_TYPES, CodexRolloutParser

__all__ = ["TranscriptFormat", "TranscriptReader", "parse_file", "parse_lines", "sniff_format"]

_LOG_PREFIX = re.compile(r"^\[[^\]\n]{1,64}\] \[[A-Za-z]{1,16}\] ")
_MAX_OBJECT_LINES = 50_000
_SNIFF_LINES = 50
_WHOLE_TYPES = CODEX_EVENT_TYPES | ROLLOUT_RECORD_TYPES | {"result", "system", "rate_limit_event"}
"""Record types whose parsers read more than the turn fields (``decode_turn_record``)."""
_decode_line = CLAUDE_LINE_DECODER.decode


class TranscriptFormat(StrEnum):
    """What a transcript file holds, judged from its first lines."""

    CLAUDE_STREAM = "claude-stream-json"  # claude -p --output-format stream-json
    CLAUDE_SESSION = "claude-session"  # on-disk session or subagent transcript
    CODEX = "codex-exec-json"
    CODEX_ROLLOUT = "codex-rollout"  # $CODEX_HOME/sessions/**/rollout-*.jsonl
    LOG = "log"  # text lines with JSON events embedded
    TEXT = "text"  # no JSON events at all
    EMPTY = "empty"


class TranscriptReader:
    """Parses a mixed stream of lines into events, choosing a parser per record.

    Duties: decode each JSON line (Claude Code's lines straight into typed records,
    any other or odd line as a plain object); unwrap ``[timestamp] [LEVEL] `` log
    prefixes and reassemble JSON objects pretty-printed over several lines; send Codex
    event types to a ``CodexJsonParser``, Codex rollout records to a
    ``CodexRolloutParser`` and everything else to a ``ClaudeStreamParser``; count text
    lines, and JSON that never completed, without raising. ``finish()`` returns the
    events owed at the end of the stream. A transcript read back tells what its agent
    did: the conversation ids its CLI named (``Conversation``) are left out (a runner's
    own parser gives them, for continuing the conversation).
    """

    __slots__ = (
        "_buffer",
        "_feed_line",
        "claude",
        "codex",
        "records",
        "rollout",
        "text_lines",
        "unfinished",
    )

    def __init__(self) -> None:
        self.claude = ClaudeStreamParser()
        self._feed_line = self.claude.feed_line
        self.codex = CodexJsonParser()
        self.rollout = CodexRolloutParser()
        self._buffer: list[str] = []
        self.records = 0
        self.text_lines = 0
        self.unfinished = 0

    @property
    def malformed(self) -> int:
        """Lines or objects that looked like JSON events and were not."""
        parsers = self.claude.malformed + self.codex.malformed + self.rollout.malformed
        return parsers + self.unfinished

    def feed(self, line: str) -> list[Event]:
        """The events of one physical line."""
        if not self._buffer:
            try:
                typed = _decode_line(line)
            except (ValueError, RecursionError):  # not a line the typed decoder reads
                record = decode_turn_record(line, _WHOLE_TYPES)
            else:
                if typed.type not in _WHOLE_TYPES:
                    self.records += 1
                    return self._feed_line(typed)
                record = decode_record(line)
            if record is not None:
                return self.feed_record(record)
            if not line or line.isspace():
                return []
        return self._feed_text(line)

    def feed_record(self, record: JsonView) -> list[Event]:
        """The events of one decoded record, from the parser its type belongs to."""
        self.records += 1
        kind = record.get("type")
        if isinstance(kind, str) and kind in CODEX_EVENT_TYPES:
            events = self.codex.feed_record(record)
            return [event for event in events if type(event) is not Conversation]
        if isinstance(kind, str) and kind in ROLLOUT_RECORD_TYPES and "payload" in record:
            return self.rollout.feed_record(record)
        events = self.claude.feed_record(record)
        return [event for event in events if type(event) is not Conversation]

    def finish(self) -> list[Event]:
        """Drop an object that never closed; return what the parsers still owe."""
        if self._buffer:
            self.unfinished += 1
            self._buffer.clear()
        return [*self.claude.finish(), *self.codex.finish()]

    def _feed_text(self, line: str) -> list[Event]:
        prefix = _LOG_PREFIX.match(line)
        body = line[prefix.end() :] if prefix else line
        if self._buffer and prefix:
            return self._continue_logged(body)
        if not self._buffer:
            return self._start(body)
        if body.startswith("{"):  # an unindented "{" opens a new object: drop the broken one
            self.unfinished += 1
            self._buffer.clear()
            return self._start(body)
        self._buffer.append(body)
        if body.startswith("}") or len(self._buffer) > _MAX_OBJECT_LINES:
            return self._close_object()
        return []

    def _start(self, body: str) -> list[Event]:
        stripped = body.strip()
        if not stripped.startswith("{"):
            self.text_lines += 1
            return []
        record = decode_record(stripped)
        if record is not None:
            return self.feed_record(record)
        self._buffer.append(body)
        return []

    def _continue_logged(self, body: str) -> list[Event]:
        """A prefixed line while an object is open: the logger split one long line into
        prefixed chunks, or the object was cut short and a new entry begins."""
        joined = "".join(self._buffer).rstrip("\n") + body
        record = decode_record(joined)
        if record is not None:
            self._buffer.clear()
            return self.feed_record(record)
        if body.lstrip().startswith("{") or len(self._buffer) > _MAX_OBJECT_LINES:
            self.unfinished += 1
            self._buffer.clear()
            return self._start(body)
        self._buffer[-1] = self._buffer[-1].rstrip("\n")
        self._buffer.append(body)
        return []

    def _close_object(self) -> list[Event]:
        record = decode_record("".join(self._buffer))
        if record is None:
            if len(self._buffer) > _MAX_OBJECT_LINES:
                self.unfinished += 1
                self._buffer.clear()
            return []
        self._buffer.clear()
        return self.feed_record(record)


def parse_lines(lines: Iterable[str]) -> Iterator[Event]:
    """The events of a transcript given as lines, whatever its format."""
    reader = TranscriptReader()
    for line in lines:
        yield from reader.feed(line)
    yield from reader.finish()


def parse_file(path: str | Path) -> Iterator[Event]:
    """The events of the transcript at ``path``, whatever its format (undecodable bytes
    are replaced, never fatal). The file is read lazily and closed at the end."""
    with Path(path).open(encoding="utf-8", errors="replace", newline="\n") as handle:
        yield from parse_lines(handle)


def sniff_format(path: str | Path) -> TranscriptFormat:
    """The format of the transcript at ``path``, judged from its first lines."""
    with Path(path).open(encoding="utf-8", errors="replace", newline="\n") as handle:
        lines = [line for line in islice(handle, _SNIFF_LINES * 4) if line.strip()]
    return _classify(lines[:_SNIFF_LINES])


def _classify(lines: list[str]) -> TranscriptFormat:
    if not lines:
        return TranscriptFormat.EMPTY
    if any(_LOG_PREFIX.match(line) for line in lines):
        return TranscriptFormat.LOG
    records = [record for record in map(decode_record, lines) if record is not None]
    if not records:
        return TranscriptFormat.TEXT
    types = {kind for record in records if isinstance(kind := record.get("type"), str)}
    if types & CODEX_EVENT_TYPES:
        return TranscriptFormat.CODEX
    if "session_meta" in types or {"response_item", "turn_context"} <= types:
        return TranscriptFormat.CODEX_ROLLOUT
    if types & {"file-history-snapshot", "progress", "queue-operation"} or any(
        "message" in record and "sessionId" in record for record in records
    ):
        return TranscriptFormat.CLAUDE_SESSION
    return TranscriptFormat.CLAUDE_STREAM
