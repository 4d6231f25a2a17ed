"""Lines of ``events.jsonl`` written before its records were typed, read as today's.

Those lines were plain dictionaries dumped with ``str`` as the fallback: the merge's
resolutions and dropped agents were written as their Python reprs
(``"Resolution(path='docs/api.md', rule='later-new', ...)"``), and a few kinds spread a
record's fields over the line where today's kind nests the record (a repository change,
the changes set aside, an agent's counts). ``upgrade`` gives such a line today's shape;
each step leaves a line of today as it is, so the reader runs it on every line, and a
line it cannot mend is read as an ``UnknownEvent``.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from typing import Any

from seawall.codec import JsonObject
from seawall.model import RunCounts

__all__ = ["from_repr", "upgrade"]

_REPR_LIMIT = 64 * 1024  # longer text is not parsed as a repr


def upgrade(data: JsonObject) -> JsonObject:
    """``data`` (an old line's fields) in the shape today's record of its kind reads."""
    step = _STEPS.get(str(data.get("event")))
    return step(dict(data)) if step is not None else data


def from_repr(text: str) -> Any:
    """The fields of a dataclass repr (``Dropped(task='b', reason='conflict')`` gives
    ``{"task": "b", "reason": "conflict"}``), the text of a path's
    (``PosixPath('a/b')`` gives ``"a/b"``), or ``text`` itself when it is neither.
    Only literals are read (``ast.literal_eval``); nothing is evaluated."""
    if len(text) > _REPR_LIMIT or not text.endswith(")"):
        return text
    try:
        node = ast.parse(text, mode="eval").body
        return _call_fields(node)
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return text


def _call_fields(node: ast.expr) -> Any:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return ast.literal_eval(node)
    if node.func.id.endswith("Path"):  # PosixPath('a/b'): the path's text
        (only,) = node.args
        value = ast.literal_eval(only)
        if node.keywords or not isinstance(value, str):
            raise ValueError("not a path's repr")
        return value
    if node.args or not node.func.id[:1].isupper():
        raise ValueError("not a repr of fields")
    return {kw.arg: _call_fields(kw.value) for kw in node.keywords if kw.arg is not None}


def _records(data: JsonObject, *keys: str) -> None:
    for key in keys:
        items = data.get(key)
        if isinstance(items, list):
            data[key] = [from_repr(item) if isinstance(item, str) else item for item in items]


def _merge(data: JsonObject) -> JsonObject:
    _records(data, "resolutions", "dropped")
    return data


def _nest(data: JsonObject, into: str, keys: tuple[str, ...]) -> JsonObject:
    if into not in data or not isinstance(data[into], dict):
        data[into] = {key: data.pop(key) for key in keys if key in data}
    return data


def _repo_state_changed(data: JsonObject) -> JsonObject:
    if isinstance(data.get("change"), str):
        data["kind"] = data.pop("change")
    keys = ("area", "name", "kind", "agents", "restored", "saved", "note")
    return _nest(data, "change", keys)


def _unattributed_changes(data: JsonObject) -> JsonObject:
    return _nest(data, "set_aside", ("ref", "files", "left_in_place", "restore"))


_COUNTS = tuple(field.name for field in dataclasses.fields(RunCounts))


def _agent_finished(data: JsonObject) -> JsonObject:
    if data.get("source") == "hook" and "agent" not in data:
        data["agent"] = data.pop("task", None)
    if "counts" not in data and any(key in data for key in _COUNTS):
        data["counts"] = {key: data.pop(key) for key in _COUNTS if key in data}
    return data


def _breaker_tripped(data: JsonObject) -> JsonObject:
    breaker = data.get("breaker")
    if isinstance(breaker, str):
        data["breaker"] = breaker.removeprefix("breaker/")
    return data


def _carryover(data: JsonObject) -> JsonObject:
    """The recovery's own record of a filing (``agent``, ``created``, ``skipped``)."""
    if "task" not in data and "agent" in data:
        data["task"] = data.pop("agent")
        created, skipped = data.pop("created", False), data.pop("skipped", None)
        data.setdefault("outcome", "created" if created else skipped)
    return data


_STEPS: dict[str, Callable[[JsonObject], JsonObject]] = {
    "agent_finished": _agent_finished,
    "breaker_tripped": _breaker_tripped,
    "carryover": _carryover,
    "merge": _merge,
    "repo_state_changed": _repo_state_changed,
    "unattributed_changes": _unattributed_changes,
}
