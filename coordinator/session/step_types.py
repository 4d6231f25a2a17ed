"""What step mode hands a lead agent: typed, frozen, versioned.

``Session.prepare_wave`` returns a :class:`PreparedWave` (one :class:`AgentAssignment`
per agent: its prompt, workspace, branch, scope and turn limit) and
``Session.review_wave`` a :class:`WaveReport` (one :class:`AgentReview` per agent: its
status, summary, what remains, whether it merged, its carryover issue). When there is
no wave to prepare, ``seawall wave prepare`` prints a :class:`WaveDone` or, when the
session halted, a :class:`WaveHalted`. ``to_json()``
gives the document the command line prints, with ``"schema"`` naming its JSON Schema
(``coordinator/lead/schemas/<name>.schema.json``, shipped in the package): a change that
breaks readers changes the number after the slash.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from seawall.codec import JsonObject, decode_any, encode
from seawall.model import Enforcement, Isolation, Status
from seawall.state.ledger import (
    AdoptedRecord,
    ChecksRecord,
    Halt,
    Resolution,
    SessionPhase,
    SetAsideRecord,
)

__all__ = [
    "COMMAND_SCHEMAS",
    "SCHEMAS",
    "STEP_SCHEMAS",
    "AgentAssignment",
    "AgentReview",
    "Document",
    "PreparedWave",
    "WaveDone",
    "WaveHalted",
    "WaveReport",
    "load_schema",
    "schema_name",
]


class Document:
    """``to_json()`` for the step-mode types: their fields (``"schema"`` first, for a
    document a command prints) as JSON data (lists, not tuples, as a JSON Schema
    validator expects), converted by the one codec."""

    __slots__ = ()

    def to_json(self) -> JsonObject:  # JSON data, for a JSON Schema validator
        result: JsonObject = decode_any(encode(self))
        return result


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentAssignment(Document):
    """One agent a lead dispatches: give it ``prompt`` verbatim, working in ``workspace``.

    ``scope`` is what it may write (globs relative to the workspace); ``branch`` is the
    worktree's branch (None in place); ``max_turns`` the turn limit its prompt states."""

    task: str
    workspace: str
    branch: str | None
    scope: tuple[str, ...]
    max_turns: int
    prompt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedWave(Document):
    """A wave ready for the lead to dispatch (``seawall wave prepare``)."""

    schema: str = field(default="seawall.wave-prepare/1", init=False)

    session: str
    wave: int
    isolation: Isolation  # worktree | none
    enforcement: Enforcement
    base: str  # the commit every agent starts from
    scope_manifest: str  # the path of the wave's scope manifest
    agents: tuple[AgentAssignment, ...]

    def agent(self, task: str) -> AgentAssignment:
        """The assignment of ``task``; KeyError when the wave has none."""
        for assignment in self.agents:
            if assignment.task == task:
                return assignment
        raise KeyError(task)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentReview(Document):
    """What the review made of one agent's work. ``set_aside`` holds the conflicts in
    which its version of a file was kept out of the merge: the file, whose version
    stayed, and the fix task queued to reconcile them."""

    task: str
    status: Status | None
    summary: str
    remaining: str
    merged: bool
    issue: int | None  # the carryover issue filed (or found) for it
    set_aside: tuple[Resolution, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveReport(Document):
    """A reviewed wave (``seawall wave review``): each agent's review, what is pending.

    ``set_aside`` names the files changed outside every scope that were put on a ref
    (with the command that restores them); ``checks`` the checks' verdict; ``halt`` why
    the session stopped, if it did."""

    schema: str = field(default="seawall.wave-review/1", init=False)

    session: str
    wave: int
    phase: SessionPhase  # the session's phase after the review
    agents: tuple[AgentReview, ...]
    pending: tuple[str, ...]
    set_aside: SetAsideRecord | None = None
    adopted: AdoptedRecord | None = None
    checks: ChecksRecord | None = None
    halt: Halt | None = None

    def agent(self, task: str) -> AgentReview:
        """The review of ``task``; KeyError when the wave has none."""
        for review in self.agents:
            if review.task == task:
                return review
        raise KeyError(task)


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveDone(Document):
    """Nothing is left to prepare (``seawall wave prepare``); ``then`` says how the
    session ends."""

    schema: str = field(default="seawall.wave-done/1", init=False)

    session: str
    wave: None = None
    done: bool = True
    then: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveHalted(Document):
    """The session halted instead of preparing a wave (``seawall wave prepare``):
    ``halt`` says why, ``then`` how it continues."""

    schema: str = field(default="seawall.wave-halted/1", init=False)

    session: str
    wave: None = None
    done: bool = False
    phase: SessionPhase = SessionPhase.HALTED
    halt: Halt | None
    then: str


STEP_SCHEMAS = ("wave-prepare", "wave-review", "wave-done", "wave-halted", "next")
"""The lead's documents, their schemas written by hand (they refer to one another)."""

COMMAND_SCHEMAS = (
    "error",
    "plan",
    "prompt",
    "outcome",
    "status",
    "progress",
    "kill",
    "reset-lead",
    "reset-agent",
    "report",
    "worktrees",
    "worktrees-prune",
    "restore",
    "carryover",
    "carryover-validate",
    "hooks-install",
    "runner-tick",
    "runner-enqueue",
    "runner-resume",
    "runner-status",
    "replay",
    "adapters",
    "adapters-check",
    "demo",
    "watch",
    "wave-watch",
    "mcp",
)
"""The other commands' documents, their schemas derived from their records
(``seawall.codec.document_schema``)."""

SCHEMAS: Mapping[str, str] = {
    f"seawall.{stem}/1": stem for stem in (*STEP_SCHEMAS, *COMMAND_SCHEMAS)
}
"""Every document a command prints, by the name in its ``"schema"``: its file's stem
(``coordinator/lead/schemas/<stem>.schema.json``)."""


@cache
def _schema_text(name: str) -> str:
    path = resources.files("seawall.lead").joinpath(f"schemas/{name}.schema.json")
    return path.read_text(encoding="utf-8")


def schema_name(schema: str) -> str:
    """The full name of a document's schema: ``seawall.next/1`` as it is; a short name
    (``next``, ``seawall.next``) is its newest version. KeyError, naming the known
    names, for one seawall does not ship."""
    if schema in SCHEMAS:
        return schema
    stem = schema.removeprefix("seawall.")
    versions = [name for name in SCHEMAS if name.rsplit("/", 1)[0] == f"seawall.{stem}"]
    if not versions:
        close = difflib.get_close_matches(stem, [SCHEMAS[name] for name in SCHEMAS], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise KeyError(
            f"no seawall document schema named {schema!r}{hint}; known: {', '.join(SCHEMAS)}"
        )
    return max(versions, key=lambda name: int(name.rsplit("/", 1)[1]))


def load_schema(schema: str) -> JsonObject:
    """The JSON Schema of the document whose ``"schema"`` is ``schema`` (e.g.
    ``seawall.next/1``, or its short name ``next``), self-contained: a ``$ref`` to a
    sibling file is replaced by that file's schema. KeyError for a name seawall does
    not ship."""
    data: JsonObject = json.loads(_schema_text(SCHEMAS[schema_name(schema)]))
    inlined: JsonObject = _inline(data)
    return inlined


def _inline(node: Any) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.endswith(".schema.json") and len(node) == 1:
            sibling = json.loads(_schema_text(ref.removesuffix(".schema.json")))
            return _inline({k: v for k, v in sibling.items() if k not in ("$schema", "$id")})
        return {key: _inline(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item) for item in node]
    return node
