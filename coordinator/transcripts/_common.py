"""Small helpers shared by the transcript parsers: JSON decoding, text and time."""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

import msgspec

from seawall.codec import JsonObject, JsonView
from seawall.events import Event

__all__ = [
    "MAX_TEXT",
    "as_float",
    "as_int",
    "cap_text",
    "decode_record",
    "decode_turn_record",
    "iso_seconds",
]

MAX_TEXT = 16_000
"""Tool output kept per result; longer text keeps its head and its tail."""


_decode = msgspec.json.Decoder().decode


def decode_record(line: str) -> JsonObject | None:
    """The JSON object on ``line``, or None when it is not one (blank, text, broken).

    msgspec reads valid JSON about three times as fast as ``json``; what it refuses
    (``NaN``, lone surrogate escapes, numbers out of a float's range, text) is read by
    ``json``, so both accept exactly the same lines and give the same values."""
    try:
        record = _decode(line)
    except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the stack
            return None
    return record if isinstance(record, dict) else None


class _TurnLine(msgspec.Struct):
    """The fields of a transcript line the assistant and user records are read by; the
    rest (``toolUseResult``, ``data``, ids) is checked as JSON and skipped unbuilt."""

    type: Any = None
    message: Any = None
    parent_tool_use_id: Any = None
    timestamp: Any = None


_decode_turn = msgspec.json.Decoder(_TurnLine).decode


def decode_turn_record(line: str, whole: frozenset[str]) -> JsonObject | None:
    """The JSON object on ``line`` as ``decode_record`` reads it, with only the fields
    the parsers read of a record whose ``type`` is not in ``whole`` (an absent one is
    None, as ``get`` reads it); a record of a type in ``whole``, or a line this fast
    path refuses, is read whole by ``decode_record``."""
    try:
        lean = _decode_turn(line)
    except (ValueError, RecursionError):
        return decode_record(line)
    kind = lean.type
    if isinstance(kind, str) and kind in whole:
        return decode_record(line)
    return {
        "type": kind,
        "message": lean.message,
        "parent_tool_use_id": lean.parent_tool_use_id,
        "timestamp": lean.timestamp,
    }


def cap_text(text: str) -> str:
    """``text`` cut to about ``MAX_TEXT`` characters, keeping both ends (errors end it)."""
    if len(text) <= MAX_TEXT:
        return text
    half = MAX_TEXT // 2
    return f"{text[:half]}\n…\n{text[-half:]}"


def iso_seconds(value: Any) -> float:
    """An ISO-8601 timestamp as POSIX seconds; 0.0 when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return 0.0
    try:
        return datetime.fromisoformat(value).timestamp()
    except (ValueError, OverflowError, OSError):  # out of the platform's time range
        return 0.0


def as_float(value: Any) -> float | None:
    """A finite number from a JSON value (NaN, infinities and huge integers give None)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def as_int(value: Any) -> int:
    """An integer count from a JSON value; anything else counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class RecordParser:
    """The line handling both transcript parsers share: blank lines give nothing, a line
    that is not a JSON object is counted in ``malformed``, a decoded record goes to
    ``feed_record`` (each parser's own). ``turns`` counts the turns seen."""

    malformed: int
    ignored: int
    _turn: int

    @property
    def turns(self) -> int:
        """Turns (model responses) seen so far."""
        return self._turn

    def feed(self, line: str) -> list[Event]:
        """The events of one line (empty for blank, unknown or broken lines)."""
        if not line or line.isspace():
            return []
        record = decode_record(line)
        if record is None:
            self.malformed += 1
            return []
        return self.feed_record(record)

    def feed_record(self, record: JsonView) -> list[Event]:
        raise NotImplementedError
