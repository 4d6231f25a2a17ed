"""Records built from drafts are the records their constructors build, and as frozen."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from seawall.drafts import draft_class, positional
from seawall.events import (
    Message,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
    new_message,
    new_tool_call,
    new_tool_result,
    new_turn,
    new_usage,
)
from seawall.model import Enforcement, Isolation, Task, Wave, renumber_wave

BUILT_EVENTS: list[tuple[object, object]] = [
    (new_turn(3, 1.5), Turn(number=3, at=1.5)),
    (
        new_tool_call("c1", "Bash", {"command": "ls"}, 2, 0.5),
        ToolCall(call_id="c1", name="Bash", arguments={"command": "ls"}, turn=2, at=0.5),
    ),
    (
        new_tool_result("c1", True, "boom", "Bash", 2, False, 4.0),
        ToolResult(call_id="c1", is_error=True, text="boom", name="Bash", exit_code=2, at=4.0),
    ),
    (new_message("hello", 1, 0.0), Message(text="hello", turn=1)),
    (
        new_usage("m1", "opus", 10, 5, 3, 2, 0.25, 9.0),
        Usage(message_id="m1", model="opus", input_tokens=10, output_tokens=5,
              cache_read_tokens=3, cache_write_tokens=2, cost_usd=0.25, at=9.0),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("built", "constructed"), BUILT_EVENTS)
def test_a_built_event_is_the_constructed_one(built: Any, constructed: Any) -> None:
    assert type(built) is type(constructed)
    assert built == constructed and constructed == built
    if not isinstance(built, ToolCall):  # (a call's arguments are a dict)
        assert hash(built) == hash(constructed)
    assert repr(built) == repr(constructed)
    assert copy.copy(built) == constructed
    assert pickle.loads(pickle.dumps(built)) == constructed
    for spec in dataclasses.fields(constructed):
        assert getattr(built, spec.name) == getattr(constructed, spec.name), spec.name
    name = dataclasses.fields(constructed)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, name, getattr(built, name))
    assert dataclasses.replace(built) == constructed


def test_a_builder_takes_every_field_by_position_in_field_order() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Pair:
        first: int
        second: str = "b"

    build = positional(Pair, "new_pair")
    assert build(1, "x") == Pair(1, "x")
    assert build.__name__ == "new_pair" and build.__module__ == Pair.__module__
    assert "first, second" in (build.__doc__ or "")
    with pytest.raises(TypeError):
        build(1)  # no defaults: every field is given


def test_a_draft_has_the_records_slots_and_nothing_else() -> None:
    draft = draft_class(Usage)
    assert draft.__slots__ == Usage.__slots__  # type: ignore[attr-defined]
    assert not hasattr(draft(), "__dict__")


def test_classes_that_cannot_take_a_drafts_place_are_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Loose:
        value: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Base:
        value: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived(Base):
        other: int

    for cls in (Loose, Derived):
        with pytest.raises(TypeError, match=cls.__name__):
            draft_class(cls)


def test_a_field_named_like_the_builders_own_locals_is_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Odd:
        _record: int

    with pytest.raises(TypeError, match="_record"):
        positional(Odd, "new_odd")
    with pytest.raises(TypeError, match="cannot write a builder"):
        positional(Usage, "not a name")


def test_a_renumbered_wave_is_the_constructed_one() -> None:
    like = Wave(
        number=1, tasks=(Task(id="a", prompt="x"),), isolation=Isolation.WORKTREE,
        enforcement=Enforcement.STRICT, max_turns=7, isolation_reason="why",
        enforcement_reason="how",
    )  # fmt: skip
    tasks = (Task(id="b", prompt="y"),)
    built = renumber_wave(like, 4, tasks)
    assert type(built) is Wave
    assert built == dataclasses.replace(like, number=4, tasks=tasks)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.number = 5  # type: ignore[misc]
