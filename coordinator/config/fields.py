"""Typed conversion of configuration tables into the frozen config dataclasses.

One validator serves every configuration seawall reads: plan files (``[session]``,
``[runners.NAME]``, ``[[task]]``) and the unattended runner's ``[runner]`` table and
``SEAWALL_RUNNER_*`` variables. Every error is a ``FieldError`` naming the field
(``session.budgets.cost_usd``) and what was expected; an unknown key is an error with
the nearest known key suggested, so a typo never passes silently. The caller adds the
file and the line (``seawall.config.lines``).

Values come from TOML, already typed, or from text (environment variables):
``text=True`` parses a string into the field's type (``"3"`` for an integer, a command
line for a list of strings). A field's ``Rule`` (``x: int = ruled(3, minimum=1)``)
narrows what it accepts; any number must otherwise be finite and not negative.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import shlex
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from seawall.codec import JsonObject

if TYPE_CHECKING:
    from seawall.model import OptionValue

__all__ = [
    "FieldError",
    "Rule",
    "build",
    "check_keys",
    "convert",
    "field_values",
    "ruled",
    "suggest",
]

T = TypeVar("T")


class FieldError(Exception):
    """A field of a table is invalid. ``field`` is its dotted name."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """What a field accepts beyond its type.

    ``minimum`` (inclusive) and ``above`` (exclusive) bound a number. ``nonempty`` strips
    a string and refuses an empty string or list. ``words``: a string given for a list
    is a command line, split into its words as a POSIX shell would.
    """

    minimum: float | None = None
    above: float | None = None
    nonempty: bool = False
    words: bool = False


_NO_RULE = Rule()


def ruled(
    default: T,
    *,
    minimum: float | None = None,
    above: float | None = None,
    nonempty: bool = False,
    words: bool = False,
) -> T:
    """A dataclass field with ``default`` and a ``Rule``: ``limit: int = ruled(3, minimum=0)``."""
    rule = Rule(minimum=minimum, above=above, nonempty=nonempty, words=words)
    return dataclasses.field(default=default, metadata={"rule": rule})


def suggest(name: str, known: Iterable[str], *, spell: Callable[[str], str] = str) -> str:
    """``; did you mean 'x'?`` for the nearest of ``known`` to ``name``, else ``""``.

    ``spell`` writes a known name as the user would type it (an environment variable
    for a setting's key, say).
    """
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {spell(close[0])!r}?" if close else ""


def check_keys(
    table: Mapping[str, object],
    known: Iterable[str],
    where: str = "",
    *,
    what: str = "key",
    spell: Callable[[str], str] = str,
) -> None:
    """Raise FieldError for the first key of ``table`` that is not ``known``."""
    known = tuple(known)
    for key in table:
        if key not in known:
            names = ", ".join(spell(k) for k in known)
            hint = suggest(key, known, spell=spell) or f"; known {what}s: {names}"
            raise FieldError(f"{where}{key}", f"unknown {what}{hint}")


def field_values(
    cls: type[Any],
    table: Any,
    where: str = "",
    *,
    skip: tuple[str, ...] = (),
    text: bool = False,
) -> JsonObject:  # keyword arguments of cls, each value checked
    """The fields of dataclass ``cls`` that ``table`` sets, each converted and checked."""
    if not isinstance(table, Mapping):
        raise FieldError(where.rstrip("."), f"must be a table, not {_kind(table)}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = get_type_hints(cls)
    check_keys({k: v for k, v in table.items() if k not in skip}, fields, where)
    return {
        name: convert(
            hints[name],
            value,
            f"{where}{name}",
            rule=fields[name].metadata.get("rule", _NO_RULE),
            text=text,
        )
        for name, value in table.items()
        if name not in skip
    }


def build(
    cls: type[T], table: Any, where: str = "", *, skip: tuple[str, ...] = (), text: bool = False
) -> T:
    """Build dataclass ``cls`` from ``table``, converting and checking every field.

    Fields named in ``skip`` are left to the caller. Missing fields take their defaults.
    """
    values = field_values(cls, table, where, skip=skip, text=text)
    for spec in dataclasses.fields(cls):  # type: ignore[arg-type]
        required = (
            spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING
        )
        if spec.init and required and spec.name not in values and spec.name not in skip:
            raise FieldError(f"{where}{spec.name}", "is missing")
    return cls(**values)


def convert(hint: Any, value: Any, field: str, *, rule: Rule = _NO_RULE, text: bool = False) -> Any:
    """Convert one value to the annotated type, or raise FieldError."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return _convert_union(get_args(hint), value, field, rule, text)
    if origin is Literal:
        if value in get_args(hint):
            return value
        allowed = ", ".join(repr(a) for a in get_args(hint))
        raise FieldError(field, f"must be one of {allowed}, not {value!r}")
    if origin is tuple:
        return _convert_tuple(get_args(hint), value, field, rule, text)
    if origin in (Mapping, dict, typing.Mapping) or hint is Mapping:
        args = get_args(hint)
        item = args[1] if len(args) == 2 else str
        if dataclasses.is_dataclass(item) and isinstance(item, type):
            return _convert_table_map(item, value, field)
        if item is not str:
            return _convert_typed_map(value, field)
        return _convert_str_map(value, field)
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return _convert_enum(hint, value, field)
    if hint is bool:
        if text and value in ("true", "false"):
            return value == "true"
        if isinstance(value, bool):
            return value
        raise FieldError(field, f"must be true or false, not {_kind(value)}")
    if hint is int or hint is float:
        return _number(value, field, rule, text=text, integer=hint is int)
    if hint is str:
        if not isinstance(value, str):
            raise FieldError(field, f"must be a string, not {_kind(value)}")
        if rule.nonempty:
            value = value.strip()
            if not value:
                raise FieldError(field, "must be a non-empty string")
        return value
    if hint is Path:
        if not isinstance(value, str) or not value.strip():
            raise FieldError(field, "must be a non-empty path")
        return Path(value)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return build(hint, value, f"{field}.", text=text)
    raise FieldError(field, f"unsupported type {hint!r}")  # a programming error in the model


def _number(value: Any, field: str, rule: Rule, *, text: bool, integer: bool) -> int | float:
    kind = "a whole number" if integer else "a number"
    number: int | float
    if text and isinstance(value, str):
        try:
            number = int(value.strip()) if integer else float(value.strip())
        except ValueError:
            raise FieldError(field, f"must be {kind}, got {value!r}") from None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldError(field, f"must be {kind}, not {_kind(value)}")
    elif integer and isinstance(value, float):
        raise FieldError(field, f"must be {kind}, got {value!r}")
    else:
        number = value
    if not math.isfinite(number):
        raise FieldError(field, f"must be a finite number, got {value!r}")
    if rule.minimum is not None and number < rule.minimum:
        raise FieldError(field, f"must be at least {rule.minimum}, got {value!r}")
    if rule.above is not None and number <= rule.above:
        raise FieldError(field, f"must be greater than {rule.above}, got {value!r}")
    if number < 0:
        raise FieldError(field, f"must not be negative, got {value!r}")
    return int(number) if integer else float(number)


def _convert_union(options: tuple[Any, ...], value: Any, field: str, rule: Rule, text: bool) -> Any:
    if value is None and type(None) in options:
        return None
    errors = []
    for option in options:
        if option is type(None):
            continue
        try:
            return convert(option, value, field, rule=rule, text=text)
        except FieldError as exc:
            errors.append(exc.message)
    raise FieldError(field, _one_sentence(errors, value))


_WANTED = re.compile(r"^must be (?:one of )?(.*?)(?:, (?:not|got) .*)?$", re.S)


def _one_sentence(errors: list[str], value: Any) -> str:
    """The errors of a union's options as one sentence: ``must be a whole number or
    'auto', not 'ten'`` (what each option wants, then what was given)."""
    wanted = []
    for error in errors:
        found = _WANTED.match(error)
        if found is None:  # an option that says more than what it wants: keep it whole
            return " or ".join(dict.fromkeys(errors))
        wanted.append(found.group(1))
    wanted = list(dict.fromkeys(wanted))
    if len(wanted) > 1:
        wanted = [", ".join(wanted[:-1]) + " or " + wanted[-1]]
    return f"must be {wanted[0]}, not {value!r}"


def _convert_tuple(
    args: tuple[Any, ...], value: Any, field: str, rule: Rule, text: bool
) -> tuple[Any, ...]:
    if isinstance(value, str) and (text or rule.words):
        try:
            value = shlex.split(value)
        except ValueError as exc:
            raise FieldError(field, f"not a valid command line: {exc}") from None
    if isinstance(value, str) or not isinstance(value, list):
        wanted = "a command line or a list of strings" if rule.words else "a list"
        raise FieldError(field, f"must be {wanted}, not {_kind(value)}")
    if rule.nonempty and not value:
        raise FieldError(field, "must not be empty")
    item = args[0] if args else Any
    return tuple(convert(item, v, f"{field}[{i}]", text=text) for i, v in enumerate(value))


def _convert_str_map(value: Any, field: str) -> Mapping[str, str]:
    if not isinstance(value, Mapping):
        raise FieldError(field, f"must be a table, not {_kind(value)}")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise FieldError(f"{field}.{key}", f"must be a string, not {_kind(item)}")
        out[str(key)] = str(item)
    return types.MappingProxyType(out)


def _convert_typed_map(value: Any, field: str) -> Mapping[str, OptionValue]:
    """An ``options`` table: each value one of the option types (``OptionValue``)."""
    if not isinstance(value, Mapping):
        raise FieldError(field, f"must be a table, not {_kind(value)}")
    out: dict[str, OptionValue] = {}
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
    return types.MappingProxyType(out)


def _convert_table_map(item: type[Any], value: Any, field: str) -> Mapping[str, object]:
    """A table of tables, each built as ``item`` (``[session.prices.<model>]``)."""
    if not isinstance(value, Mapping):
        raise FieldError(field, f"must be a table, not {_kind(value)}")
    out = {str(key): build(item, entry, f"{field}.{key}.") for key, entry in value.items()}
    return types.MappingProxyType(out)


def _convert_enum(enum: type[StrEnum], value: Any, field: str) -> StrEnum:
    allowed = [member.value for member in enum]
    if isinstance(value, str) and value in allowed:
        return enum(value)
    hint = suggest(str(value), allowed)
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
