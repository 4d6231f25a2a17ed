"""What travels between the coordinator and a Ray worker: plain, picklable values.

seawall's values freeze their mappings (``MappingProxyType``), which cannot be pickled;
this module turns events, runner specs and requests into plain dicts and back, and
defines the messages a worker sends while its agent runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from seawall.adapters.runners.ray.scope import PackedScope
from seawall.codec import JsonObject, JsonView
from seawall.events import (
    Conversation,
    Event,
    Final,
    HumanTurn,
    LimitKind,
    Message,
    ProviderLimit,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
)
from seawall.model import RunnerSpec

__all__ = [
    "CheckpointNote",
    "Job",
    "WorkerOutcome",
    "decode_event",
    "decode_spec",
    "encode_event",
    "encode_spec",
    "plain",
    "relocate",
]

_EVENT_TYPES: Mapping[str, type[Any]] = MappingProxyType(
    {
        cls.__name__: cls
        for cls in (Turn, ToolCall, ToolResult, Message, Usage, Final, HumanTurn, Conversation)
    }
)


def plain(value: Any) -> Any:
    """``value`` with every mapping a dict and every tuple a list (picklable, JSON-like)."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, ProviderLimit):
        return {item.name: plain(getattr(value, item.name)) for item in fields(value)}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def relocate(value: Any, old: tuple[str, ...], new: str) -> Any:
    """``value`` (plain data) with every path under one of the ``old`` roots moved to
    ``new``, so a remote agent's paths read as paths in the coordinator's worktree."""
    if isinstance(value, str):
        for root in old:
            if root in value:
                value = value.replace(root, new)
        return value
    if isinstance(value, dict):
        return {key: relocate(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [relocate(item, old, new) for item in value]
    return value


def encode_event(event: Event) -> JsonObject:
    """A plain dict of ``event``, with its type name under ``"type"``."""
    data = {field.name: plain(getattr(event, field.name)) for field in fields(event)}
    data["type"] = type(event).__name__
    return data


def decode_event(data: JsonView) -> Event:
    """The event ``encode_event`` made; mappings are frozen again."""
    values = dict(data)
    cls = _EVENT_TYPES[str(values.pop("type"))]
    if cls is ToolCall:
        values["arguments"] = MappingProxyType(dict(values.get("arguments") or {}))
    if cls is Final:
        values["denials"] = tuple(values.get("denials") or ())
        limit = values.get("limit")
        if isinstance(limit, Mapping):
            values["limit"] = ProviderLimit(**{**limit, "kind": LimitKind(limit["kind"])})
    event: Event = cls(**values)
    return event


def encode_spec(spec: RunnerSpec) -> JsonObject:
    return {
        "name": spec.name,
        "kind": spec.kind,
        "argv": list(spec.argv),
        "model": spec.model,
        "env": dict(spec.env),
        "options": dict(spec.options),
    }


def decode_spec(data: JsonView) -> RunnerSpec:
    return RunnerSpec(
        name=str(data["name"]),
        kind=str(data["kind"]),
        argv=tuple(data["argv"]),
        model=data["model"],
        env=MappingProxyType(dict(data["env"])),
        options=MappingProxyType(dict(data["options"])),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One agent run as the worker receives it.

    ``head`` is the branch tip the agent starts from (also the checkpoints' base);
    ``checkpoint`` the checkpoint ref's tip the coordinator already has, if any;
    ``subdir`` the workspace relative to the worktree root (``""`` for the root).
    """

    task_id: str
    prompt: str
    session: str
    wave: int
    max_turns: int | None
    env: dict[str, str]
    branch: str
    head: str
    checkpoint_ref: str
    checkpoint: str | None
    subdir: str
    transcript_name: str | None
    inner: JsonObject | None  # an encoded RunnerSpec, or None with ``factory``
    factory: Any  # a picklable ``() -> AgentRunner`` when ``inner`` is None
    identity: dict[str, str]  # git user.name / user.email of the coordinator's repository
    checkpoint_every: float
    local_root: str  # the worktree on the coordinator: paths in events are rewritten to it
    scratch_dir: str | None  # where the worker makes its temporary clone (None: the default)
    hub_name: str = ""  # the hub actor's name: a worker whose hub was lost finds its successor
    model: str | None = None  # the attempt's model (``AgentRequest.model``)
    conversation: str | None = None  # the conversation to continue (``AgentRequest``'s)
    scope: PackedScope = field(default_factory=PackedScope)  # the sandbox and the manifest


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointNote:
    """The agent's work at one moment: its branch tip, its checkpoint ref's tip and the
    tree of its working directory, plus a bundle of the commits the coordinator lacks."""

    branch_tip: str
    checkpoint: str | None
    tree: str
    bundle: bytes | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerOutcome:
    """How the remote run ended. ``setup_error`` means the agent never started."""

    result: JsonObject | None = None
    final: CheckpointNote | None = None
    transcripts: dict[str, bytes] | None = None
    setup_error: str = ""
    runner_error: str = ""
    crash: str = ""
