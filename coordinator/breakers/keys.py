"""Comparable keys for tool calls.

The loop breaker compares the tool plus its full arguments; the turn-key
detector compares the same with pagination arguments stripped. Both are
canonical JSON with sorted keys, so argument order never makes two calls differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any

__all__ = [
    "PAGINATION_ARGS",
    "call_key",
    "canonical_json",
    "load_fast_encoder",
    "split_pagination",
    "turn_key",
]

PAGINATION_ARGS = frozenset(
    {"offset", "limit", "start_line", "end_line", "number", "line", "lines", "head_limit"}
)

_encode_any = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
).encode


_encode_flat: Callable[[Any], bytes] | None = None
_FLAT_VALUES = frozenset({str, int, bool, type(None)})  # what msgspec writes as json does


def load_fast_encoder() -> None:
    """From now on, write the usual tool input's keys with msgspec in this process: the
    same text at a sixth of the cost. A live watch calls it; a hook's process does not
    (importing msgspec would cost it more than its few keys save)."""
    global _encode_flat
    if _encode_flat is None:
        import msgspec

        _encode_flat = msgspec.json.Encoder(order="sorted").encode


def _encode(value: Any) -> str:
    """``_encode_any(value)``, written directly for the usual tool input: a flat object
    of strings, integers, booleans (and, with msgspec loaded, nulls). Floats are spelled
    otherwise by msgspec, and lone surrogates refused: those go the standard way."""
    flat = _encode_flat
    if (
        flat is not None
        and type(value) is dict
        and _FLAT_VALUES.issuperset(map(type, value.values()))
    ):
        try:
            return flat(value).decode()
        except (UnicodeEncodeError, TypeError):  # a lone surrogate, a key that is no string
            pass
    if type(value) is not dict:
        return _encode_any(dict(value) if isinstance(value, Mapping) else value)
    parts: list[str] = []
    try:
        names = sorted(value)
    except TypeError:  # keys of several types: the encoder says what it makes of them
        return _encode_any(value)
    for name in names:
        item = value[name]
        kind = type(item)
        if type(name) is not str:
            return _encode_any(value)
        if kind is str:
            parts.append(encode_basestring(name) + ":" + encode_basestring(item))
        elif kind is bool:
            parts.append(encode_basestring(name) + (":true" if item else ":false"))
        elif kind is int:
            parts.append(encode_basestring(name) + ":" + int.__repr__(item))
        else:
            return _encode_any(value)
    return "{" + ",".join(parts) + "}"


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant space; unknown types by ``str``."""
    return _encode(value)


def call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """``<tool>:<canonical arguments>``: the identity of a call for the loop breaker."""
    return name + ":" + _encode(arguments)


def split_pagination(arguments: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arguments without pagination arguments, and the pagination arguments alone."""
    rest: dict[str, Any] = {}
    pages: dict[str, Any] = {}
    for name, value in arguments.items():
        (pages if name in PAGINATION_ARGS else rest)[name] = value
    return rest, pages


def turn_key(name: str, arguments: Mapping[str, Any]) -> str:
    """``<tool>:<canonical arguments>`` with pagination arguments stripped."""
    if PAGINATION_ARGS.isdisjoint(arguments):
        return call_key(name, arguments)
    rest, _ = split_pagination(arguments)
    return name + ":" + _encode(rest)
