"""Scripted model turns for the fake model servers, and the HTTP plumbing they share.

A ``Script`` lists one agent's model turns: each ``ModelTurn`` has the text the model
writes and the tool calls it makes. A server picks the script whose ``marker`` appears in
the conversation's first user message (the task prompt), so several agents of one wave
can share one server. The turn to answer is found from the conversation itself: each
call id the server hands out names its turn (``call_t<N>_<k>``), so the next turn is one
past the highest turn whose calls the client sends back. Answers are therefore stable
under retries and need no per-connection state.

``{cwd}`` in a call's input is replaced with the agent's working directory, read from
the request (Claude Code and Codex both tell the model where they run).

Every request is logged (``ModelServer.requests``) so tests can assert what the model
was shown.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from seawall.testing.http import LocalServer, read_body, send_json

__all__ = [
    "Call",
    "LoggedModelRequest",
    "ModelServer",
    "ModelTurn",
    "Script",
    "send_sse",
    "substitute",
    "turn_of_call_ids",
]

_CALL_ID = re.compile(r"call_t(\d+)_\d+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """One tool call: the tool's name and its input (a JSON object, or raw text for a
    free-form tool such as Codex's ``apply_patch``)."""

    name: str
    input: Mapping[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelTurn:
    """One model response: text, then tool calls (none ends the agent's run).

    ``delay`` seconds pass before the answer starts (a slow model); the token counts are
    what the response reports as its usage (``cached_tokens`` of the input read from the
    provider's cache). A ``status`` other than 200 answers with that HTTP error and
    ``text`` as its message instead, or with ``error`` as the error object when given,
    and ``headers`` (a limit's reset, a ``retry-after``)."""

    text: str = ""
    calls: Sequence[Call] = ()
    delay: float = 0.0
    status: int = 200
    input_tokens: int = 1200
    output_tokens: int = 80
    cached_tokens: int = 0
    error: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Script:
    """One agent's turns. ``loop`` repeats the last turn forever (a looping agent).
    ``first`` answers the script's first requests, one each, before its turns (a limit
    met once: the agent dispatched again then gets the turns). ``once`` answers the
    first request for a turn index in it instead of that turn (a limit met, or a slow
    answer the agent is killed in, mid-conversation), or the first requests, one each,
    when it gives several (a limit the CLI retries); later requests for the same index
    get the turn."""

    marker: str
    turns: Sequence[ModelTurn]
    loop: bool = False
    first: Sequence[ModelTurn] = ()
    once: Mapping[int, ModelTurn | Sequence[ModelTurn]] = field(default_factory=dict)

    def turn(self, index: int) -> ModelTurn:
        """The turn with 0-based ``index``; past the end, the last (``loop``) or a plain
        final text."""
        if index < len(self.turns):
            return self.turns[index]
        if self.loop and self.turns:
            return self.turns[-1]
        return ModelTurn(text="Nothing more to do.\nSTATUS: done")


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedModelRequest:
    """One request as the server received it."""

    method: str
    path: str
    body: Any
    script: str | None  # the marker of the script that answered, None for none
    turn: int | None  # the 0-based turn answered


def turn_of_call_ids(text: str) -> int:
    """The next 0-based turn index for a conversation whose serialised form is ``text``."""
    seen = [int(match) for match in _CALL_ID.findall(text)]
    return max(seen) + 1 if seen else 0


def substitute(value: Mapping[str, Any] | str, cwd: str) -> Mapping[str, Any] | str:
    """``value`` with every ``{cwd}`` replaced by ``cwd`` (strings, nested)."""
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    return {key: _substitute_any(item, cwd) for key, item in value.items()}


def _substitute_any(value: Any, cwd: str) -> Any:
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    if isinstance(value, list):
        return [_substitute_any(item, cwd) for item in value]
    if isinstance(value, dict):
        return {key: _substitute_any(item, cwd) for key, item in value.items()}
    return value


class ModelServer(LocalServer):
    """A scripted model on 127.0.0.1 in a thread; subclasses speak one wire protocol.

    Subclasses implement ``serve(handler, path, body)`` and return the matched script's
    marker and turn index for the log."""

    def __init__(self, scripts: Sequence[Script] = ()) -> None:
        self.lock = threading.Lock()
        self.scripts: list[Script] = list(scripts)
        self.requests: list[LoggedModelRequest] = []
        self._firsts: dict[str, int] = {}  # the ``first`` turns each script answered
        self._onces: dict[tuple[str, int], int] = {}  # the ``once`` turns answered
        super().__init__(self._dispatch, keep_alive=True)

    # -- for tests --------------------------------------------------------------------

    def add(self, script: Script) -> None:
        with self.lock:
            self.scripts.append(script)

    def answered(self, marker: str) -> list[LoggedModelRequest]:
        """The requests one script answered, in order."""
        with self.lock:
            return [r for r in self.requests if r.script == marker]

    def shown(self, marker: str) -> str:
        """Everything the model of ``marker`` was sent, as one JSON text (for asserts)."""
        return "\n".join(json.dumps(r.body) for r in self.answered(marker))

    def _dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        body = read_body(handler)
        path = handler.path.split("?", 1)[0]
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.serve(handler, path, body)  # a stopped agent hangs up mid-answer

    # -- for subclasses ---------------------------------------------------------------

    def match(self, first_user_text: str) -> Script | None:
        with self.lock:
            for script in self.scripts:
                if script.marker in first_user_text:
                    return script
        return None

    def log(
        self, method: str, path: str, body: Any, script: Script | None, turn: int | None
    ) -> None:
        with self.lock:
            self.requests.append(
                LoggedModelRequest(
                    method=method,
                    path=path,
                    body=body,
                    script=script.marker if script is not None else None,
                    turn=turn,
                )
            )

    def serve(self, handler: BaseHTTPRequestHandler, path: str, body: Any) -> None:
        raise NotImplementedError

    def answer(
        self, handler: BaseHTTPRequestHandler, path: str, body: Any, first_user: str, history: Any
    ) -> tuple[ModelTurn, int] | None:
        """The turn that answers a model request: the matching script's next one (a plain
        "ok" when no script claims it). Logs the request and waits the turn's ``delay``.
        None when the turn is an HTTP error, which has then been sent."""
        script = self.match(first_user)
        index = turn_of_call_ids(json.dumps(history)) if script is not None else 0
        self.log(handler.command, path, body, script, index if script is not None else None)
        turn = script.turn(index) if script is not None else ModelTurn(text="ok", input_tokens=10)
        if script is not None and script.first:
            with self.lock:
                used = self._firsts.get(script.marker, 0)
                if used < len(script.first):
                    turn = script.first[used]
                    self._firsts[script.marker] = used + 1
        if script is not None and index in script.once:
            given = script.once[index]
            answers = (given,) if isinstance(given, ModelTurn) else tuple(given)
            with self.lock:
                used = self._onces.get((script.marker, index), 0)
                if used < len(answers):
                    self._onces[(script.marker, index)] = used + 1
                    turn = answers[used]
        pause(turn)
        if turn.status != 200:
            error = turn.error or {
                "type": "invalid_request_error",
                "message": turn.text,
                "code": None,
            }
            send_json(handler, turn.status, {"type": "error", "error": error}, turn.headers)
            return None
        return turn, index


def send_sse(handler: BaseHTTPRequestHandler, events: Iterator[tuple[str, Any]]) -> None:
    """Stream ``(event name, data)`` pairs as server-sent events, then close."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    for name, data in events:
        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        handler.wfile.write(chunk)
        handler.wfile.flush()


def pause(turn: ModelTurn) -> None:
    if turn.delay > 0:
        time.sleep(turn.delay)
