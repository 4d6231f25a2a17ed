"""Agent transcripts -> the normalized ``Event`` stream.

Reads Claude Code (stream-json and on-disk session/subagent files) and Codex
(``exec --json`` and rollout files) transcripts, and the logs of tools that wrap them
(lines prefixed ``[timestamp] [LEVEL] `` with JSON events inline or pretty-printed over
several lines).
Plain text and binary garbage give no events and never an exception.
"""

from __future__ import annotations

from seawall.transcripts.claude import SIBLING_ERROR_MARKER, ClaudeStreamParser
from seawall.transcripts.codex import CODEX_EVENT_TYPES, CodexJsonParser
from seawall.transcripts.codex_rollout import CodexRolloutParser
from seawall.transcripts.reader import (
    TranscriptFormat,
    TranscriptReader,
    parse_file,
    parse_lines,
    sniff_format,
)

__all__ = [
    "CODEX_EVENT_TYPES",
    "SIBLING_ERROR_MARKER",
    "ClaudeStreamParser",
    "CodexJsonParser",
    "CodexRolloutParser",
    "TranscriptFormat",
    "TranscriptReader",
    "parse_file",
    "parse_lines",
    "sniff_format",
]
