"""Which seawall task a lead's subagent is, without environment variables.

A lead agent dispatches its subagents with its own tool (Claude Code's Agent tool), so
it cannot set ``SEAWALL_TASK_ID`` for them. Claude Code gives every hook call a
subagent makes its ``agent_id`` (and ``agent_type``) beside the lead's
``transcript_path``, and writes the subagent's own transcript to
``<transcript without .jsonl>/subagents/agent-<agent_id>.jsonl``, whose first user
message is the prompt the lead gave it. seawall's prompts open with the identity line
``seawall session <s>, wave <n>, task <t>.``; the task is read from there on every
call (a bounded read of the transcript's first lines), so the hooks keep no mapping of
their own and stay stateless. Only the first user message counts: text the subagent
later reads or writes cannot change who it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["IDENTITY_LINE", "Identity", "subagent_identity", "subagent_transcript"]

IDENTITY_LINE = re.compile(
    r"^seawall session (?P<session>[^\s,]+), wave (?P<wave>[1-9][0-9]{0,8}), "
    r"task (?P<task>\S+?)\.(?:\s|$)",
    re.MULTILINE,
)
_AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_HEAD_BYTES = 1024 * 1024  # the prompt is in the first lines; never read a whole transcript
_HEAD_LINES = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class Identity:
    """The seawall task a subagent was dispatched for, and the Claude Code id it runs as."""

    session: str
    wave: int
    task: str
    agent_id: str


def subagent_transcript(payload: Mapping[str, object]) -> Path | None:
    """The subagent's transcript for a call carrying ``agent_id``; None for the lead's
    own calls (no ``agent_id``) or a payload whose fields are not the documented shape."""
    agent_id = payload.get("agent_id")
    transcript = payload.get("transcript_path")
    if not isinstance(agent_id, str) or not _AGENT_ID.fullmatch(agent_id):
        return None
    if not isinstance(transcript, str) or not transcript.endswith(".jsonl"):
        return None
    lead = Path(transcript)
    if not lead.is_absolute():
        return None
    return lead.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"


def subagent_identity(payload: Mapping[str, object]) -> Identity | None:
    """The identity line of the subagent making this call, or None when the call is the
    lead's, the transcript is not there yet, or its prompt is not one of seawall's."""
    path = subagent_transcript(payload)
    if path is None:
        return None
    prompt = _first_prompt(path)
    match = IDENTITY_LINE.search(prompt) if prompt else None
    if match is None:
        return None
    return Identity(
        session=match["session"],
        wave=int(match["wave"]),
        task=match["task"],
        agent_id=str(payload["agent_id"]),
    )


def _first_prompt(path: Path) -> str:
    """The text of the first user message in the transcript at ``path`` ("" if none)."""
    try:
        with path.open("rb") as stream:
            head = stream.read(_HEAD_BYTES)
    except OSError:
        return ""
    for raw in head.splitlines()[:_HEAD_LINES]:
        try:
            entry = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(entry, dict) or entry.get("type") != "user":
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        return _text(content)
    return ""


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""
