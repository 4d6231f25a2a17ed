"""Call keys are canonical JSON: sorted keys, no blank space, the encoder's own text,
whichever encoder writes them (the standard one, or msgspec's in a live watch)."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.breakers.keys import FREE_TEXT_ARGS, KeyEncoder, call_key, canonical_json, turn_key


def _effect(arguments: dict[Any, Any]) -> dict[Any, Any]:
    """The arguments that make a call's identity: free text left out."""
    return {n: v for n, v in arguments.items() if n not in FREE_TEXT_ARGS}


def _reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@pytest.fixture(params=[False, True], ids=["standard", "msgspec"], scope="module")
def keys(request: pytest.FixtureRequest) -> KeyEncoder:
    """The hook's encoder and the live watch's (msgspec); neither changes once made."""
    return KeyEncoder(fast=request.param)


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
        {"lone": "\ud800 surrogate", "n": None},
        {"f": 1e16, "g": 1e-07, "nan": float("nan")},
        {"del": "\x7f \u2028 \u2029 \ufeff", "B": 1, "a": 2, "é": 3, "\U0001f600": 4},
    ],
)
def test_canonical_json_is_what_the_json_encoder_writes(
    keys: KeyEncoder, arguments: dict[Any, Any]
) -> None:
    assert keys.canonical_json(arguments) == _reference(arguments)
    assert keys.call_key("Tool", arguments) == "Tool:" + _reference(_effect(arguments))
    assert canonical_json(arguments) == _reference(arguments)  # the standard encoder


def test_argument_order_and_mapping_type_make_no_difference(keys: KeyEncoder) -> None:
    first = keys.call_key("Read", {"file_path": "a.py", "limit": 10})
    assert first == keys.call_key("Read", MappingProxyType({"limit": 10, "file_path": "a.py"}))
    assert first == call_key("Read", {"limit": 10, "file_path": "a.py"})
    paged = {"limit": 10, "file_path": "a.py"}
    assert keys.turn_key("Read", paged) == turn_key("Read", paged) == 'Read:{"file_path":"a.py"}'
    assert keys.turn_key("Grep", {"pattern": "x"}) == keys.call_key("Grep", {"pattern": "x"})


def test_keys_of_mixed_types_are_refused_as_the_encoder_refuses_them(keys: KeyEncoder) -> None:
    with pytest.raises(TypeError):
        _reference({1: "a", "b": 2})
    with pytest.raises(TypeError):
        keys.canonical_json({1: "a", "b": 2})


_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)
_FLAT = st.one_of(
    _TEXT, st.integers(min_value=-(2**70), max_value=2**70), st.booleans(), st.none(),
    st.floats(allow_nan=False),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(arguments=st.dictionaries(_TEXT, _FLAT, max_size=6))
def test_every_flat_input_is_written_as_the_json_encoder_writes_it(
    keys: KeyEncoder, arguments: dict[str, Any]
) -> None:
    assert keys.call_key("T", arguments) == "T:" + _reference(_effect(arguments))


def test_free_text_is_no_part_of_a_calls_identity(keys: KeyEncoder) -> None:
    """An agent rewords a Bash call's description on every retry of one command."""
    first = {"command": "ls *.md", "description": "List the markdown files"}
    again = {"command": "ls *.md", "description": "Check which markdown files exist"}
    assert keys.call_key("Bash", first) == keys.call_key("Bash", again) == call_key("Bash", again)
    assert keys.turn_key("Bash", first) == 'Bash:{"command":"ls *.md"}'
    assert keys.call_key("Bash", first) != keys.call_key("Bash", {"command": "ls *.txt"})
    paged = {"file_path": "a.py", "offset": 10, "rationale": "look again"}
    assert keys.turn_key("Read", paged) == 'Read:{"file_path":"a.py"}'
