"""The normalized event model every runner and transcript parser produces.

An agent's run is a stream of these events. Detectors, breakers, checkpoints and the
live table consume them without knowing which agent CLI produced them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from types import MappingProxyType
from typing import Any, TypeVar

from seawall.drafts import positional

__all__ = [
    "EDIT_TOOLS",
    "READ_TOOLS",
    "SHELL_TOOLS",
    "SUBAGENT_TOOLS",
    "TURN_LIMIT_SUBTYPES",
    "Event",
    "Final",
    "Message",
    "ToolCall",
    "ToolResult",
    "Turn",
    "Usage",
    "edited_paths",
    "new_message",
    "new_tool_call",
    "new_tool_result",
    "new_turn",
    "new_usage",
    "read_path",
    "shell_command",
]

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "file_change", "apply_patch"})
READ_TOOLS = frozenset({"Read", "Grep", "Glob", "NotebookRead", "View"})
SHELL_TOOLS = frozenset({"Bash", "command_execution", "shell", "exec_command"})
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
TURN_LIMIT_SUBTYPES = frozenset({"error_max_turns"})
"""Final subtypes of an agent CLI that stopped at its turn limit."""


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


_E = TypeVar("_E")


class _Factory:
    """The default of a field whose default is made per instance (shown as dataclasses
    show it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _direct_init(cls: type[_E]) -> type[_E]:
    """Give a frozen, slotted dataclass an ``__init__`` that fills its slots directly.

    Same signature and defaults as the one ``dataclass`` writes; that one sets every
    field through ``object.__setattr__`` (the price of ``frozen``), and a transcript
    makes events by the hundred thousand. Setting a field afterwards still raises
    ``FrozenInstanceError``."""
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    params: list[str] = []
    body: list[str] = []
    for spec in fields(cls):  # type: ignore[arg-type]
        name = spec.name
        namespace[f"_set_{name}"] = cls.__dict__[name].__set__
        value = name
        if spec.default is not MISSING:
            namespace[f"_default_{name}"] = spec.default
            params.append(f"{name}=_default_{name}")
        elif spec.default_factory is not MISSING:
            namespace[f"_factory_{name}"] = spec.default_factory
            params.append(f"{name}=_FACTORY")
            value = f"_factory_{name}() if {name} is _FACTORY else {name}"
        else:
            params.append(name)
        body.append(f"    _set_{name}(self, {value})")
    exec(f"def __init__(self, *, {', '.join(params)}):\n" + "\n".join(body), namespace)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    setattr(cls, "__init__", init)  # noqa: B010 (mypy refuses assigning a method)
    return cls


@_direct_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """A new assistant turn began (one model response)."""

    number: int
    at: float = 0.0


@_direct_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """The agent asked for a tool. ``arguments`` is the tool input as given."""

    call_id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=_empty)
    turn: int = 0
    at: float = 0.0


@_direct_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """A tool answered. ``cancelled`` marks a call dropped because a sibling call errored."""

    call_id: str
    is_error: bool = False
    text: str = ""
    name: str | None = None
    exit_code: int | None = None
    cancelled: bool = False
    at: float = 0.0


@_direct_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """Text the agent wrote (not a tool call)."""

    text: str
    turn: int = 0
    at: float = 0.0


@_direct_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage and cost of one model response, counted once per ``message_id``.

    ``input_tokens`` is uncached input (cache reads and writes are counted apart);
    ``model`` names the model that answered, for pricing when ``cost_usd`` is 0."""

    message_id: str = ""
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    at: float = 0.0


@_direct_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Final:
    """The agent finished. ``is_error`` is true for any failed run, whatever the subtype.

    ``denials`` names the calls the agent CLI's own permission layer refused (``"Write
    src/x.py"``); ``turn_limit`` is true when the CLI ended because it reached its turn
    limit (its work is partial, not failed)."""

    text: str = ""
    is_error: bool = False
    subtype: str = ""
    num_turns: int | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    denials: tuple[str, ...] = ()
    at: float = 0.0

    @property
    def turn_limit(self) -> bool:
        return self.subtype in TURN_LIMIT_SUBTYPES


Event = Turn | ToolCall | ToolResult | Message | Usage | Final

# the parsers' own way to make events (``seawall.drafts``): by position, no defaults
new_turn: Callable[[int, float], Turn] = positional(Turn, "new_turn")
new_tool_call: Callable[[str, str, Mapping[str, Any], int, float], ToolCall] = positional(
    ToolCall, "new_tool_call"
)
new_tool_result: Callable[[str, bool, str, str | None, int | None, bool, float], ToolResult] = (
    positional(ToolResult, "new_tool_result")
)
new_message: Callable[[str, int, float], Message] = positional(Message, "new_message")
new_usage: Callable[[str, str, int, int, int, int, float, float], Usage] = positional(
    Usage, "new_usage"
)


def _str_arg(arguments: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def edited_paths(call: ToolCall) -> tuple[str, ...]:
    """The paths a tool call writes, as given (unresolved). Empty for non-edit tools."""
    if call.name not in EDIT_TOOLS:
        return ()
    path = _str_arg(call.arguments, "file_path", "notebook_path", "path")
    if path is not None:
        return (path,)
    changes = call.arguments.get("changes")
    if isinstance(changes, list):
        return tuple(
            str(change["path"])
            for change in changes
            if isinstance(change, Mapping) and isinstance(change.get("path"), str)
        )
    return ()


def read_path(call: ToolCall) -> str | None:
    """The path a read-like tool call reads, or None."""
    if call.name not in READ_TOOLS:
        return None
    return _str_arg(call.arguments, "file_path", "path", "notebook_path")


def shell_command(call: ToolCall) -> str | None:
    """The shell command of a shell tool call, or None."""
    if call.name not in SHELL_TOOLS:
        return None
    command = call.arguments.get("command")
    if isinstance(command, list):
        return " ".join(str(part) for part in command)
    return command if isinstance(command, str) else None
