"""Comparable keys for tool calls.

The loop breaker compares the tool plus its full arguments; the turn-key
detector compares the same with pagination arguments stripped. Both are
canonical JSON with sorted keys, so argument order never makes two calls differ.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["PAGINATION_ARGS", "call_key", "canonical_json", "split_pagination", "turn_key"]

PAGINATION_ARGS = frozenset(
    {"offset", "limit", "start_line", "end_line", "number", "line", "lines", "head_limit"}
)

_encode = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
).encode


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant space; unknown types by ``str``."""
    return _encode(value)


def call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """``<tool>:<canonical arguments>``: the identity of a call for the loop breaker."""
    return name + ":" + _encode(dict(arguments) if type(arguments) is not dict else arguments)


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
