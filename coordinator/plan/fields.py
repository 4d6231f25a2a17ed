"""Typed conversion of TOML tables into the frozen config dataclasses.

Every error names the field (``session.budgets.cost_usd``) and what was expected; an
unknown key is an error with the nearest known key suggested, so a typo never passes
silently.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

__all__ = ["FieldError", "build", "check_keys"]

T = TypeVar("T")


class FieldError(Exception):
    """A field of a table is invalid. ``field`` is its dotted name."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


def check_keys(table: Mapping[str, Any], known: typing.Iterable[str], where: str) -> None:
    """Raise FieldError for the first key of ``table`` that is not ``known``."""
    known = tuple(known)
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(known)}"
            raise FieldError(f"{where}{key}", f"unknown key{hint}")


def build(cls: type[T], table: Any, where: str, *, skip: tuple[str, ...] = ()) -> T:
    """Build dataclass ``cls`` from ``table``, converting and checking every field.

    Fields named in ``skip`` are left to the caller. Missing fields take their defaults.
    """
    if not isinstance(table, Mapping):
        raise FieldError(where.rstrip("."), f"must be a table, not {_kind(table)}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    hints = get_type_hints(cls)
    check_keys({k: v for k, v in table.items() if k not in skip}, fields, where)
    values: dict[str, Any] = {}
    for name, value in table.items():
        if name in skip:
            continue
        values[name] = convert(hints[name], value, f"{where}{name}")
    for name, spec in fields.items():
        required = (
            spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING
        )
        if required and name not in values and name not in skip:
            raise FieldError(f"{where}{name}", "is missing")
    return cls(**values)


def convert(hint: Any, value: Any, field: str) -> Any:
    """Convert one TOML value to the annotated type, or raise FieldError."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return _convert_union(get_args(hint), value, field)
    if origin is Literal:
        if value in get_args(hint):
            return value
        allowed = ", ".join(repr(a) for a in get_args(hint))
        raise FieldError(field, f"must be one of {allowed}, not {value!r}")
    if origin is tuple:
        return _convert_tuple(get_args(hint), value, field)
    if origin in (Mapping, dict, typing.Mapping) or hint is Mapping:
        args = get_args(hint)
        item = args[1] if len(args) == 2 else str
        if dataclasses.is_dataclass(item) and isinstance(item, type):
            return _convert_table_map(item, value, field)
        if item is not str:
            return _convert_typed_map(item, value, field)
        return _convert_str_map(value, field)
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return _convert_enum(hint, value, field)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise FieldError(field, f"must be true or false, not {_kind(value)}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise FieldError(field, f"must not be negative, got {value}")
            return value
        raise FieldError(field, f"must be an integer, not {_kind(value)}")
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if value < 0:
                raise FieldError(field, f"must not be negative, got {value}")
            return float(value)
        raise FieldError(field, f"must be a number, not {_kind(value)}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise FieldError(field, f"must be a string, not {_kind(value)}")
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return build(hint, value, f"{field}.")
    raise FieldError(field, f"unsupported type {hint!r}")  # a programming error in the model


def _convert_union(options: tuple[Any, ...], value: Any, field: str) -> Any:
    if value is None and type(None) in options:
        return None
    errors = []
    for option in options:
        if option is type(None):
            continue
        try:
            return convert(option, value, field)
        except FieldError as exc:
            errors.append(exc.message)
    raise FieldError(field, " or ".join(dict.fromkeys(errors)))


def _convert_tuple(args: tuple[Any, ...], value: Any, field: str) -> tuple[Any, ...]:
    if isinstance(value, str) or not isinstance(value, list):
        raise FieldError(field, f"must be a list, not {_kind(value)}")
    item = args[0] if args else Any
    return tuple(convert(item, v, f"{field}[{i}]") for i, v in enumerate(value))


def _convert_str_map(value: Any, field: str) -> Mapping[str, str]:
    if not isinstance(value, Mapping):
        raise FieldError(field, f"must be a table, not {_kind(value)}")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise FieldError(f"{field}.{key}", f"must be a string, not {_kind(item)}")
        out[str(key)] = str(item)
    return types.MappingProxyType(out)


def _convert_typed_map(item: Any, value: Any, field: str) -> Mapping[str, Any]:
    """An ``options`` table: each value converted to the union of option types."""
    if not isinstance(value, Mapping):
        raise FieldError(field, f"must be a table, not {_kind(value)}")
    out: dict[str, Any] = {}
    for key, raw in value.items():
        where = f"{field}.{key}"
        if isinstance(raw, bool):
            out[str(key)] = raw  # before int: a bool is an int in Python
        elif isinstance(raw, int | float | str):
            out[str(key)] = raw
        elif isinstance(raw, list) and all(isinstance(v, str) for v in raw):
            out[str(key)] = tuple(raw)
        else:
            raise FieldError(
                where, f"must be a string, number, boolean or list of strings, not {_kind(raw)}"
            )
    del item  # the union is fixed: OptionValue
    return types.MappingProxyType(out)


def _convert_table_map(item: type[Any], value: Any, field: str) -> Mapping[str, Any]:
    """A table of tables, each built as ``item`` (``[session.prices.<model>]``)."""
    if not isinstance(value, Mapping):
        raise FieldError(field, f"must be a table, not {_kind(value)}")
    out = {str(key): build(item, entry, f"{field}.{key}.") for key, entry in value.items()}
    return types.MappingProxyType(out)


def _convert_enum(enum: type[StrEnum], value: Any, field: str) -> StrEnum:
    allowed = [member.value for member in enum]
    if isinstance(value, str) and value in allowed:
        return enum(value)
    close = difflib.get_close_matches(str(value), allowed, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise FieldError(field, f"must be one of {', '.join(allowed)}, not {value!r}{hint}")


def _kind(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)
