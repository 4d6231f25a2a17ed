"""Codex rollout files -> normalized events.

``codex exec --json`` leaves out what the detectors and breakers most need: an
``apply_patch`` that fails verification gives no event at all, a ``write_stdin`` poll
gives none, and the usage of many model responses arrives as one total at the end.
Codex writes every model response to its rollout file
(``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``) as it goes, so
the ``codex`` runner follows that file live and takes the tool calls, results, turns and
usage from it; the ``--json`` stream then only gives the end of the run.

Lines are ``{"timestamp", "type", "payload"}``. Read here:

- ``response_item`` with payload ``function_call`` (``exec_command``, ``write_stdin``,
  ``shell``, MCP tools ...) or ``custom_tool_call`` (``apply_patch``, its input the
  patch text) -> ``ToolCall``; ``function_call_output`` / ``custom_tool_call_output``
  -> ``ToolResult``, an error when the command exited non-zero (``Process exited with
  code N``, ``Exit code: N``) or the tool itself failed or refused the call
  (``... failed: ...``, ``patch rejected: ...``, ``unsupported call: ...``);
- a shell call that applies a patch (``apply_patch <<'PATCH'``, the form Codex gives a
  model it does not know, see ``seawall.transcripts.codex_patch``) is the edit it is:
  a ``ToolCall`` named ``apply_patch`` with the patch as ``input`` and its files as
  ``changes``, like the tool's; its result is the edit's;
- ``event_msg`` ``item_completed`` of a ``FileChange`` (Codex applied a patch): a patch
  the call already showed is not shown twice, but its ``failed`` or ``declined`` status
  makes the call's result an error; a change no call showed is a ``file_change`` call
  and its result;
- ``response_item`` ``message`` of the assistant -> ``Message``;
- a person's word -> ``HumanTurn``: ``event_msg`` ``user_message`` (what the person
  typed; not the context Codex sends as a user message itself: ``kind`` other than
  ``plain``, ``<environment_context>``, ``<user_instructions>``, AGENTS.md
  instructions, ``<turn_aborted>``, ``<user_shell_command>`` …) and ``event_msg``
  ``turn_aborted`` with reason ``interrupted`` (the person stopped the turn);
- a call the person (or the approval settings) would not let run is ``refused``: its
  output is ``exec command rejected by user``, ``patch rejected by user`` or ``…
  rejected by user approval settings``, or its ``FileChange`` was ``declined``;
- a ``Turn`` at the first model item after a tool output (one per model response);
- ``token_usage_record`` -> ``Usage`` per response (``response_id``), input split
  into uncached input and cache reads as for the stream.

Everything else (session metadata, developer messages and the user-role messages that
repeat what ``user_message`` says, world state, other event messages) is ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from seawall.codec import JsonObject, JsonView
from seawall.events import Event, HumanTurn, Message, ToolCall, ToolResult, Turn, Usage
from seawall.transcripts._common import MAX_TEXT, RecordParser, as_int, cap_text
from seawall.transcripts.codex_patch import patch_changes, shell_patch, shell_patch_of

__all__ = [
    "CODEX_REFUSAL",
    "NOT_HUMAN_PREFIXES",
    "ROLLOUT_RECORD_TYPES",
    "CodexRolloutParser",
    "codex_refused",
    "patch_changes",
]

ROLLOUT_RECORD_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "turn_context",
        "event_msg",
        "token_usage_record",
        "world_state",
        "compacted",
    }
)
"""The record types of a rollout file (each line carries a ``payload``)."""

_EXIT = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_FAILED = re.compile(r"^[\w ]{0,40}(?:failed|error|rejected|unsupported call)\b[:.]", re.IGNORECASE)
_SHELL_CALLS = frozenset({"exec_command", "shell", "local_shell_call"})
_PATCH_FAILED = frozenset({"failed", "declined"})
CODEX_REFUSAL = re.compile(
    r"^(?:exec command |patch )?rejected by user\b|rejected by user approval settings"
)
"""Codex's answers to a call the person (or the approval settings) refused: ``exec
command rejected by user``, ``patch rejected by user``, ``writing outside of the
project; rejected by user approval settings``."""
NOT_HUMAN_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<codex_internal_context",
    "# AGENTS.md instructions",
)
"""User-role texts Codex writes itself (context, instructions, notices), not a person."""
_HUMAN_KINDS = frozenset({"", "plain"})  # ``user_message`` ``kind`` of older Codex versions
_INTERRUPTED = "[the person interrupted the turn]"


def codex_refused(text: str) -> bool:
    """Whether a call's output is Codex saying the call was refused, not run."""
    return CODEX_REFUSAL.search(text[:300].lstrip()) is not None


class CodexRolloutParser(RecordParser):
    """Turns Codex rollout lines into ``Event``s, one rollout file per instance.

    ``model`` names the model for pricing (a ``turn_context`` line names it too, and
    wins). ``clock`` stamps events as they are parsed.
    """

    __slots__ = (
        "_clock",
        "_declined_patches",
        "_failed_patches",
        "_names",
        "_need_turn",
        "_patches",
        "_turn",
        "_usage_ids",
        "ignored",
        "malformed",
        "model",
    )

    def __init__(self, *, clock: Callable[[], float] | None = None, model: str = "") -> None:
        self._clock = clock
        self._turn = 0
        self._need_turn = True
        self._names: dict[str, str] = {}
        self._usage_ids: set[str] = set()
        self._patches: set[str] = set()  # call ids of the patches seen (tool or shell)
        self._failed_patches: set[str] = set()  # ... whose FileChange failed, until answered
        self._declined_patches: set[str] = set()  # ... whose FileChange was declined
        self.model = model
        self.malformed = 0
        self.ignored = 0

    def feed_record(self, record: JsonView) -> list[Event]:
        """The events of one decoded line."""
        kind = record.get("type")
        payload = record.get("payload")
        if not isinstance(payload, Mapping):
            self.ignored += 1
            return []
        if kind == "response_item":
            return self._item(payload)
        if kind == "token_usage_record":
            return self._usage(payload)
        if kind == "event_msg":
            message = payload.get("type")
            if message == "item_completed":
                item = payload.get("item")
                if isinstance(item, Mapping) and item.get("type") == "FileChange":
                    return self._file_change(item)
            elif message == "user_message":
                return self._human(payload)
            elif message == "turn_aborted" and payload.get("reason") == "interrupted":
                return [HumanTurn(text=_INTERRUPTED, at=self._now())]
        if kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model:
                self.model = model
        self.ignored += 1
        return []

    def finish(self) -> list[Event]:
        """Nothing is owed at the end of a rollout file."""
        return []

    def _now(self) -> float:
        return self._clock() if self._clock is not None else 0.0

    def _human(self, payload: JsonView) -> list[Event]:
        """A ``HumanTurn`` for what a person typed; nothing for context Codex sent."""
        text = payload.get("message")
        kind = payload.get("kind")
        if not isinstance(text, str) or (isinstance(kind, str) and kind not in _HUMAN_KINDS):
            return []
        if text.lstrip().startswith(NOT_HUMAN_PREFIXES):
            return []
        self._need_turn = True  # the model's next item answers the person
        return [HumanTurn(text=text[:MAX_TEXT], at=self._now())]

    def _turn_event(self, events: list[Event], at: float) -> None:
        if self._need_turn:
            self._need_turn = False
            self._turn += 1
            events.append(Turn(number=self._turn, at=at))

    def _item(self, item: JsonView) -> list[Event]:
        kind = item.get("type")
        at = self._now()
        events: list[Event] = []
        if kind in _CALLS:
            self._turn_event(events, at)
            events.append(self._call(item, at))
        elif kind in _OUTPUTS:
            self._need_turn = True
            events.append(self._patch_result(self._result(item, at)))
        elif kind == "message" and item.get("role") == "assistant":
            text = _message_text(item.get("content"))
            if text:
                self._turn_event(events, at)
                events.append(Message(text=text, turn=self._turn, at=at))
        elif kind == "reasoning":
            self._turn_event(events, at)
        return events

    def _call(self, item: JsonView, at: float) -> ToolCall:
        call_id = str(item.get("call_id") or item.get("id") or "")
        name = str(item.get("name") or item.get("type") or "")
        raw = item.get("input") if item.get("type") == "custom_tool_call" else None
        arguments: JsonObject = (
            {"input": raw} if isinstance(raw, str) else _json_object(item.get("arguments"))
        )
        if name == "apply_patch":
            patch = arguments.get("input") or arguments.get("patch") or ""
            arguments["changes"] = patch_changes(str(patch))
        command = arguments.get("cmd")
        if isinstance(command, str) and "command" not in arguments:
            arguments["command"] = command
        if name in _SHELL_CALLS:
            name, arguments = _shell_patch(name, arguments, item)
        if name == "apply_patch":
            self._patches.add(call_id)
        self._names[call_id] = name
        return ToolCall(call_id=call_id, name=name, arguments=arguments, turn=self._turn, at=at)

    def _result(self, item: JsonView, at: float) -> ToolResult:
        call_id = str(item.get("call_id") or "")
        name = self._names.pop(call_id, None)
        text = _output_text(item.get("output"))
        match = _EXIT.search(text[:400])
        exit_code = int(match.group(1)) if match else None
        refused = exit_code is None and codex_refused(text)
        failed = refused or exit_code not in (None, 0) or bool(_FAILED.match(text))
        return ToolResult(
            call_id=call_id,
            name=name,
            is_error=failed,
            text=cap_text(text),
            exit_code=exit_code,
            refused=refused,
            at=at,
        )

    def _patch_result(self, result: ToolResult) -> ToolResult:
        """A patch's result is an error when Codex reported the patch failed, whatever
        the output says, and refused when the patch was declined."""
        if result.call_id in self._failed_patches:
            self._failed_patches.discard(result.call_id)
            declined = result.call_id in self._declined_patches
            self._declined_patches.discard(result.call_id)
            if not result.is_error or (declined and not result.refused):
                return replace(result, is_error=True, refused=result.refused or declined)
        return result

    def _file_change(self, item: JsonView) -> list[Event]:
        """A ``FileChange`` Codex completed: the status of a patch a call showed, or, for
        a change no call showed, the ``file_change`` edit and its result."""
        call_id = str(item.get("id") or "")
        failed = item.get("status") in _PATCH_FAILED
        declined = item.get("status") == "declined"
        if call_id in self._patches:
            if failed:
                self._failed_patches.add(call_id)
            if declined:
                self._declined_patches.add(call_id)
            return []
        at = self._now()
        changed = item.get("changes")
        changes: list[dict[str, str]] = []
        for path, change in changed.items() if isinstance(changed, Mapping) else ():
            detail = change if isinstance(change, Mapping) else {}
            changes.append({"path": str(path), "kind": str(detail.get("type") or "update")})
            moved = detail.get("move_path")
            if isinstance(moved, str) and moved:
                changes.append({"path": moved, "kind": "move"})
        own_id = f"{call_id}:file_change"
        output = "\n".join(
            text for text in (item.get("stdout"), item.get("stderr")) if isinstance(text, str)
        )
        return [
            ToolCall(
                call_id=own_id,
                name="file_change",
                arguments={"changes": changes},
                turn=self._turn,
                at=at,
            ),
            ToolResult(
                call_id=own_id,
                name="file_change",
                is_error=failed,
                text=cap_text(output),
                refused=declined,
                at=at,
            ),
        ]

    def _usage(self, payload: JsonView) -> list[Event]:
        usage = payload.get("usage")
        response = str(payload.get("response_id") or f"response-{len(self._usage_ids)}")
        if not isinstance(usage, Mapping) or response in self._usage_ids:
            return []
        self._usage_ids.add(response)
        cached = as_int(usage.get("cached_input_tokens"))
        written = as_int(usage.get("cache_write_input_tokens"))
        return [
            Usage(
                message_id=response,
                model=self.model,
                input_tokens=max(0, as_int(usage.get("input_tokens")) - cached - written),
                output_tokens=as_int(usage.get("output_tokens")),
                cache_read_tokens=cached,
                cache_write_tokens=written,
                at=self._now(),
            )
        ]


def _shell_patch(name: str, arguments: JsonObject, item: JsonView) -> tuple[str, JsonObject]:
    """A shell call that applies a patch, as the ``apply_patch`` edit it is; any
    other shell call as it is."""
    action = item.get("action")  # a ``local_shell_call`` carries its argv here
    if isinstance(action, Mapping) and isinstance(action.get("command"), list):
        workdir = action.get("working_directory")
        patch = shell_patch(
            [str(word) for word in action["command"]],
            workdir if isinstance(workdir, str) else "",
        )
    else:
        patch = shell_patch_of(arguments)
    if patch is None:
        return name, arguments
    return "apply_patch", patch.arguments(arguments)


def _json_object(raw: Any) -> JsonObject:
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            return {"raw": raw}
        return dict(value) if isinstance(value, dict) else {"raw": raw}
    return {}


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping):
        content = output.get("content")
        return content if isinstance(content, str) else json.dumps(output)[:4000]
    if isinstance(output, list):
        return _message_text(output)
    return ""


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        str(block.get("text"))
        for block in content
        if isinstance(block, Mapping) and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)
