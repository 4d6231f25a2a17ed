"""Claude Code transcripts -> normalized events.

One parser reads both of Claude Code's line formats:

- the ``claude -p --output-format stream-json --verbose`` stream (``system``/``init``,
  ``assistant`` and ``user`` messages, a final ``result``);
- the on-disk session and subagent transcripts (``~/.claude/projects/.../<session>.jsonl``
  and ``<session>/subagents/agent-*.jsonl``): ``user``/``assistant`` lines with a
  ``message`` field, one content block per line, plus ``progress``, ``system``,
  ``file-history-snapshot`` and other bookkeeping lines, which are ignored.

The parser is stateful: one instance per agent stream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from coordinator.events import (
    Event,
    Final,
    ToolCall,
    ToolResult,
    new_message,
    new_tool_call,
    new_tool_result,
    new_turn,
    new_usage,
)
from coordinator.transcripts._claude_lines import (
    ClaudeLine,
    ResultPart,
    ServerToolUseBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from coordinator.transcripts._common import (
    RecordParser,
    as_float,
    as_int,
    cap_text,
    flatten_text,
    iso_seconds,
)

__all__ = ["SIBLING_ERROR_MARKER", "ClaudeStreamParser"]

SIBLING_ERROR_MARKER = "Sibling tool call errored"
"""Claude Code's text for a parallel call dropped because another call of its turn failed."""

_EXIT_CODE_PREFIX = "Exit code "


class ClaudeStreamParser(RecordParser):
    """Turns Claude Code JSON lines into ``Event``s, one agent stream per instance.

    Duties:

    - a ``Turn`` for each new assistant message id (a message split over several lines,
      one content block each, is one turn); messages of a nested subagent (stream-json
      lines with ``parent_tool_use_id``) give their tool calls but no turn;
    - a ``Usage`` once per message id, however many lines repeat it;
    - a ``ToolCall`` per ``tool_use`` block (the subagent tool is ``Task`` or ``Agent``),
      a ``ToolResult`` per ``tool_result`` block with its ``is_error`` flag, ``cancelled``
      when Claude Code dropped the call because a sibling call errored, and the exit
      code of a failed ``Bash`` call when its text gives one;
    - a ``Message`` per assistant text block;
    - a ``Final`` for the ``result`` line; it is an error when ``is_error`` is true or
      the subtype is not ``success`` (an API failure arrives as ``success`` + ``is_error``);
      the calls Claude Code's permission layer refused (``permission_denials``) are named
      in its ``denials``;
    - unknown line types are ignored (``ignored`` counts them); lines that are not a
      JSON object are ignored and counted in ``malformed``; nothing here raises on input.

    ``clock`` stamps events as they are parsed (live streams); without it an event
    carries its line's ``timestamp`` when there is one (files), else 0.0.
    """

    __slots__ = (
        "_call_names",
        "_clock",
        "_nested_ids",
        "_stamp",
        "_stamp_seconds",
        "_turn",
        "_turn_ids",
        "_usage_ids",
        "ignored",
        "malformed",
        "model",
        "session_id",
    )

    def __init__(self, *, clock: Callable[[], float] | None = None) -> None:
        self._clock = clock
        self._turn = 0
        self._turn_ids: set[str] = set()
        self._nested_ids: set[str] = set()
        self._usage_ids: set[str] = set()
        self._call_names: dict[str, str] = {}
        self._stamp: str | None = None
        self._stamp_seconds = 0.0
        self.malformed = 0
        self.ignored = 0
        self.session_id: str | None = None
        self.model: str | None = None

    def feed_record(self, record: Mapping[str, Any]) -> list[Event]:
        """The events of one decoded line."""
        kind = record.get("type")
        if kind == "assistant":
            return self._assistant(record)
        if kind == "user":
            return self._user(record)
        if kind == "result":
            return [self._final(record)]
        if kind == "system" and record.get("subtype") == "init":
            self._init(record)
            return []
        self.ignored += 1
        return []

    def finish(self) -> list[Event]:
        """Events owed at the end of the stream (none for Claude Code: ``result`` is final)."""
        return []

    def _at(self, record: Mapping[str, Any]) -> float:
        if self._clock is not None:
            return self._clock()
        return iso_seconds(record.get("timestamp"))

    def _seconds(self, stamp: str | None) -> float:
        """``iso_seconds`` of a line's timestamp; the lines of one message share theirs."""
        if stamp is None:
            return 0.0
        if stamp != self._stamp:
            self._stamp = stamp
            self._stamp_seconds = iso_seconds(stamp)
        return self._stamp_seconds

    def _init(self, record: Mapping[str, Any]) -> None:
        session = record.get("session_id")
        model = record.get("model")
        self.session_id = session if isinstance(session, str) else None
        self.model = model if isinstance(model, str) else None

    def _assistant(self, record: Mapping[str, Any]) -> list[Event]:
        message = record.get("message")
        if not isinstance(message, dict):
            self.malformed += 1
            return []
        at = self._at(record)
        events: list[Event] = []
        message_id = message.get("id")
        key = message_id if isinstance(message_id, str) and message_id else None
        self._open_turn(key, bool(record.get("parent_tool_use_id")), at, events)
        usage = message.get("usage")
        if isinstance(usage, dict):
            usage_key = key or f"turn-{self._turn}-line-{len(self._usage_ids)}"
            if usage_key not in self._usage_ids:
                self._usage_ids.add(usage_key)
                model = message.get("model")
                events.append(
                    new_usage(
                        usage_key,
                        model if isinstance(model, str) else "",
                        as_int(usage.get("input_tokens")),
                        as_int(usage.get("output_tokens")),
                        as_int(usage.get("cache_read_input_tokens")),
                        as_int(usage.get("cache_creation_input_tokens")),
                        0.0,
                        at,
                    )
                )
        content = message.get("content")
        if isinstance(content, str) and content:
            events.append(new_message(content, self._turn, at))
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    self._assistant_block(block, at, events)
        return events

    def _open_turn(self, key: str | None, nested: bool, at: float, events: list[Event]) -> None:
        """Count a new turn for a top-level message id not seen before (every message
        without an id is a new turn); a nested subagent's message ids are only noted."""
        if nested:
            if key is not None:
                self._nested_ids.add(key)
        elif key is None or key not in self._turn_ids:
            self._turn += 1
            events.append(new_turn(self._turn, at))
            if key is not None:
                self._turn_ids.add(key)

    def _assistant_block(self, block: Mapping[str, Any], at: float, events: list[Event]) -> None:
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                events.append(new_message(text, self._turn, at))
        elif kind in ("tool_use", "server_tool_use"):
            arguments = block.get("input")
            events.append(
                self._call(
                    str(block.get("id") or ""),
                    str(block.get("name") or ""),
                    arguments if isinstance(arguments, dict) else {},
                    at,
                )
            )

    def _call(self, call_id: str, name: str, arguments: dict[str, Any], at: float) -> ToolCall:
        self._call_names[call_id] = name
        return new_tool_call(call_id, name, arguments, self._turn, at)

    def _user(self, record: Mapping[str, Any]) -> list[Event]:
        message = record.get("message")
        if not isinstance(message, dict):
            self.malformed += 1
            return []
        content = message.get("content")
        if not isinstance(content, list):
            return []  # a prompt typed by a person, not a tool result
        at = self._at(record)
        return [
            self._result(
                str(block.get("tool_use_id") or ""),
                flatten_text(block.get("content")),
                block.get("is_error") is True,
                at,
            )
            for block in content
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]

    def _result(self, call_id: str, text: str, is_error: bool, at: float) -> ToolResult:
        name = self._call_names.pop(call_id, None)
        if is_error:
            code = _exit_code(text) if name == "Bash" else None
            cancelled = SIBLING_ERROR_MARKER in text
            return new_tool_result(call_id, True, text, name, code, cancelled, at)
        return new_tool_result(call_id, False, text, name, None, False, at)

    def feed_line(self, line: ClaudeLine) -> list[Event]:
        """The events of a line decoded by ``decode_claude_line`` whose ``type`` is
        neither ``result`` nor ``system`` (those are read whole by ``feed_record``):
        the same events ``feed_record`` gives for the same line read as a plain object."""
        kind = line.type
        if kind == "assistant":
            return self._assistant_line(line)
        if kind == "user":
            return self._user_line(line)
        self.ignored += 1
        return []

    def _assistant_line(self, line: ClaudeLine) -> list[Event]:
        message = line.message
        if message is None:
            self.malformed += 1
            return []
        clock = self._clock
        at = clock() if clock is not None else self._seconds(line.timestamp)
        events: list[Event] = []
        key = message.id or None
        self._open_turn(key, bool(line.parent_tool_use_id), at, events)
        usage = message.usage
        if usage is not None:
            usage_key = key or f"turn-{self._turn}-line-{len(self._usage_ids)}"
            if usage_key not in self._usage_ids:
                self._usage_ids.add(usage_key)
                events.append(
                    new_usage(
                        usage_key,
                        message.model or "",
                        usage.input_tokens,
                        usage.output_tokens,
                        usage.cache_read_input_tokens,
                        usage.cache_creation_input_tokens,
                        0.0,
                        at,
                    )
                )
        content = message.content
        if isinstance(content, list):
            turn = self._turn
            for block in content:
                if type(block) is ToolUseBlock or type(block) is ServerToolUseBlock:
                    events.append(
                        self._call(block.id or "", block.name or "", block.input or {}, at)
                    )
                elif type(block) is TextBlock:
                    text = block.text
                    if text is not None and text.strip():
                        events.append(new_message(text, turn, at))
        elif content:
            events.append(new_message(content, self._turn, at))
        return events

    def _user_line(self, line: ClaudeLine) -> list[Event]:
        message = line.message
        if message is None:
            self.malformed += 1
            return []
        content = message.content
        if not isinstance(content, list):
            return []  # a prompt typed by a person, not a tool result
        clock = self._clock
        at = clock() if clock is not None else self._seconds(line.timestamp)
        return [
            self._result(
                block.tool_use_id or "",
                _result_text(block.content),
                block.is_error is True,
                at,
            )
            for block in content
            if type(block) is ToolResultBlock
        ]

    def _final(self, record: Mapping[str, Any]) -> Final:
        subtype = record.get("subtype")
        subtype = subtype if isinstance(subtype, str) else ""
        text = record.get("result")
        if not isinstance(text, str):
            errors = record.get("errors")
            text = "\n".join(map(str, errors)) if isinstance(errors, list) else ""
        cost = record.get("total_cost_usd")
        turns = record.get("num_turns")
        duration = record.get("duration_ms")
        duration_ms = as_float(duration)
        return Final(
            text=text,
            is_error=record.get("is_error") is True or subtype != "success",
            subtype=subtype,
            num_turns=turns if isinstance(turns, int) else None,
            cost_usd=as_float(cost),
            duration_ms=int(duration_ms) if duration_ms is not None else None,
            denials=_denials(record.get("permission_denials")),
            at=self._at(record),
        )


def _result_text(content: str | list[ResultPart] | None) -> str:
    """``flatten_text`` of a typed tool-result content."""
    if isinstance(content, str):
        return cap_text(content)
    if content is None:
        return ""
    return cap_text("\n".join([part.text for part in content if part.text is not None]))


def _denials(raw: Any) -> tuple[str, ...]:
    """``permission_denials`` of a result line as ``"<tool> <path or command>"`` names."""
    if not isinstance(raw, list):
        return ()
    names: list[str] = []
    for denial in raw:
        if not isinstance(denial, Mapping):
            continue
        tool = str(denial.get("tool_name") or "tool")
        tool_input = denial.get("tool_input")
        target = ""
        if isinstance(tool_input, Mapping):
            for key in ("file_path", "notebook_path", "command", "path", "url"):
                value = tool_input.get(key)
                if isinstance(value, str) and value:
                    target = value if len(value) <= 200 else value[:200] + "…"
                    break
        names.append(f"{tool} {target}".strip())
    return tuple(names)


def _exit_code(text: str) -> int | None:
    """The code of Claude Code's ``Exit code N`` first line of a failed Bash call."""
    if not text.startswith(_EXIT_CODE_PREFIX):
        return None
    digits = text[len(_EXIT_CODE_PREFIX) :].split("\n", 1)[0].strip()
    return int(digits) if digits.isascii() and digits.isdigit() else None
