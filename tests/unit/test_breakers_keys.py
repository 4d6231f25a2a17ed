"""Call keys are canonical JSON: sorted keys, no blank space, the encoder's own text."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest

from coordinator.breakers.keys import call_key, canonical_json, turn_key


def _reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"command": "ls -la", "description": "look"},
        {"b": 'quote " and \\ back', "a": "tab\tnew\nline \x01 é 漢 \U0001f600"},
        {"flag": True, "other": False, "count": -3, "big": 10**30},
        {"nested": {"z": 1, "y": [1, "two", None]}, "x": 1.5},
        {"none": None},
        {2: "b", 1: "a"},
    ],
)
def test_canonical_json_is_what_the_json_encoder_writes(arguments: dict[Any, Any]) -> None:
    assert canonical_json(arguments) == _reference(arguments)
    assert call_key("Tool", arguments) == "Tool:" + _reference(arguments)


def test_argument_order_and_mapping_type_make_no_difference() -> None:
    first = call_key("Read", {"file_path": "a.py", "limit": 10})
    assert first == call_key("Read", MappingProxyType({"limit": 10, "file_path": "a.py"}))
    assert turn_key("Read", {"limit": 10, "file_path": "a.py"}) == call_key(
        "Read", {"file_path": "a.py"}
    )


def test_keys_of_mixed_types_are_refused_as_the_encoder_refuses_them() -> None:
    with pytest.raises(TypeError):
        _reference({1: "a", "b": 2})
    with pytest.raises(TypeError):
        canonical_json({1: "a", "b": 2})
