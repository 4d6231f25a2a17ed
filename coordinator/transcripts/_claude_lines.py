"""Claude Code lines decoded straight into typed records.

The decoder walks a line in msgspec's C code and builds only the fields the Claude
parser reads. A line whose shape it does not know (a block type not listed here, a
field of an unexpected JSON type, a number out of range, text that is not JSON) is
refused with ``None``, and the parser then reads it as a plain decoded object, so a
refused line gives exactly the events it would give anyway. Each field's type is the
one the plain reading accepts; a value of any other type is what refuses the line.

The records are left out of the garbage collector's tracking (``gc=False``): a tree
decoded from JSON holds no reference cycles.
"""

from __future__ import annotations

from typing import Any

import msgspec

from seawall.codec import JsonObject, JsonView
from seawall.transcripts._common import as_int, cap_text

__all__ = [
    "CLAUDE_LINE_DECODER",
    "ClaudeLine",
    "LineMessage",
    "LineUsage",
    "ResultPart",
    "ServerToolUseBlock",
    "TextBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "claude_line",
    "decode_claude_line",
    "result_text",
]


class _Block(msgspec.Struct, tag_field="type", gc=False):
    """A content block, told apart by its ``type``."""


class TextBlock(_Block, tag="text"):
    text: str | None = None


class ToolUseBlock(_Block, tag="tool_use"):
    id: str | None = None
    name: str | None = None
    input: JsonObject | None = None


class ServerToolUseBlock(ToolUseBlock, tag="server_tool_use"):
    """A tool the API runs itself (web search); read as a tool call."""


class ResultPart(msgspec.Struct, gc=False):
    """An item of a list-valued tool result: only its ``text`` is kept."""

    text: str | None = None


class ToolResultBlock(_Block, tag="tool_result"):
    tool_use_id: str | None = None
    content: str | list[ResultPart] | None = None
    is_error: bool | None = None


class _ThinkingBlock(_Block, tag="thinking"):
    """Skipped unbuilt: the parser gives no event for thinking."""


class _RedactedThinkingBlock(_Block, tag="redacted_thinking"):
    """Skipped unbuilt."""


class _ImageBlock(_Block, tag="image"):
    """Skipped unbuilt (its base64 data is never copied out of the line)."""


Block = (
    TextBlock
    | ToolUseBlock
    | ServerToolUseBlock
    | ToolResultBlock
    | _ThinkingBlock
    | _RedactedThinkingBlock
    | _ImageBlock
)


class LineUsage(msgspec.Struct, gc=False):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class LineMessage(msgspec.Struct, gc=False):
    id: str | None = None
    model: str | None = None
    usage: LineUsage | None = None
    content: str | list[Block] | None = None


class ClaudeLine(msgspec.Struct, gc=False):
    """The fields of a line the parser reads; everything else is checked and skipped."""

    type: str | None = None
    message: LineMessage | None = None
    parent_tool_use_id: str | None = None
    timestamp: str | None = None
    is_meta: bool | None = msgspec.field(default=None, name="isMeta")


CLAUDE_LINE_DECODER = msgspec.json.Decoder(ClaudeLine)
"""Decodes a line into a ``ClaudeLine``; raises ``ValueError`` (msgspec's
``DecodeError``, ``ValidationError``) or ``RecursionError`` for a line it refuses."""


def decode_claude_line(line: str) -> ClaudeLine | None:
    """The typed record of ``line``, or None when the line needs the plain reading."""
    try:
        return CLAUDE_LINE_DECODER.decode(line)
    except (ValueError, RecursionError):  # msgspec's DecodeError and ValidationError
        return None


def result_text(content: str | list[ResultPart] | None) -> str:
    """The text of a tool result: its string, or its parts' texts one a line, capped."""
    if isinstance(content, str):
        return cap_text(content)
    if content is None:
        return ""
    return cap_text("\n".join([part.text for part in content if part.text is not None]))


def claude_line(kind: str, record: JsonView) -> ClaudeLine:
    """A plain decoded ``assistant`` or ``user`` record as the typed line the parser
    reads, with the plain reading's tolerance: a message that is not an object reads
    as absent, so do a block that is not one or of a type the parser does not read,
    and any field of an unexpected JSON type; ids and names are read as strings, and
    ``parent_tool_use_id`` only for whether it is set, ``isMeta`` only when true."""
    message = record.get("message")
    parent = record.get("parent_tool_use_id")
    stamp = record.get("timestamp")
    return ClaudeLine(
        type=kind,
        message=_message(message) if isinstance(message, dict) else None,
        parent_tool_use_id=str(parent) if parent else None,
        timestamp=stamp if isinstance(stamp, str) else None,
        is_meta=record.get("isMeta") is True,
    )


def _message(message: JsonView) -> LineMessage:
    message_id = message.get("id")
    model = message.get("model")
    usage = message.get("usage")
    content = message.get("content")
    blocks: str | list[Block] | None = None
    if isinstance(content, str):
        blocks = content
    elif isinstance(content, list):
        read = (_block(block) for block in content if isinstance(block, dict))
        blocks = [block for block in read if block is not None]
    return LineMessage(
        id=message_id if isinstance(message_id, str) else None,
        model=model if isinstance(model, str) else None,
        usage=_usage(usage) if isinstance(usage, dict) else None,
        content=blocks,
    )


def _usage(usage: JsonView) -> LineUsage:
    return LineUsage(
        input_tokens=as_int(usage.get("input_tokens")),
        output_tokens=as_int(usage.get("output_tokens")),
        cache_read_input_tokens=as_int(usage.get("cache_read_input_tokens")),
        cache_creation_input_tokens=as_int(usage.get("cache_creation_input_tokens")),
    )


def _block(block: JsonView) -> Block | None:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return TextBlock(text=text if isinstance(text, str) else None)
    if kind in ("tool_use", "server_tool_use"):
        arguments = block.get("input")
        return ToolUseBlock(
            id=str(block.get("id") or ""),
            name=str(block.get("name") or ""),
            input=arguments if isinstance(arguments, dict) else None,
        )
    if kind == "tool_result":
        return ToolResultBlock(
            tool_use_id=str(block.get("tool_use_id") or ""),
            content=_result_content(block.get("content")),
            is_error=block.get("is_error") is True,
        )
    return None


def _result_content(content: Any) -> str | list[ResultPart] | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return [
            ResultPart(text=part["text"])
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
    return None
