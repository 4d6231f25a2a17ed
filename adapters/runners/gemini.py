"""The ``gemini`` runner: Gemini CLI's headless mode as an agent.

Runs ``gemini -p "" --output-format stream-json --yolo --skip-trust [--model MODEL]
[extra args]`` in the agent's workspace with the prompt on stdin (``-p`` appends its
text to stdin's, and an empty one makes the run headless), and reads the JSON lines it
prints: ``init`` (the session id and model), ``message`` (the user's prompt, then the
model's text in streamed pieces marked ``delta``), ``tool_use`` and ``tool_result``
(one call and its outcome, paired by ``tool_id``) and one ``result`` at the end (the
run's status and token counts, an ``error`` when it failed).

The CLI marks no turn: a turn starts with the model's first text or call after the
start or after a tool result, and its streamed pieces are joined into one ``Message``
when the turn's text ends (at a call, a result or the end). The final text is the last
turn's text. A shell command's exit code is read from its result ("Command exited with
code: N"): a non-zero one is a failed call. Token counts come once, in the result:
``input_tokens`` less ``cached`` is the uncached input.

Gemini's tools (``write_file``, ``replace``, ``read_file``, ``run_shell_command``...,
with ``file_path`` and ``dir_path`` keys) are mapped to seawall's canonical ones
(``GEMINI_TOOLS``). Gemini refuses paths outside its workspace by itself; seawall's OS
sandbox (the request's policy) is the barrier for everything else, and the runner grants
it the CLI's state directory (``~/.gemini``). The model provider is the CLI's own
configuration: ``GEMINI_API_KEY`` in the runner's ``env`` and
``security.auth.selectedType = "gemini-api-key"`` in its settings (a gateway or a local
server: ``GOOGLE_GEMINI_BASE_URL``).

A provider's limit: the CLI retries a 429 itself (``general.maxAttempts`` in its
settings, 10 by default: about three and a half minutes of backoff against a lasting
429), then ends with a ``result`` whose error says so (``[API Error: …]`` and "Please
wait and try again later. …"; "You have exhausted your daily quota" for a daily quota);
``gemini_limit`` reads it as a ``ProviderLimit`` with no reset time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from seawall.adapters.runners.streaming import LineParser, StreamingCliRunner, Tool, ToolNames
from seawall.codec import JsonView
from seawall.events import (
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

__all__ = ["GEMINI_TOOLS", "GeminiJsonParser", "GeminiRunner", "gemini_limit"]

_DIR = {"dir_path": "path"}
GEMINI_TOOLS = ToolNames(
    {
        "write_file": Tool("Write"),
        "replace": Tool("Edit"),
        "read_file": Tool("Read"),
        "run_shell_command": Tool("Bash"),
        "glob": Tool("Glob", _DIR),
        "grep_search": Tool("Grep", {**_DIR, "include_pattern": "glob"}),
        "search_file_content": Tool("Grep", {**_DIR, "include": "glob"}),
        "list_directory": Tool("LS", _DIR),
        "read_many_files": Tool("Read"),
        "invoke_agent": Tool("Task"),
    },
    read_only=frozenset(
        {
            "web_fetch",
            "google_web_search",
            "write_todos",
            "update_topic",
            "save_memory",
            "enter_plan_mode",
            "activate_skill",
            "list_background_processes",
            "read_background_output",
        }
    ),
)
"""Gemini CLI's built-in tools in seawall's terms."""

_EXIT = re.compile(r"(?:Command exited with code|Exit Code):\s*(-?\d+)")


class GeminiRunner(StreamingCliRunner):
    """Gemini CLI runner. Plan table::

    [runners.gem]
    kind = "gemini"
    model = "gemini-2.5-pro"
    env = { GEMINI_API_KEY = "..." }
    argv = ["--include-directories", "../shared"]   # extra arguments, appended
    options = { executable = "gemini", kill_grace = 2 }
    """

    default_executable: ClassVar[str] = "gemini"
    tool_names: ClassVar[ToolNames] = GEMINI_TOOLS

    @property
    def provider(self) -> str:
        return "google"  # a Google limit holds Gemini agents only, not every unknown runner

    @property
    def barrier(self) -> str:
        return "seawall's OS sandbox (Gemini refuses paths outside its workspace)"

    def argv(self, request: AgentRequest) -> list[str]:
        argv = [self.executable, "-p", "", "--output-format", "stream-json"]
        argv += ["--yolo", "--skip-trust"]  # headless: every call runs, in this workspace
        if model := self.model_for(request):
            argv += ["--model", model]
        return [*argv, *self.extra_args]

    def parser(self) -> LineParser:
        return GeminiJsonParser(model=self.model or "")

    def state_paths(self, env: Mapping[str, str]) -> tuple[Path, ...]:
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        return (home / ".gemini",)


class GeminiJsonParser:
    """``gemini --output-format stream-json`` lines to events (see the module docstring)."""

    def __init__(self, *, model: str = "") -> None:
        self.model = model
        self.session_id = ""  # the CLI's conversation id, from its init line
        self._turn = 0
        self._in_turn = False  # a turn is open: the model spoke since the last result
        self._text: list[str] = []  # the open turn's text pieces
        self._last_text = ""
        self._calls: dict[str, str] = {}  # tool id -> tool name

    def feed(self, line: str) -> list[Event]:
        try:
            data = json.loads(line)
        except ValueError:
            return []  # a plain line (a warning) between the JSON ones
        if not isinstance(data, dict):
            return []
        kind = data.get("type")
        if kind == "init":
            self.session_id = str(data.get("session_id") or "")
            self.model = self.model or str(data.get("model") or "")
            return []
        if kind == "message" and data.get("role") == "assistant":
            events = self._open_turn()
            self._text.append(str(data.get("content") or ""))
            return events
        if kind == "tool_use":
            return [*self._open_turn(), *self._flush(), self._call(data)]
        if kind == "tool_result":
            self._in_turn = False
            return [*self._flush(), self._result(data)]
        if kind == "result":
            return [*self._flush(), *self._end(data)]
        return []  # the user's prompt, and kinds seawall has no use for

    def finish(self) -> list[Event]:
        """The end of output without a result line (killed): no ``Final``, an error."""
        return self._flush()

    def _open_turn(self) -> list[Event]:
        if self._in_turn:
            return []
        self._in_turn = True
        self._turn += 1
        self._text = []
        return [Turn(number=self._turn)]

    def _flush(self) -> list[Event]:
        text = "".join(self._text)
        self._text = []
        if not text.strip():
            return []
        self._last_text = text
        return [Message(text=text, turn=self._turn)]

    def _call(self, data: JsonView) -> ToolCall:
        call_id = str(data.get("tool_id") or "")
        name = str(data.get("tool_name") or "")
        self._calls[call_id] = name
        parameters = data.get("parameters")
        arguments = parameters if isinstance(parameters, dict) else {}
        return ToolCall(call_id=call_id, name=name, arguments=arguments, turn=self._turn)

    def _result(self, data: JsonView) -> ToolResult:
        call_id = str(data.get("tool_id") or "")
        error = data.get("error")
        text = str(data.get("output") or "")
        if isinstance(error, dict) and error.get("message"):
            text = str(error["message"])
        exit_code = None
        if self._calls.get(call_id) == "run_shell_command":
            found = _EXIT.search(text)
            exit_code = int(found.group(1)) if found else 0
        failed = data.get("status") != "success" or bool(exit_code)
        return ToolResult(
            call_id=call_id,
            is_error=failed,
            text=text[-4000:],
            name=self._calls.get(call_id),
            exit_code=exit_code,
        )

    def _end(self, data: JsonView) -> list[Event]:
        stats = data.get("stats")
        stats = stats if isinstance(stats, dict) else {}
        cached = int(stats.get("cached") or 0)
        events: list[Event] = []
        if stats:
            events.append(
                Usage(
                    message_id=f"{self.session_id}:result",
                    model=self.model,
                    input_tokens=max(0, int(stats.get("input_tokens") or 0) - cached),
                    output_tokens=int(stats.get("output_tokens") or 0),
                    cache_read_tokens=cached,
                )
            )
        failed = data.get("status") != "success"
        error = data.get("error")
        error = error if isinstance(error, dict) else {}
        text = self._last_text
        if failed and error.get("message"):
            text = f"{text}\n{error['message']}".strip()
        subtype = str(error.get("type") or "error") if failed else "success"
        limit = gemini_limit(str(error.get("message") or "")) if failed else None
        final = Final(
            text=text, is_error=failed, subtype=subtype, num_turns=self._turn, limit=limit
        )
        events.append(final)
        return events


_DAILY_QUOTA = "You have exhausted your daily quota"
_RATE_LIMITED = (
    # what the CLI adds to an API error of status 429, by sign-in (its errorParsing)
    "Please wait and try again later. To increase your limits",
    "Possible quota limitations in place",
)


def gemini_limit(message: str) -> ProviderLimit | None:
    """The provider's limit the Gemini CLI's error ``message`` (its ``result`` line's,
    once its own retries, ``general.maxAttempts``, are spent) reports: a daily quota is
    the usage limit, any other 429 a rate limit; neither says when it resets."""
    if _DAILY_QUOTA in message:
        return ProviderLimit(kind=LimitKind.USAGE, detail=message[:500])
    if any(marker in message for marker in _RATE_LIMITED):
        return ProviderLimit(kind=LimitKind.RATE, detail=message[:500])
    return None
