"""The normalized event model every runner and transcript parser produces.

An agent's run is a stream of these events. Detectors, breakers, checkpoints and the
live table consume them without knowing which agent CLI produced them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from seawall.codec import JsonView

__all__ = [
    "EDIT_TOOLS",
    "READ_TOOLS",
    "SHELL_TOOLS",
    "SUBAGENT_TOOLS",
    "TURN_LIMIT_SUBTYPES",
    "Conversation",
    "Event",
    "Final",
    "HumanTurn",
    "LimitKind",
    "Message",
    "ProviderLimit",
    "ToolCall",
    "ToolResult",
    "Turn",
    "Usage",
    "edited_paths",
    "read_path",
    "shell_command",
]

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "file_change", "apply_patch"})
READ_TOOLS = frozenset({"Read", "Grep", "Glob", "NotebookRead", "View"})
SHELL_TOOLS = frozenset({"Bash", "command_execution", "shell", "exec_command"})
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
TURN_LIMIT_SUBTYPES = frozenset({"error_max_turns"})
"""Final subtypes of an agent CLI that stopped at its turn limit."""


def _empty() -> JsonView:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """A new assistant turn began (one model response)."""

    number: int
    at: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """The agent asked for a tool. ``arguments`` is the tool input as given."""

    call_id: str
    name: str
    arguments: JsonView = field(default_factory=_empty)
    turn: int = 0
    at: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """A tool answered. ``cancelled`` marks a call dropped because a sibling call errored;
    ``refused`` a call the person at the keyboard (or the CLI's permission layer) would
    not let run: a decision about the call, not its failure."""

    call_id: str
    is_error: bool = False
    text: str = ""
    name: str | None = None
    exit_code: int | None = None
    cancelled: bool = False
    refused: bool = False
    at: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class HumanTurn:
    """A person spoke to the agent: a prompt they typed, or their interrupting it.

    What the agent does next answers a person, so streaks of failures and repeats end
    here; budgets (calls, cost, time) go on counting."""

    text: str = ""
    at: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """Text the agent wrote (not a tool call)."""

    text: str
    turn: int = 0
    at: float = 0.0


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


class LimitKind(StrEnum):
    """Which of a provider's limits refused the agent."""

    USAGE = "usage"  # a subscription's usage limit (five-hour, weekly): resets at a time
    RATE = "rate"  # an API rate limit (HTTP 429) the CLI's own retries did not outlast
    OVERLOADED = "overloaded"  # the provider was overloaded (HTTP 529) past the retries


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderLimit:
    """A model provider refused the agent for a limit, as its CLI reported it.

    ``resets_at`` is the reset time (epoch seconds) when the CLI said it; ``provider``
    names the provider (the runner's ``provider``, e.g. ``anthropic``); ``detail`` is
    the CLI's own words. An agent that met one is paused, not failed."""

    kind: LimitKind
    provider: str = ""
    resets_at: float | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Conversation:
    """The agent CLI named its conversation (Claude Code's session, Codex's thread,
    opencode's session): the id a later run of the same CLI continues it with. A CLI
    that continues a conversation may name a new id for it; the last one counts."""

    id: str
    at: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Final:
    """The agent finished. ``is_error`` is true for any failed run, whatever the subtype.

    ``denials`` names the calls the agent CLI's own permission layer refused (``"Write
    src/x.py"``); ``turn_limit`` is true when the CLI ended because it reached its turn
    limit (its work is partial, not failed); ``limit`` is the provider's limit that
    ended the run, when the CLI said so."""

    text: str = ""
    is_error: bool = False
    subtype: str = ""
    num_turns: int | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    denials: tuple[str, ...] = ()
    limit: ProviderLimit | None = None
    at: float = 0.0

    @property
    def turn_limit(self) -> bool:
        return self.subtype in TURN_LIMIT_SUBTYPES


Event = Turn | ToolCall | ToolResult | Message | Usage | Final | HumanTurn | Conversation


def _str_arg(arguments: JsonView, *names: str) -> str | None:
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
