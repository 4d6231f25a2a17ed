"""The one conversion of records to and from JSON: msgspec over the dataclasses themselves.

A record is a plain (often frozen, slotted) dataclass; its field types are its schema.
``encode`` writes compact JSON bytes, ``decode`` reads them back checking every field
against its annotation, and ``to_data`` / ``from_data`` do the same between a record and
JSON-shaped Python values (dicts, lists, strings, numbers) for callers that embed a
record in a larger document. Enums are written as their values, tuples as lists;
missing fields take their defaults and unknown keys are ignored, so a record may gain a
field with a default without a schema change.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

__all__ = ["DecodeError", "decode", "encode", "from_data", "to_data"]

T = TypeVar("T")

DecodeError = msgspec.DecodeError  # also the base of msgspec.ValidationError

_encoder = msgspec.json.Encoder()


def encode(value: Any) -> bytes:
    """Compact JSON bytes of ``value`` (records, enums, lists, dicts, scalars)."""
    return _encoder.encode(value)


def decode(data: bytes | str, kind: type[T]) -> T:
    """The ``kind`` value JSON ``data`` holds; ``DecodeError`` names the bad field
    (``Expected `int`, got `str` - at `$.waves[0].number```)."""
    return msgspec.json.decode(data, type=kind)


def to_data(value: Any) -> Any:
    """``value`` as JSON-shaped Python values (what ``json.dumps`` accepts)."""
    return msgspec.to_builtins(value)


def from_data(data: Any, kind: type[T]) -> T:
    """The ``kind`` value built from JSON-shaped ``data``, every field checked."""
    return msgspec.convert(data, type=kind, strict=False)
