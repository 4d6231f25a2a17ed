"""The ``opencode`` runner: opencode's non-interactive ``run`` mode as an agent.

Runs ``opencode run --format json [--model PROVIDER/MODEL] [extra args]`` in the
agent's workspace with the prompt on stdin (``run`` reads it from there when no message
is given), and reads the JSON lines it prints: ``step_start`` (one model response: a
turn), ``text``, ``tool_use`` (a finished tool call with its input and output),
``step_finish`` (the step's tokens and cost, and why it ended) and ``error``. opencode
prints no result line: the run's final text is its last text, and a run whose last
step did not end the conversation (killed mid-work) has none, so it is an error.

opencode's tools (``write``, ``edit``, ``read``, ``bash`` ... with ``filePath`` keys)
are mapped to seawall's canonical ones (``OPENCODE_TOOLS``). Its own permission layer
refuses edits outside the workspace in a headless run; seawall's OS sandbox (the
request's policy) is the barrier for everything else, and the runner grants it
opencode's state directories (``opencode`` under ``$XDG_DATA_HOME``, ``$XDG_STATE_HOME``,
``$XDG_CONFIG_HOME`` and ``$XDG_CACHE_HOME``). The model provider is opencode's own
configuration (``opencode.json``, or ``OPENCODE_CONFIG_CONTENT`` in the runner's
``env``), for example an OpenAI-compatible endpoint::

    {"provider": {"local": {"npm": "@ai-sdk/openai-compatible",
                            "options": {"baseURL": "http://127.0.0.1:8000/v1"},
                            "models": {"coder": {}}}},
     "model": "local/coder"}

A session continues with ``opencode run --session <id>`` (``request.conversation``, the
``sessionID`` its lines name, given as a ``Conversation`` event).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from seawall.adapters.runners.streaming import LineParser, StreamingCliRunner, Tool, ToolNames
from seawall.codec import JsonView
from seawall.events import (
    Conversation,
    Event,
    Final,
    LimitKind,
    Message,
    ProviderLimit,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
)
from seawall.runner import AgentRequest

__all__ = ["OPENCODE_TOOLS", "OpenCodeJsonParser", "OpenCodeRunner"]

_PATH = {"filePath": "file_path"}
OPENCODE_TOOLS = ToolNames(
    {
        "write": Tool("Write", _PATH),
        "edit": Tool(
            "Edit",
            {**_PATH, "oldString": "old_string", "newString": "new_string"},
        ),
        "multiedit": Tool("MultiEdit", _PATH),
        "read": Tool("Read", _PATH),
        "bash": Tool("Bash"),
        "glob": Tool("Glob"),
        "grep": Tool("Grep"),
        "list": Tool("LS"),
        "task": Tool("Task"),
    },
    read_only=frozenset(
        {"todowrite", "todoread", "webfetch", "websearch", "codesearch", "skill", "question"}
    ),
)
"""opencode's built-in tools in seawall's terms."""

_ENDS_CONVERSATION = frozenset({"stop", "length", "content-filter", "end_turn"})
_QUIET = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1"}


class OpenCodeRunner(StreamingCliRunner):
    """opencode CLI runner. Plan table::

    [runners.oc]
    kind = "opencode"
    model = "local/coder"                     # PROVIDER/MODEL, as opencode names it
    argv = ["--agent", "build"]               # extra arguments, appended
    options = { executable = "opencode", kill_grace = 2 }
    """

    default_executable: ClassVar[str] = "opencode"

    @property
    def continues_conversations(self) -> bool:
        return True

    tool_names: ClassVar[ToolNames] = OPENCODE_TOOLS

    @property
    def provider(self) -> str:
        """The provider part of ``provider/model`` (``opencode`` without a model)."""
        provider, slash, _ = (self.model or "").partition("/")
        return provider if slash else "opencode"

    @property
    def barrier(self) -> str:
        return "seawall's OS sandbox (opencode refuses edits outside the workspace)"

    def argv(self, request: AgentRequest) -> list[str]:
        argv = [self.executable, "run", "--format", "json"]
        if model := self.model_for(request):
            argv += ["--model", model]
        if request.conversation:
            argv += ["--session", request.conversation]
        return [*argv, *self.extra_args]

    def parser(self) -> LineParser:
        return OpenCodeJsonParser(model=self.model or "")

    def environment(self, request: AgentRequest) -> dict[str, str]:
        """No self-update and no language-server downloads in a headless run."""
        return {**_QUIET, **super().environment(request)}

    def state_paths(self, env: Mapping[str, str]) -> tuple[Path, ...]:
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        roots = (
            env.get("XDG_DATA_HOME") or home / ".local" / "share",
            env.get("XDG_STATE_HOME") or home / ".local" / "state",
            env.get("XDG_CONFIG_HOME") or home / ".config",
            env.get("XDG_CACHE_HOME") or home / ".cache",
        )
        return tuple(Path(root) / "opencode" for root in roots)


class OpenCodeJsonParser:
    """``opencode run --format json`` lines to events (see the module docstring)."""

    def __init__(self, *, model: str = "") -> None:
        self._model = model
        self._turn = 0
        self._last_text = ""
        self._ended = False  # the last step ended the conversation
        self._error: str | None = None
        self._limit: ProviderLimit | None = None
        self.session_id = ""

    def feed(self, line: str) -> list[Event]:
        try:
            data = json.loads(line)
        except ValueError:
            return []  # a plain line (a warning) between the JSON ones
        if not isinstance(data, dict):
            return []
        return [*self._conversation(data.get("sessionID")), *self._record(data)]

    def _record(self, data: dict[str, object]) -> list[Event]:
        """The events of one decoded line."""
        part = data.get("part")
        part = part if isinstance(part, dict) else {}
        kind = data.get("type")
        if kind == "step_start":
            self._turn += 1
            self._ended = False
            return [Turn(number=self._turn)]
        if kind == "text":
            text = str(part.get("text") or "")
            if not text.strip():
                return []
            self._last_text = text
            return [Message(text=text, turn=self._turn)]
        if kind == "tool_use":
            return self._tool(part)
        if kind == "step_finish":
            return self._step_finish(part)
        if kind == "error":
            self._error = _error_text(data.get("error"))
            self._limit = opencode_limit(data.get("error"), self._error)
        return []

    def _conversation(self, session: object) -> list[Event]:
        """A ``Conversation`` the first time a line names the session (then nothing)."""
        if not isinstance(session, str) or not session or session == self.session_id:
            return []
        self.session_id = session
        return [Conversation(id=session)]

    def finish(self) -> list[Event]:
        if self._error is not None:
            text = self._error or "opencode reported an error"
            return [
                Final(
                    text=text,
                    is_error=True,
                    subtype="error",
                    num_turns=self._turn,
                    limit=self._limit,
                )
            ]
        if not self._ended:
            return []  # stopped mid-work: no final answer
        return [Final(text=self._last_text, subtype="success", num_turns=self._turn)]

    def _tool(self, part: JsonView) -> list[Event]:
        state = part.get("state")
        state = state if isinstance(state, dict) else {}
        call_id = str(part.get("callID") or part.get("id") or "")
        name = str(part.get("tool") or "")
        arguments = state.get("input")
        call = ToolCall(
            call_id=call_id,
            name=name,
            arguments=arguments if isinstance(arguments, dict) else {},
            turn=self._turn,
        )
        metadata = state.get("metadata")
        code = metadata.get("exit") if isinstance(metadata, dict) else None
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        failed = state.get("status") == "error" or (exit_code not in (None, 0))
        text = state.get("error") if state.get("status") == "error" else state.get("output")
        result = ToolResult(
            call_id=call_id,
            name=name,
            is_error=failed,
            exit_code=exit_code,
            text=str(text or ""),
        )
        return [call, result]

    def _step_finish(self, part: JsonView) -> list[Event]:
        self._ended = part.get("reason") in _ENDS_CONVERSATION
        tokens = part.get("tokens")
        tokens = tokens if isinstance(tokens, dict) else {}
        cache = tokens.get("cache")
        cache = cache if isinstance(cache, dict) else {}
        cost = part.get("cost")
        return [
            Usage(
                message_id=str(part.get("id") or ""),
                model=self._model,
                input_tokens=_count(tokens.get("input")),
                output_tokens=_count(tokens.get("output")) + _count(tokens.get("reasoning")),
                cache_read_tokens=_count(cache.get("read")),
                cache_write_tokens=_count(cache.get("write")),
                cost_usd=float(cost) if isinstance(cost, int | float) else 0.0,
            )
        ]


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _error_text(error: object) -> str:
    """The message of opencode's ``{"name": ..., "data": {"message": ...}}`` error."""
    if isinstance(error, dict):
        data = error.get("data")
        if isinstance(data, dict) and isinstance(data.get("message"), str):
            return str(data["message"])
        for key in ("message", "name"):
            if isinstance(error.get(key), str):
                return str(error[key])
    return str(error or "")


def opencode_limit(error: object, text: str) -> ProviderLimit | None:
    """The provider limit of opencode's ``APIError`` (``data.statusCode`` 429: a rate
    or usage limit, 529: overloaded; a ``retry-after`` header gives the reset), after
    opencode's own retries; None for any other error."""
    data = error.get("data") if isinstance(error, dict) else None
    if not isinstance(data, dict):
        return None
    status = data.get("statusCode")
    headers = data.get("responseHeaders")
    after = headers.get("retry-after") if isinstance(headers, dict) else None
    resets = None
    if isinstance(after, str) and after.strip().isdigit():
        resets = time.time() + int(after.strip())
    if status == 429:
        usage = "usage limit" in text.lower()
        kind = LimitKind.USAGE if usage else LimitKind.RATE
        return ProviderLimit(kind=kind, resets_at=resets, detail=text[:300])
    if status == 529:
        return ProviderLimit(kind=LimitKind.OVERLOADED, resets_at=resets, detail=text[:300])
    return None
