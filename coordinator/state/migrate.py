"""Ledgers of older schemas, brought to the current one as they are read.

Schema 1 is one ``state.json`` rewritten whole on every save (no journal, no save
number): its snapshot is the whole ledger, and the journal beside it does not exist yet.
Keys that schema 1 kept for newer writers are dropped: a newer writer now changes the
schema number, and an unknown schema is refused. An agent's recorded run did not name
its task (the agent record around it did); it does now. An agent's trip carried
``breaker`` and ``detail`` beside the trip's own fields: they are the kind's label and
the evidence, and reading the trip drops them.

Schema 2 kept "no halt" and "no wave breaker yet" as empty objects; they are ``null``
now, and a halt and the wave breaker's state are records (``Halt``,
``WaveBreakerState``). A schema-2 journal's lines still carry the empty objects, so this
step runs again on the ledger once its journal is applied (``after_journal``).
"""

from __future__ import annotations

from pathlib import Path

from seawall.codec import JsonObject
from seawall.errors import StateError
from seawall.state.ledger import SCHEMA_VERSION

__all__ = ["after_journal", "migrate"]


def _from_1(data: JsonObject) -> JsonObject:
    data.pop("extra", None)
    data["seq"] = 0
    for wave in data.get("waves") or ():
        for agent in wave.get("agents") or ():
            if isinstance(agent, dict) and isinstance(agent.get("run"), dict):
                agent["run"].setdefault("task_id", agent.get("task", ""))
    return data


def _from_2(data: JsonObject) -> JsonObject:
    for key in ("halt", "breaker"):
        if data.get(key) == {}:
            data[key] = None
    return data


def after_journal(data: JsonObject) -> JsonObject:
    """``data`` once its journal is applied: the lines a schema-2 writer appended (or a
    newer writer appended to a schema-2 snapshot) brought back schema 2's shapes."""
    return _from_2(data)


_STEPS = {1: _from_1, 2: _from_2}


def migrate(data: JsonObject, path: Path) -> JsonObject:
    """``data`` (a snapshot read from ``path``) in the current schema, without ``schema``."""
    schema = data.pop("schema", None)
    while schema != SCHEMA_VERSION:
        step = _STEPS.get(schema) if isinstance(schema, int) else None
        if step is None:
            raise StateError(
                f"{path} has schema version {schema!r}; this seawall reads versions "
                f"{', '.join(str(v) for v in [*_STEPS, SCHEMA_VERSION])}"
            )
        data = step(data)
        schema += 1
    return data
