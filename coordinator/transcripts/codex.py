"""Codex ``codex exec --json`` events -> normalized events.

The stream: ``thread.started``, ``turn.started``, ``item.started`` / ``item.updated`` /
``item.completed`` (item types ``agent_message``, ``reasoning``, ``command_execution``,
``file_change``, ``mcp_tool_call``, ``web_search``, ``todo_list``, ``error``), then
``turn.completed`` with usage, or ``turn.failed``; a top-level ``error`` is a stream error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from seawall.codec import JsonObject, JsonView
from seawall.events import (
    Conversation,
    Event,
    Final,
    Message,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
)
from seawall.transcripts._common import RecordParser, as_int, cap_text
from seawall.transcripts.codex_limits import codex_limit
from seawall.transcripts.codex_patch import shell_patch
from seawall.transcripts.codex_rollout import codex_refused

__all__ = ["CODEX_EVENT_TYPES", "CodexJsonParser"]

CODEX_EVENT_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)

_TOOL_ITEMS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})


class CodexJsonParser(RecordParser):
    """Turns ``codex exec --json`` lines into ``Event``s, one agent stream per instance.

    Duties:

    - ``command_execution`` -> ``ToolCall`` named ``command_execution`` with
      ``{"command": ...}``, then a ``ToolResult`` with its ``exit_code``, its output, and
      ``is_error`` when the exit code is not 0 (or the item failed without one);
    - ``file_change`` -> ``ToolCall`` named ``file_change`` with
      ``{"changes": [{"path", "kind"}]}`` and a result (an error when the change failed);
    - a ``command_execution`` that runs a patch Codex did not apply itself (the argument
      form, ``apply_patch "*** Begin Patch ..."``, which the shell runs) is the edit it
      is: a ``ToolCall`` named ``apply_patch`` with the patch as ``input`` and its files
      as ``changes``, its result the edit's (see ``seawall.transcripts.codex_patch``);
    - ``mcp_tool_call`` and ``web_search`` -> a call and a result likewise;
    - an item the person (or the approval settings) refused (status ``declined``, or
      Codex's ``exec command rejected by user``) gives a ``refused`` result: a decision
      about the call, not its failure. The stream carries no item for the person's own
      prompts: those come from the rollout file (``CodexRolloutParser``), which the
      ``codex`` runner follows;
    - ``agent_message`` -> ``Message``; ``reasoning``, ``todo_list`` and warning items
      (item type ``error``) give no event;
    - a ``Turn`` for every model response: at ``turn.started`` and at the first item
      after a tool result (Codex has one protocol turn per ``exec``; the coordinator
      counts model responses, as it does for Claude Code);
    - ``turn.completed`` -> ``Usage`` (once per turn; Codex's ``input_tokens`` includes
      its cached part, which is split off as cache reads, and ``model`` is the one the
      parser was given, since the stream does not name it) and a successful ``Final`` carrying
      the last agent message; ``turn.failed`` -> an error ``Final``; a top-level
      ``error`` not followed by either is owed as an error ``Final`` by ``finish()``;
    - unknown types are ignored (``ignored``), broken lines counted in ``malformed``.
    """

    __slots__ = (
        "_clock",
        "_completed_turns",
        "_last_message",
        "_need_turn",
        "_patches",
        "_pending_error",
        "_started",
        "_turn",
        "ignored",
        "malformed",
        "model",
        "thread_id",
        "warnings",
    )

    def __init__(self, *, clock: Callable[[], float] | None = None, model: str = "") -> None:
        self._clock = clock
        self.model = model
        self._turn = 0
        self._completed_turns = 0
        self._need_turn = True
        self._started: set[str] = set()
        self._patches: set[str] = set()  # item ids of commands that apply a patch
        self._last_message = ""
        self._pending_error: str | None = None
        self.malformed = 0
        self.ignored = 0
        self.thread_id: str | None = None
        self.warnings: list[str] = []

    def feed_record(self, record: JsonView) -> list[Event]:
        """The events of one decoded line."""
        kind = record.get("type")
        if kind in ("item.started", "item.completed"):
            item = record.get("item")
            if not isinstance(item, Mapping):
                self.malformed += 1
                return []
            return self._item(item, completed=kind == "item.completed")
        if kind == "turn.started":
            self._need_turn = True
            return []
        if kind == "turn.completed":
            return self._turn_completed(record)
        if kind == "turn.failed":
            return [self._failed(_error_message(record.get("error")), "turn.failed")]
        if kind == "error":
            self._pending_error = _error_message(record) or "error"
            return []
        if kind == "thread.started":
            thread = record.get("thread_id")
            self.thread_id = thread if isinstance(thread, str) and thread else None
            if self.thread_id is None:
                return []
            return [Conversation(id=self.thread_id, at=self._now())]
        self.ignored += 1  # item.updated and anything newer
        return []

    def finish(self) -> list[Event]:
        """An error ``Final`` when the stream ended on a top-level ``error``, else nothing."""
        if self._pending_error is None:
            return []
        return [self._failed(self._pending_error, "error")]

    def _now(self) -> float:
        return self._clock() if self._clock is not None else 0.0

    def _turn_event(self, at: float, events: list[Event]) -> None:
        if self._need_turn:
            self._need_turn = False
            self._turn += 1
            events.append(Turn(number=self._turn, at=at))

    def _item(self, item: JsonView, *, completed: bool) -> list[Event]:
        kind = item.get("type")
        at = self._now()
        events: list[Event] = []
        if kind == "agent_message":
            text = item.get("text")
            if completed and isinstance(text, str):
                self._turn_event(at, events)
                self._last_message = text
                events.append(Message(text=text, turn=self._turn, at=at))
            return events
        if kind == "error":
            message = item.get("message")
            if completed and isinstance(message, str):
                self.warnings.append(message)
            return events
        if not isinstance(kind, str) or kind not in _TOOL_ITEMS:
            return events  # reasoning, todo_list, and item types newer than this parser
        call_id = str(item.get("id") or "")
        if call_id not in self._started:
            self._turn_event(at, events)
            self._started.add(call_id)
            events.append(self._patch_call(_call(call_id, kind, item, self._turn, at)))
        if completed:
            self._started.discard(call_id)
            self._need_turn = True
            events.append(self._patch_result(_result(call_id, kind, item, at)))
        return events

    def _patch_call(self, call: ToolCall) -> ToolCall:
        """A command that applies a patch, as the ``apply_patch`` edit it is."""
        command = call.arguments.get("command") if call.name == "command_execution" else None
        patch = shell_patch(command) if isinstance(command, str) else None
        if patch is None:
            return call
        self._patches.add(call.call_id)
        return replace(call, name="apply_patch", arguments=patch.arguments(call.arguments))

    def _patch_result(self, result: ToolResult) -> ToolResult:
        if result.call_id not in self._patches:
            return result
        self._patches.discard(result.call_id)
        return replace(result, name="apply_patch")

    def _turn_completed(self, record: JsonView) -> list[Event]:
        self._completed_turns += 1
        self._pending_error = None
        at = self._now()
        events: list[Event] = []
        usage = record.get("usage")
        if isinstance(usage, Mapping):
            cached = as_int(usage.get("cached_input_tokens"))
            written = as_int(usage.get("cache_write_input_tokens"))
            events.append(
                Usage(
                    message_id=f"{self.thread_id or 'thread'}:turn-{self._completed_turns}",
                    model=self.model,
                    input_tokens=max(0, as_int(usage.get("input_tokens")) - cached - written),
                    output_tokens=as_int(usage.get("output_tokens")),
                    cache_read_tokens=cached,
                    cache_write_tokens=written,
                    at=at,
                )
            )
        events.append(
            Final(text=self._last_message, subtype="success", num_turns=self._turn, at=at)
        )
        return events

    def _failed(self, message: str, subtype: str) -> Final:
        # a limit is said by the stream's ``error`` and the ``turn.failed`` after it
        limit = codex_limit(message) or codex_limit(self._pending_error or "")
        self._pending_error = None
        return Final(
            text=message,
            is_error=True,
            subtype=subtype,
            num_turns=self._turn,
            limit=limit,
            at=self._now(),
        )


def _call(call_id: str, kind: str, item: JsonView, turn: int, at: float) -> ToolCall:
    arguments: JsonObject
    name = _tool_name(kind, item)
    if kind == "command_execution":
        arguments = {"command": item.get("command", "")}
    elif kind == "file_change":
        arguments = {"changes": _changes(item.get("changes"))}
    elif kind == "web_search":
        arguments = {"query": item.get("query", "")}
    else:
        raw = item.get("arguments")
        arguments = raw if isinstance(raw, dict) else {}
    return ToolCall(call_id=call_id, name=name, arguments=arguments, turn=turn, at=at)


def _tool_name(kind: str, item: JsonView) -> str:
    """``mcp__<server>__<tool>`` for an MCP call (Claude Code's spelling), else the item type."""
    tool = item.get("tool")
    if kind == "mcp_tool_call" and isinstance(tool, str):
        return f"mcp__{item.get('server', '')}__{tool}"
    return kind


def _changes(raw: Any) -> list[dict[str, str]]:
    if not isinstance(raw, list):
        return []
    return [
        {"path": str(change.get("path", "")), "kind": str(change.get("kind", ""))}
        for change in raw
        if isinstance(change, Mapping)
    ]


def _result(call_id: str, kind: str, item: JsonView, at: float) -> ToolResult:
    status = item.get("status")
    failed = status in ("failed", "declined")
    if kind == "command_execution":
        code = item.get("exit_code")
        exit_code = code if isinstance(code, int) else None
        output = item.get("aggregated_output")
        text = cap_text(output) if isinstance(output, str) else ""
        refused = status == "declined" or (exit_code is None and failed and codex_refused(text))
        return ToolResult(
            call_id=call_id,
            name=kind,
            exit_code=exit_code,
            is_error=refused or (exit_code != 0 if exit_code is not None else failed),
            text=text,
            refused=refused,
            at=at,
        )
    error = item.get("error")
    text = _error_message(error) if error else ""
    if kind == "mcp_tool_call" and not text:
        text = cap_text(str(item.get("result") or ""))
    return ToolResult(
        call_id=call_id,
        name=_tool_name(kind, item),
        is_error=failed or bool(error),
        text=text,
        refused=status == "declined" or (bool(error) and codex_refused(text)),
        at=at,
    )


def _error_message(error: Any) -> str:
    if isinstance(error, Mapping):
        message = error.get("message")
        return message if isinstance(message, str) else ""
    return error if isinstance(error, str) else ""
