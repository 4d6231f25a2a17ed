"""The one conversion of records to and from JSON: msgspec over the dataclasses themselves.

A record is a plain (often frozen, slotted) dataclass; its field types are its schema.
A row of a line-per-record file that leaves the fields it does not have out of its line
(``attempted.jsonl``, ``ticks.jsonl``) is a ``msgspec.Struct`` with ``omit_defaults``.
``encode`` writes compact JSON bytes, ``decode`` reads them back checking every field
against its annotation, ``encode_text`` writes the indented text a command prints, and
``to_data`` / ``from_data`` do the same between a record and JSON-shaped Python values
(dicts, lists, strings, numbers) for callers that embed a record in a larger document.
Enums are written as their values, tuples as lists; missing fields take their defaults
and unknown keys are ignored, so a record may gain a field with a default without a
schema change.

A file name that is not UTF-8 is held as a string with surrogate escapes (as ``os``
gives it); msgspec refuses those, so a value holding one is written, and read, by the
standard ``json`` module, which keeps it as a ``\\udcXX`` escape.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import msgspec

__all__ = [
    "JsonObject",
    "JsonView",
    "decode",
    "decode_any",
    "document_schema",
    "encode",
    "encode_text",
    "from_data",
    "to_data",
]

T = TypeVar("T")

# The boundaries. Inside seawall every value is a typed record; a mapping of arbitrary
# JSON values exists only where data crosses in or out before it is checked, and it is
# spelled with one of these two names, so `grep "JsonObject\|JsonView"` lists
# every boundary:
#   - third-party payloads: an agent CLI's stream line or transcript, a tool call's
#     arguments, the JSON Claude Code sends a hook and the settings files it reads, a
#     tracker's or Ray's own keyword arguments, a webhook's body;
#   - what users write: a plan's TOML tables, runner and tracker options, the runner's
#     config file, before their checks;
#   - seawall's own files of an older schema on their way to the current one, a
#     journal's patch, a raw ledger read by a command that must cope with a broken one.
JsonObject = dict[str, Any]
"""A JSON object that is not (yet) a record (see the boundaries above)."""

JsonView = Mapping[str, Any]
"""A read-only view of a JSON object at one of the boundaries above."""


@functools.cache
def _encoder() -> msgspec.json.Encoder:
    # imported on first use: a hook process that never converts a record does not pay
    # for msgspec's own imports (typing_extensions, uuid, decimal, datetime)
    import msgspec

    return msgspec.json.Encoder()


def encode(value: Any) -> bytes:
    """Compact JSON bytes of ``value`` (records, enums, lists, dicts, scalars)."""
    try:
        return _encoder().encode(value)
    except UnicodeEncodeError:
        return json.dumps(to_data(value), separators=(",", ":")).encode("ascii")


def encode_text(value: Any, *, indent: int | None = 2, ascii_only: bool = True) -> str:
    """``value`` as JSON text for a command to print: indented (``None``: one line), and
    every character past ASCII escaped unless ``ascii_only`` is false, so the text
    survives any terminal's encoding."""
    return json.dumps(to_data(value), indent=indent, ensure_ascii=ascii_only)


def decode(data: bytes | str, kind: type[T]) -> T:
    """The ``kind`` value JSON ``data`` holds; ``DecodeError`` names the bad field
    (``Expected `int`, got `str` - at `$.waves[0].number```)."""
    import msgspec

    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.DecodeError as exc:
        if "surrogate" not in str(exc):
            raise
        return from_data(json.loads(data), kind)


def decode_any(data: bytes | str) -> Any:
    """The JSON-shaped value JSON ``data`` holds, unchecked."""
    import msgspec

    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        if "surrogate" not in str(exc):
            raise
        try:
            return json.loads(data)
        except ValueError as again:
            raise msgspec.DecodeError(str(again)) from again


def to_data(value: Any) -> Any:
    """``value`` as JSON-shaped Python values (what ``json.dumps`` accepts)."""
    import msgspec

    return msgspec.to_builtins(value)


def from_data(data: Any, kind: type[T]) -> T:
    """The ``kind`` value built from JSON-shaped ``data``, every field checked."""
    import msgspec

    return msgspec.convert(data, type=kind, strict=False)


def document_schema(kinds: Any, name: str, description: str) -> JsonObject:
    """The JSON Schema of the documents a command prints, named ``name``
    (``seawall.plan/1``): the records' fields are its schema (msgspec derives it), and
    their ``"schema"`` field must say ``name``. ``kinds`` is a record type, or a tuple
    of them for a stream of lines of several kinds (any one of them). The schemas
    seawall ships are these, written out (a test keeps each file equal to its records')."""
    import msgspec

    several = isinstance(kinds, tuple)
    types = kinds if several else (kinds,)
    derived, components = msgspec.json.schema_components(types)
    defs: JsonObject = dict(components)
    roots: list[JsonObject] = []
    for one in derived:
        root: JsonObject = dict(defs.pop(one["$ref"].rsplit("/", 1)[-1]))
        root.pop("title", None)
        properties: JsonObject = dict(root.get("properties", {}))
        properties["schema"] = {"const": name}
        required = ["schema", *(key for key in root.get("required", []) if key != "schema")]
        roots.append({**root, "properties": properties, "required": required})
    out: JsonObject = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": name,
        "description": description,
    }
    if several:
        out["anyOf"] = roots
    else:
        roots[0].pop("description", None)
        out.update(roots[0])
    if defs:
        out["$defs"] = defs
    return out
