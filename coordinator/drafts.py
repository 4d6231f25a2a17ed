"""Frozen, slotted dataclass records built without their frozen ``__init__``.

A frozen dataclass's ``__init__`` sets every field through ``object.__setattr__``, and
a field's own slot descriptor, called directly, still costs a call per field. The hot
paths (transcript events, shell records, planned waves) build records by the hundred
thousand. A *draft* is a plain class with the record's very slots: its attributes are
stored as cheaply as any attribute (the interpreter's specialised slot store), and the
filled draft then takes the record's class, which Python allows between classes of one
layout. The result is the record the constructor builds, field for field, and as
frozen: setting a field afterwards raises ``FrozenInstanceError``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

__all__ = ["draft_class", "positional"]

_R = TypeVar("_R")


def draft_class(cls: type) -> type:
    """A plain class with exactly ``cls``'s slots, whose instances may take ``cls`` as
    their class once filled (``cls`` must be a slotted dataclass whose bases add no
    slots, which ``__class__`` assignment checks)."""
    slots = cls.__dict__.get("__slots__")
    if slots is None or cls.__bases__ != (object,):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass of its own layout")
    return type(f"_{cls.__name__}Draft", (), {"__slots__": tuple(slots)})


def positional(cls: type[_R], name: str) -> Callable[..., _R]:
    """A function ``name`` that builds a ``cls`` from every field by position, in field
    order, with no defaults: about half the cost of calling the class by keyword, and
    less than setting each slot through its descriptor."""
    names = [spec.name for spec in fields(cls)]  # type: ignore[arg-type]
    taken = {"_record", "_draft", "_cls"}.intersection(names)
    if taken or not name.isidentifier():
        raise TypeError(f"cannot write a builder {name!r} of {cls.__name__}: {sorted(taken)}")
    namespace: dict[str, Any] = {"_draft": draft_class(cls), "_cls": cls}
    body = "".join(f"    _record.{field} = {field}\n" for field in names)
    exec(  # the generated text holds only the class's own field names
        f"def {name}({', '.join(names)}):\n    _record = _draft()\n{body}"
        "    _record.__class__ = _cls\n    return _record",
        namespace,
    )
    build: Callable[..., _R] = namespace[name]
    build.__qualname__ = name
    build.__module__ = cls.__module__
    build.__doc__ = f"A ``{cls.__name__}`` from its fields by position: {', '.join(names)}."
    return build
