"""Plans as TOML text: ``render_plan`` writes the plan file ``parse_plan`` reads back.

A plan built in Python has no source; a session records its rendering instead, so the
session can be reopened like any other. The emitter is strict and covers only the
plan's own value types: strings (TOML basic strings, escaped), integers, finite
floats, booleans, lists of strings and nested tables. Fields equal to their default
are left out; ``None`` means "not set" and is never written.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from seawall.codec import JsonObject
from seawall.errors import PlanError
from seawall.model import Plan
from seawall.plan.loader import _SESSION_ALIASES

__all__ = ["plan_source", "render_plan"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}
_WRITTEN_AS = {name: written for written, name in _SESSION_ALIASES.items()}

Table = JsonObject  # a TOML table on its way out


def plan_source(plan: Plan) -> str:
    """The TOML of ``plan``: the text it was parsed from, else its rendering."""
    return plan.source or render_plan(plan)


def render_plan(plan: Plan) -> str:
    """``plan`` as plan-file TOML; ``parse_plan`` of the result equals ``plan``.

    Raises ``PlanError`` naming the field when a value cannot be written as TOML
    (a string holding a lone surrogate, a non-finite number, a type a plan never has).
    """
    path = plan.path or "<plan>"
    session = _table(plan.session, "session", path)
    session = {_WRITTEN_AS.get(key, key): value for key, value in session.items()}
    runners: Table = {}
    for name, runner in plan.runners.items():
        entry = _table(runner, f"runners.{name}", path, keep=("kind",))
        entry.pop("name", None)
        runners[name] = entry
    tasks = [_table(task, "", path, keep=("id", "prompt"), task=task.id) for task in plan.tasks]
    lines: list[str] = []
    _emit(lines, ("session",), session)
    for name, entry in runners.items():
        _emit(lines, ("runners", _checked(name, f"runners.{name}", path, None)), entry)
    for task in tasks:
        _emit(lines, ("task",), task, array=True)
    return "\n".join(lines) + "\n"


def _table(
    value: Any, where: str, path: str, *, keep: tuple[str, ...] = (), task: str | None = None
) -> Table:
    """The fields of dataclass ``value`` that differ from their defaults (or are ``keep``)."""
    out: Table = {}
    for spec in dataclasses.fields(value):
        item = getattr(value, spec.name)
        if spec.name not in keep and _is_default(spec, item):
            continue
        name = f"{where}.{spec.name}" if where else spec.name
        if item is None:
            raise PlanError(
                "cannot be written: it is None but its default is not",
                path=path,
                task=task,
                field=name,
            )
        out[spec.name] = _value(item, name, path, task)
    return out


def _is_default(spec: dataclasses.Field[Any], item: Any) -> bool:
    if spec.default is not dataclasses.MISSING:
        return bool(item == spec.default)
    if spec.default_factory is not dataclasses.MISSING:
        return bool(item == spec.default_factory())
    return False


def _value(item: Any, name: str, path: str, task: str | None) -> Any:
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return _table(item, name, path, task=task)
    if isinstance(item, Mapping):
        return {
            _checked(str(key), f"{name}.{key}", path, task): _value(v, f"{name}.{key}", path, task)
            for key, v in item.items()
        }
    if isinstance(item, StrEnum):
        return item.value
    if isinstance(item, tuple | list):
        if not all(isinstance(v, str) for v in item):
            raise PlanError(
                "cannot be written: only lists of strings are supported",
                path=path,
                task=task,
                field=name,
            )
        return [_checked(v, f"{name}[{i}]", path, task) for i, v in enumerate(item)]
    if isinstance(item, str):
        return _checked(item, name, path, task)
    if isinstance(item, float) and not math.isfinite(item):
        raise PlanError(
            f"cannot be written: {item!r} is not finite", path=path, task=task, field=name
        )
    if isinstance(item, bool | int | float):
        return item
    raise PlanError(
        f"cannot be written: unsupported value {type(item).__name__}",
        path=path,
        task=task,
        field=name,
    )


def _checked(text: str, name: str, path: str, task: str | None) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PlanError(
            "cannot be written: the string holds a lone surrogate", path=path, task=task, field=name
        ) from None
    return text


def _emit(lines: list[str], header: tuple[str, ...], table: Table, *, array: bool = False) -> None:
    """``table`` under ``[header]`` (or ``[[header]]``): its values, then its sub-tables."""
    dotted = ".".join(_key(part) for part in header)
    if lines:
        lines.append("")
    lines.append(f"[[{dotted}]]" if array else f"[{dotted}]")
    for key, value in table.items():
        if not isinstance(value, dict):
            lines.append(f"{_key(key)} = {_literal(value)}")
    for key, value in table.items():
        if isinstance(value, dict):
            _emit(lines, (*header, key), value)


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_string(v) for v in value) + "]"
    return _string(value)


def _string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
