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

from seawall.codec import JsonView
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
from seawall.transcripts._claude_lines import (
    ClaudeLine,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    claude_line,
    decode_claude_line,
    result_text,
)
from seawall.transcripts._common import MAX_TEXT, RecordParser, as_float, iso_seconds

__all__ = ["REFUSAL_MARKERS", "SIBLING_ERROR_MARKER", "ClaudeStreamParser"]

SIBLING_ERROR_MARKER = "Sibling tool call errored"
"""Claude Code's text for a parallel call dropped because another call of its turn failed."""

REFUSAL_MARKERS = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action",
    "but you haven't granted it yet",
)
"""Claude Code's texts for a call the person (or its permission layer) refused."""

# user lines Claude Code writes itself, not a person: task notifications, a slash
# command's output, the summary a compaction starts the next context with
_NOT_HUMAN = (
    "<task-notification>",
    "<local-command-",
    "<system-reminder>",
    "This session is being continued from a previous conversation",
    "Stop hook feedback",
)

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
    - a ``HumanTurn`` for a prompt a person typed (a user line of text, not one Claude
      Code wrote itself: ``isMeta`` lines, task notifications, command output, hook
      feedback, a compaction's summary) and for a person interrupting the agent; a
      ``ToolResult`` the person refused (``The user doesn't want to proceed…``) is
      ``refused``;
    - a ``Final`` for the ``result`` line; it is an error when ``is_error`` is true or
      the subtype is not ``success`` (an API failure arrives as ``success`` + ``is_error``);
      the calls Claude Code's permission layer refused (``permission_denials``) are named
      in its ``denials``;
    - unknown line types are ignored (``ignored`` counts them); lines that are not a
      JSON object are ignored and counted in ``malformed``; nothing here raises on input.

    ``clock`` stamps events as they are parsed (live streams); without it an event
    carries its line's ``timestamp`` when there is one (files), else 0.0.

    Assistant and user lines are read in one way, from typed records (``ClaudeLine``):
    ``feed`` decodes a line straight into one; a line the typed decoder refuses, or a
    record given to ``feed_record`` already decoded, is read into the same record with
    the plain reading's tolerance (``claude_line``), so both give the same events.
    """

    __slots__ = (
        "_call_names",
        "_clock",
        "_stamp",
        "_stamp_seconds",
        "_turn",
        "_turn_ids",
        "_usage_ids",
        "ignored",
        "malformed",
        "model",
        "rate_limit",
        "session_id",
    )

    def __init__(self, *, clock: Callable[[], float] | None = None) -> None:
        self._clock = clock
        self._turn = 0
        self._turn_ids: set[str] = set()
        self._usage_ids: set[str] = set()
        self._call_names: dict[str, str] = {}
        self._stamp: object = None
        self._stamp_seconds = 0.0
        self.malformed = 0
        self.ignored = 0
        self.session_id: str | None = None
        self.model: str | None = None
        self.rate_limit: JsonView | None = None  # the last rate_limit_info

    def feed(self, line: str) -> list[Event]:
        """The events of one line (empty for blank, unknown or broken lines)."""
        typed = decode_claude_line(line)
        if typed is None or typed.type in ("result", "system", "rate_limit_event"):
            return super().feed(line)
        return self.feed_line(typed)

    def feed_record(self, record: JsonView) -> list[Event]:
        """The events of one decoded line."""
        kind = record.get("type")
        if kind == "assistant" or kind == "user":
            return self.feed_line(claude_line(kind, record))
        if kind == "result":
            return [self._final(record)]
        if kind == "system" and record.get("subtype") == "init":
            return self._init(record)
        if kind == "rate_limit_event":
            info = record.get("rate_limit_info")
            self.rate_limit = info if isinstance(info, Mapping) else None
            return []
        self.ignored += 1
        return []

    def feed_line(self, line: ClaudeLine) -> list[Event]:
        """The events of a typed line (``decode_claude_line``, ``claude_line``) whose
        ``type`` is neither ``result`` nor ``system`` (those are read whole by
        ``feed_record``)."""
        kind = line.type
        if kind == "assistant":
            return self._assistant(line)
        if kind == "user":
            return self._user(line)
        self.ignored += 1
        return []

    def finish(self) -> list[Event]:
        """Events owed at the end of the stream (none for Claude Code: ``result`` is final)."""
        return []

    def _at(self, stamp: object) -> float:
        """The time of a line: the clock's, else its ``timestamp`` (the lines of one
        message share theirs, so the last one read is kept)."""
        if self._clock is not None:
            return self._clock()
        if stamp is None:
            return 0.0
        if stamp != self._stamp:
            self._stamp = stamp
            self._stamp_seconds = iso_seconds(stamp)
        return self._stamp_seconds

    def _init(self, record: JsonView) -> list[Event]:
        """The run's first line: its model, and its session (a ``Conversation``)."""
        session = record.get("session_id")
        model = record.get("model")
        self.session_id = session if isinstance(session, str) and session else None
        self.model = model if isinstance(model, str) else None
        if self.session_id is None:
            return []
        at = 0.0 if self._clock is None else self._clock()
        return [Conversation(id=self.session_id, at=at)]

    def _assistant(self, line: ClaudeLine) -> list[Event]:
        message = line.message
        if message is None:
            self.malformed += 1
            return []
        stamp = line.timestamp
        at = 0.0 if stamp is None and self._clock is None else self._at(stamp)
        events: list[Event] = []
        key = message.id or None
        # a nested subagent's message (``parent_tool_use_id``) gives its calls, no turn
        if not line.parent_tool_use_id and (key is None or key not in self._turn_ids):
            self._turn += 1
            events.append(Turn(number=self._turn, at=at))
            if key is not None:
                self._turn_ids.add(key)
        turn = self._turn
        usage = message.usage
        if usage is not None:
            usage_key = key or f"turn-{turn}-line-{len(self._usage_ids)}"
            if usage_key not in self._usage_ids:
                self._usage_ids.add(usage_key)
                events.append(
                    Usage(
                        message_id=usage_key,
                        model=message.model or "",
                        input_tokens=usage.input_tokens,
                        output_tokens=usage.output_tokens,
                        cache_read_tokens=usage.cache_read_input_tokens,
                        cache_write_tokens=usage.cache_creation_input_tokens,
                        at=at,
                    )
                )
        content = message.content
        if isinstance(content, list):
            for block in content:
                if isinstance(block, ToolUseBlock):  # or its subclass, a server tool
                    call_id = block.id or ""
                    name = block.name or ""
                    self._call_names[call_id] = name
                    arguments = block.input or {}
                    call = ToolCall(
                        call_id=call_id, name=name, arguments=arguments, turn=turn, at=at
                    )
                    events.append(call)
                elif isinstance(block, TextBlock):
                    text = block.text
                    if text is not None and text.strip():
                        events.append(Message(text=text, turn=turn, at=at))
        elif content:
            events.append(Message(text=content, turn=turn, at=at))
        return events

    def _user(self, line: ClaudeLine) -> list[Event]:
        message = line.message
        if message is None:
            self.malformed += 1
            return []
        content = message.content
        stamp = line.timestamp
        if not isinstance(content, list):  # a prompt typed by a person, not a tool result
            return self._human(line, content or "", stamp)
        at = 0.0 if stamp is None and self._clock is None else self._at(stamp)
        events: list[Event] = []
        spoke = False
        for block in content:
            if type(block) is not ToolResultBlock:
                if type(block) is TextBlock and block.text and not spoke:
                    said = self._human(line, block.text, stamp)
                    spoke = bool(said)
                    events.extend(said)
                continue
            call_id = block.tool_use_id or ""
            name = self._call_names.pop(call_id, None)
            text = block.content  # short text as is: the common case, without a call
            if type(text) is not str or len(text) > MAX_TEXT:
                text = result_text(block.content)
            if block.is_error is True:
                result = ToolResult(
                    call_id=call_id,
                    is_error=True,
                    text=text,
                    name=name,
                    exit_code=_exit_code(text) if name == "Bash" else None,
                    cancelled=SIBLING_ERROR_MARKER in text,
                    refused=_refused(text),
                    at=at,
                )
            else:
                result = ToolResult(call_id=call_id, text=text, name=name, at=at)
            events.append(result)
        return events

    def _human(self, line: ClaudeLine, text: str, stamp: str | None) -> list[Event]:
        """A ``HumanTurn`` for a person's prompt; nothing for a line Claude Code wrote."""
        if line.is_meta or line.parent_tool_use_id or text.lstrip().startswith(_NOT_HUMAN):
            return []
        at = 0.0 if stamp is None and self._clock is None else self._at(stamp)
        return [HumanTurn(text=text[:MAX_TEXT], at=at)]

    def _final(self, record: JsonView) -> Final:
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
            limit=claude_limit(record, self.rate_limit, text),
            at=self._at(record.get("timestamp")),
        )


def claude_limit(result: JsonView, info: JsonView | None, text: str) -> ProviderLimit | None:
    """The provider limit that ended a Claude Code run, from its ``result`` line and
    the last ``rate_limit_event`` before it; None for any other ending.

    A subscriber at the usage limit gets a ``rate_limit_event`` whose
    ``rate_limit_info.status`` is ``rejected`` (with ``resetsAt``, epoch seconds), then
    a ``result`` with ``is_error`` and ``api_error_status`` 429; an API key user gets
    the ``result`` alone, 429 (rate limit) or 529 (overloaded), after the CLI's own
    retries."""
    if result.get("is_error") is not True:
        return None
    status = result.get("api_error_status")
    rejected = info is not None and info.get("status") == "rejected"
    if rejected and info is not None and status in (429, None):
        resets = as_float(info.get("resetsAt"))
        return ProviderLimit(kind=LimitKind.USAGE, resets_at=resets, detail=text[:300])
    if status == 429:
        return ProviderLimit(kind=LimitKind.RATE, detail=text[:300])
    if status == 529:
        return ProviderLimit(kind=LimitKind.OVERLOADED, detail=text[:300])
    return None


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


def _refused(text: str) -> bool:
    """Whether a failed call's text is a refusal of the call, not its failure."""
    head = text[:300]
    return any(marker in head for marker in REFUSAL_MARKERS)


def _exit_code(text: str) -> int | None:
    """The code of Claude Code's ``Exit code N`` first line of a failed Bash call."""
    if not text.startswith(_EXIT_CODE_PREFIX):
        return None
    digits = text[len(_EXIT_CODE_PREFIX) :].split("\n", 1)[0].strip()
    return int(digits) if digits.isascii() and digits.isdigit() else None
