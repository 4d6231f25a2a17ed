"""The event classes behave as the frozen dataclasses they are documented to be."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from seawall.events import Final, Message, ToolCall, ToolResult, Turn, Usage

EVENT_CLASSES = (Turn, ToolCall, ToolResult, Message, Usage, Final)
SAMPLES = [
    Turn(number=3, at=1.5),
    ToolCall(call_id="c1", name="Bash", arguments={"command": "ls"}, turn=2, at=0.5),
    ToolResult(call_id="c1", is_error=True, text="boom", name="Bash", exit_code=2, at=4.0),
    Message(text="hello", turn=1),
    Usage(message_id="m1", model="opus", input_tokens=10, output_tokens=5,
          cache_read_tokens=3, cache_write_tokens=2, cost_usd=0.25, at=9.0),
    Final(text="done", is_error=True, subtype="error_max_turns", num_turns=4,
          denials=("Write a",)),
]  # fmt: skip


@pytest.mark.parametrize("kind", EVENT_CLASSES)
def test_the_constructor_takes_every_field_by_keyword_with_its_default(kind: type) -> None:
    signature = inspect.signature(kind)
    specs = dataclasses.fields(kind)
    assert [parameter.name for parameter in signature.parameters.values()] == [
        spec.name for spec in specs
    ]
    for parameter, spec in zip(signature.parameters.values(), specs, strict=True):
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
        if spec.default is not dataclasses.MISSING:
            assert parameter.default == spec.default
        elif spec.default_factory is dataclasses.MISSING:
            assert parameter.default is inspect.Parameter.empty


def test_fields_are_set_and_defaults_filled() -> None:
    call = ToolCall(call_id="c1", name="Bash", arguments={"command": "ls"}, turn=2, at=1.5)
    assert (call.call_id, call.name, call.arguments, call.turn, call.at) == (
        "c1",
        "Bash",
        {"command": "ls"},
        2,
        1.5,
    )
    bare = ToolCall(call_id="c2", name="Read")
    assert dict(bare.arguments) == {}
    assert (bare.turn, bare.at) == (0, 0.0)
    assert Final().denials == ()
    assert ToolResult(call_id="c3").exit_code is None


def test_events_stay_frozen_comparable_and_replaceable() -> None:
    result = ToolResult(call_id="c1", text="ok")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.text = "changed"  # type: ignore[misc]
    assert result == ToolResult(call_id="c1", text="ok")
    assert result != ToolResult(call_id="c1", text="other")
    assert hash(Turn(number=3)) == hash(Turn(number=3))
    assert dataclasses.replace(result, is_error=True).is_error
    assert pickle.loads(pickle.dumps(Final(text="done", denials=("Write a",)))) == Final(
        text="done", denials=("Write a",)
    )


def test_a_missing_or_unknown_field_is_refused() -> None:
    with pytest.raises(TypeError, match="call_id"):
        ToolCall(name="Bash")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="bogus"):
        Turn(number=1, bogus=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Message("positional")  # type: ignore[call-arg]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: type(event).__name__)
def test_an_event_is_a_value_copied_pickled_and_replaced_whole(event: object) -> None:
    kind = type(event)
    specs = dataclasses.fields(event)  # type: ignore[arg-type]
    twin = kind(**{spec.name: getattr(event, spec.name) for spec in specs})
    assert event == twin and twin == event
    if not isinstance(event, ToolCall):  # (a call's arguments are a dict)
        assert hash(event) == hash(twin)
    assert repr(event) == repr(twin)
    assert copy.copy(event) == twin
    assert pickle.loads(pickle.dumps(event)) == twin
    assert dataclasses.replace(event) == twin  # type: ignore[type-var]
    assert not hasattr(event, "__dict__")  # slotted: no field can be added either
    for spec in specs:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, spec.name, getattr(event, spec.name))
