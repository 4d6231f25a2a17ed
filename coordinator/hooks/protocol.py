"""Claude Code's hook I/O: the documented JSON in, the documented decisions out.

- PreToolUse: exit 0 with ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": ...}}`` denies and shows the
  reason to the agent; ``additionalContext`` (no decision) tells the agent something
  and leaves the call to the normal permission flow. An allow says nothing: a hook
  ``"allow"`` would skip the user's permission prompts, which is not seawall's to do,
  except in a headless run seawall drives (``SEAWALL_PERMISSIONS=hook``, exported by
  the ``claude-code`` runner), where nobody could answer a prompt and seawall is the
  permission layer: there ``"permissionDecision": "allow"`` lets the call run.
- PostToolUse: ``{"decision": "block", "reason": ...}`` shows the reason to the agent
  (the tool already ran); ``hookSpecificOutput.additionalContext`` adds context.
- SubagentStop: ``{"decision": "block", "reason": ...}`` keeps the subagent going with
  the reason as its next instruction.
- Exit code 2 blocks with stderr shown to the agent: used when the guard itself fails,
  so a failure closes even if no JSON could be written. Other non-zero codes would let
  the call through, so the handlers never use them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TextIO

from seawall.codec import JsonObject, JsonView

__all__ = [
    "BLOCK_EXIT",
    "HookInputError",
    "HookResponse",
    "post_tool_use_block",
    "post_tool_use_context",
    "pre_tool_use_allow",
    "pre_tool_use_context",
    "pre_tool_use_deny",
    "read_payload",
    "subagent_stop_block",
]

BLOCK_EXIT = 2
_MAX_INPUT = 16 * 1024 * 1024


class HookInputError(ValueError):
    """The hook's stdin is not a JSON object."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HookResponse:
    """What the hook process prints and exits with."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""

    @classmethod
    def allow(cls) -> HookResponse:
        return cls()

    @classmethod
    def fail_closed(cls, message: str) -> HookResponse:
        return cls(exit_code=BLOCK_EXIT, stderr=message)


def read_payload(stream: TextIO) -> JsonObject:
    """The hook input object from ``stream``; raises ``HookInputError`` when it is not one."""
    text = stream.read(_MAX_INPUT + 1)
    if len(text) > _MAX_INPUT:
        raise HookInputError("the hook input is larger than 16 MiB")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookInputError(f"the hook input is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise HookInputError("the hook input is not a JSON object")
    return data


def _json(value: JsonView) -> str:
    return json.dumps(value, ensure_ascii=False) + "\n"


def pre_tool_use_deny(reason: str) -> HookResponse:
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    return HookResponse(stdout=_json(output))


def pre_tool_use_allow(message: str = "") -> HookResponse:
    """Allow the call without a prompt (seawall is the permission layer), with an
    optional note for the agent."""
    output: JsonObject = {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
    if message:
        output["additionalContext"] = message
    return HookResponse(stdout=_json({"hookSpecificOutput": output}))


def pre_tool_use_context(message: str) -> HookResponse:
    output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": message}}
    return HookResponse(stdout=_json(output))


def post_tool_use_block(reason: str) -> HookResponse:
    return HookResponse(stdout=_json({"decision": "block", "reason": reason}))


def post_tool_use_context(message: str) -> HookResponse:
    output = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": message}}
    return HookResponse(stdout=_json(output))


def subagent_stop_block(reason: str) -> HookResponse:
    return HookResponse(stdout=_json({"decision": "block", "reason": reason}))
