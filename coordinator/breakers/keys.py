"""Comparable keys for tool calls.

A call's identity is what it does: the tool and the arguments that change its effect,
never the free text an agent writes beside them (Claude Code's Bash ``description``, a
rationale), which it rewords on every retry of the same command. The loop breaker
compares the tool plus those arguments; the turn-key detector compares the same with
pagination arguments stripped. Both are canonical JSON with sorted keys, so argument
order never makes two calls differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any

from seawall.codec import JsonObject, JsonView

__all__ = [
    "FREE_TEXT_ARGS",
    "PAGINATION_ARGS",
    "KeyEncoder",
    "call_key",
    "canonical_json",
    "split_pagination",
    "turn_key",
]

PAGINATION_ARGS = frozenset(
    {"offset", "limit", "start_line", "end_line", "number", "line", "lines", "head_limit"}
)

FREE_TEXT_ARGS = frozenset({"description", "rationale", "justification", "explanation"})
"""Arguments that only say why a call is made (free text): never part of its identity."""

_encode_any = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
).encode
_FLAT_VALUES = frozenset({str, int, bool, type(None)})  # what msgspec writes as json does


class KeyEncoder:
    """Writes canonical JSON (sorted keys, no insignificant space, unknown types by
    ``str``) and the call keys made of it.

    ``fast`` writes the usual tool input, a flat object of strings, integers, booleans
    and nulls, with msgspec: the same text at a sixth of the cost. A live watch, which
    writes many keys, makes a fast one; a hook's process keeps the standard one
    (importing msgspec would cost it more than its few keys save). Floats are spelled
    otherwise by msgspec, and lone surrogates refused: those go the standard way.
    """

    __slots__ = ("_flat",)

    def __init__(self, *, fast: bool = False) -> None:
        self._flat: Callable[[Any], bytes] | None = None
        if fast:
            import msgspec

            self._flat = msgspec.json.Encoder(order="sorted").encode

    def canonical_json(self, value: Any) -> str:
        """``value`` as canonical JSON."""
        flat = self._flat
        if (
            flat is not None
            and type(value) is dict
            and _FLAT_VALUES.issuperset(map(type, value.values()))
        ):
            try:
                return flat(value).decode()
            except (UnicodeEncodeError, TypeError):  # a lone surrogate, a key that is no string
                pass
        return _standard(value)

    def call_key(self, name: str, arguments: JsonView) -> str:
        """``<tool>:<canonical arguments>``: the identity of a call for the loop breaker,
        free-text arguments (``FREE_TEXT_ARGS``) left out."""
        if not FREE_TEXT_ARGS.isdisjoint(arguments):
            arguments = {n: v for n, v in arguments.items() if n not in FREE_TEXT_ARGS}
        return name + ":" + self.canonical_json(arguments)

    def turn_key(self, name: str, arguments: JsonView) -> str:
        """``<tool>:<canonical arguments>`` with pagination and free-text arguments stripped."""
        if PAGINATION_ARGS.isdisjoint(arguments):
            return self.call_key(name, arguments)
        rest, _ = split_pagination(arguments)
        return self.call_key(name, rest)


def _standard(value: Any) -> str:
    """``_encode_any(value)``, written directly for a flat object of strings, integers
    and booleans (nearly every tool input) with ``json``'s own string escaper."""
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


_STANDARD = KeyEncoder()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant space; unknown types by ``str``."""
    return _STANDARD.canonical_json(value)


def call_key(name: str, arguments: JsonView) -> str:
    """``<tool>:<canonical arguments>``: the identity of a call for the loop breaker."""
    return _STANDARD.call_key(name, arguments)


def split_pagination(arguments: JsonView) -> tuple[JsonObject, JsonObject]:
    """The arguments without pagination arguments, and the pagination arguments alone."""
    rest: JsonObject = {}
    pages: JsonObject = {}
    for name, value in arguments.items():
        (pages if name in PAGINATION_ARGS else rest)[name] = value
    return rest, pages


def turn_key(name: str, arguments: JsonView) -> str:
    """``<tool>:<canonical arguments>`` with pagination arguments stripped."""
    return _STANDARD.turn_key(name, arguments)
