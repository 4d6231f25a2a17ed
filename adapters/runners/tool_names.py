"""Tool-name mapping: an agent CLI's own tool names normalised to seawall's canonical ones.

seawall recognises edits, reads and shell commands only by the canonical names of
``seawall.events`` (``Write``, ``Edit``, ``Read``, ``Bash``, ...) and their argument
keys (``file_path``, ``command``, ...). A CLI whose write tool is ``write_file(path=...)``
must say so, or its writes escape checkpoints, detectors and breakers. ``ToolNames``
holds that mapping for one CLI; ``StreamingCliRunner`` applies it to every event its
parser produces, and in a strict wave stops an agent that calls a tool which is neither
canonical, nor mapped, nor known to only read (see ``ToolNames.refusal``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from seawall.codec import JsonObject
from seawall.events import (
    EDIT_TOOLS,
    READ_TOOLS,
    SHELL_TOOLS,
    SUBAGENT_TOOLS,
    Event,
    ToolCall,
    ToolResult,
)
from seawall.model import Enforcement
from seawall.pricing import PriceTable
from seawall.runner import AgentRequest, EmitFn, Emitter
from seawall.scope.manifest import ManifestError, load_manifest
from seawall.scope.tools import BUILT_IN_READERS, other_tool_paths

__all__ = ["CANONICAL_TOOLS", "Tool", "ToolGate", "ToolNames", "strict_scope"]

CANONICAL_TOOLS = EDIT_TOOLS | READ_TOOLS | SHELL_TOOLS | SUBAGENT_TOOLS | BUILT_IN_READERS
"""Every tool name seawall understands without a mapping."""


def _no_keys() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Tool:
    """What one of a CLI's tools is in seawall's terms: the canonical ``name`` and the
    renaming of its argument keys (``{"filePath": "file_path"}``); keys not named are
    kept as they are."""

    name: str
    arguments: Mapping[str, str] = field(default_factory=_no_keys)

    def __post_init__(self) -> None:
        if self.name not in CANONICAL_TOOLS:
            raise ValueError(f"{self.name!r} is not a canonical tool name")
        object.__setattr__(self, "arguments", MappingProxyType(dict(self.arguments)))


class ToolNames:
    """One CLI's tool names mapped to canonical ones, plus the names it declares
    read-only (tools that write nothing and run nothing, e.g. ``todowrite``)."""

    __slots__ = ("_read_only", "_tools")

    def __init__(
        self, tools: Mapping[str, Tool] | None = None, *, read_only: frozenset[str] = frozenset()
    ) -> None:
        self._tools: Mapping[str, Tool] = MappingProxyType(dict(tools or {}))
        self._read_only = frozenset(read_only)

    @property
    def tools(self) -> Mapping[str, Tool]:
        return self._tools

    def known(self, name: str) -> bool:
        """Whether seawall understands ``name`` once mapped (canonical, mapped, or
        declared read-only)."""
        return name in CANONICAL_TOOLS or name in self._tools or name in self._read_only

    def normalise(self, event: Event) -> Event:
        """``event`` with a mapped tool's name and argument keys made canonical."""
        if isinstance(event, ToolCall):
            tool = self._tools.get(event.name)
            if tool is None:
                return event
            arguments: JsonObject = {
                tool.arguments.get(key, key): value for key, value in event.arguments.items()
            }
            return replace(event, name=tool.name, arguments=MappingProxyType(arguments))
        if isinstance(event, ToolResult) and event.name is not None:
            tool = self._tools.get(event.name)
            if tool is not None:
                return replace(event, name=tool.name)
        return event

    def refusal(self, call: ToolCall) -> str | None:
        """Why a strict wave refuses ``call`` (already normalised), or None.

        A tool seawall does not know is refused unless its name says it only reads
        (``read_file``, ``list_directory``, ``search_*`` ...): whatever it writes would
        escape scope checks, checkpoints and breakers."""
        if self.known(call.name) or other_tool_paths(call.name, call.arguments).read_only:
            return None
        return (
            f"unrecognised tool {call.name!r} may write files: seawall cannot check its "
            "scope; map it to a canonical tool name in the runner's tool names"
        )


def strict_scope(request: AgentRequest) -> bool:
    """Whether the request's wave enforces scope strictly (its manifest says so; a
    manifest that cannot be trusted counts as strict)."""
    if request.manifest is None:
        return False
    try:
        manifest = load_manifest(
            Path(request.manifest),
            session=request.session or None,
            digest=request.manifest_sha256 or None,
        )
    except ManifestError:
        return True
    return manifest.enforcement is Enforcement.STRICT


class ToolGate(Emitter):
    """An ``Emitter`` that makes each event's tool names canonical before it is counted
    and delivered, and with ``strict`` stops the agent (``request.stop``) at its first
    call of a tool seawall does not know, with ``ToolNames.refusal`` as the reason."""

    __slots__ = ("_names", "_request", "_strict")

    def __init__(
        self,
        emit: EmitFn,
        *,
        names: ToolNames,
        request: AgentRequest,
        strict: bool,
        prices: PriceTable | None = None,
    ) -> None:
        super().__init__(emit, prices=prices)
        self._names = names
        self._request = request
        self._strict = strict

    async def __call__(self, event: Event) -> None:
        event = self._names.normalise(event)
        await super().__call__(event)
        if self._strict and isinstance(event, ToolCall) and not self._request.stop.is_set:
            reason = self._names.refusal(event)
            if reason is not None:
                self._request.stop.stop(f"scope (strict): {reason}")
