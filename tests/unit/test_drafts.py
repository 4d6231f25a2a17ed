"""Records built from drafts are the records their constructors build, and as frozen."""

from __future__ import annotations

import dataclasses

import pytest

from seawall.drafts import draft_class, positional
from seawall.events import Usage
from seawall.model import Enforcement, Isolation, Task, Wave, renumber_wave


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
