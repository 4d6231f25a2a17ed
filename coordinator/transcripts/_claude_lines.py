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

__all__ = [
    "ClaudeLine",
    "LineMessage",
    "LineUsage",
    "ResultPart",
    "ServerToolUseBlock",
    "TextBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "decode_claude_line",
]


class _Block(msgspec.Struct, tag_field="type", gc=False):
    """A content block, told apart by its ``type``."""


class TextBlock(_Block, tag="text"):
    text: str | None = None


class ToolUseBlock(_Block, tag="tool_use"):
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None


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


_decode = msgspec.json.Decoder(ClaudeLine).decode


def decode_claude_line(line: str) -> ClaudeLine | None:
    """The typed record of ``line``, or None when the line needs the plain reading."""
    try:
        return _decode(line)
    except (ValueError, RecursionError):  # msgspec's DecodeError and ValidationError
        return None
