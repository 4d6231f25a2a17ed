"""A scripted OpenAI API: Responses (``POST /v1/responses``) and Chat Completions
(``POST /v1/chat/completions``), both streamed as server-sent events.

Codex reaches the Responses API through a ``model_providers`` entry with
``base_url = "<origin>/v1"`` and ``wire_api = "responses"`` (see ``codex_home``). A
``Call`` named ``apply_patch`` is sent as a free-form tool call (its input is the patch
text); any other call is a function call with JSON arguments (``exec_command``/``shell``
take ``cmd``/``command``).
An argument whose value is ``"{session}"`` becomes the id of the newest running command
session Codex reported (``Process running with session ID N``), for ``write_stdin``.

opencode reaches Chat Completions through an ``@ai-sdk/openai-compatible`` provider (see
``opencode_config``); every call is a function call with JSON arguments. A request that
offers no tools (opencode's title generator) gets a short title, answered by no script.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from seawall.testing.http import send_json
from tests.fakes.model_script import ModelServer, ModelTurn, send_sse, substitute

__all__ = ["OpenAIResponsesServer", "codex_home", "opencode_config", "usage_limit"]

_CWD = re.compile(r"<cwd>([^<]+)</cwd>")
_WORKING_DIRECTORY = re.compile(r"Working directory: ([^\\\n]+)")
_SESSION = re.compile(r"session ID (\d+)")


class OpenAIResponsesServer(ModelServer):
    """The Responses and Chat Completions APIs, answering each conversation from its
    script."""

    def serve(self, handler: BaseHTTPRequestHandler, path: str, body: Any) -> None:
        if path.endswith("/chat/completions") and isinstance(body, dict):
            self._chat(handler, path, body)
            return
        if not path.endswith("/responses") or not isinstance(body, dict):
            self.log(handler.command, path, body, None, None)
            if path.endswith("/models"):
                send_json(handler, 200, {"object": "list", "data": [], "models": []})
            else:
                send_json(handler, 404, {"error": {"message": "not found"}})
            return
        items = body.get("input") or []
        answered = self.answer(handler, path, body, _first_user_text(items), items)
        if answered is None:
            return
        turn, index = answered
        text = json.dumps(items)
        match = _CWD.search(text)
        sessions = _SESSION.findall(text)
        send_sse(
            handler,
            _stream(
                turn, index, match.group(1) if match else "", int(sessions[-1]) if sessions else 0
            ),
        )

    def _chat(self, handler: BaseHTTPRequestHandler, path: str, body: dict[str, Any]) -> None:
        messages = body.get("messages") or []
        if not body.get("tools"):  # a side request (a title), not the agent's turn
            self.log(handler.command, path, body, None, None)
            _send_chat(handler, ModelTurn(text="Scripted work"), 0, "")
            return
        answered = self.answer(handler, path, body, _first_user_text(messages), messages)
        if answered is None:
            return
        turn, index = answered
        match = _WORKING_DIRECTORY.search(json.dumps(messages))
        _send_chat(handler, turn, index, match.group(1) if match else "")


def _send_chat(handler: BaseHTTPRequestHandler, turn: ModelTurn, index: int, cwd: str) -> None:
    """One Chat Completions answer as ``data:`` events, then ``[DONE]``."""
    base = {"id": f"chatcmpl_t{index}", "object": "chat.completion.chunk", "created": 0}
    base["model"] = "scripted"
    chunks: list[dict[str, Any]] = []
    if turn.text:
        chunks.append({"role": "assistant", "content": turn.text})
    for k, call in enumerate(turn.calls):
        arguments = substitute(call.input, cwd)
        function = {"name": call.name, "arguments": json.dumps(arguments)}
        tool_call = {"index": k, "id": f"call_t{index}_{k}", "type": "function"}
        chunks.append({"tool_calls": [{**tool_call, "function": function}]})
    finish = "tool_calls" if turn.calls else "stop"
    events = [{**base, "choices": [{"index": 0, "delta": delta}]} for delta in chunks]
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    usage = {
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }
    events.append({**base, "choices": [], "usage": usage})
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    for event in events:
        handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        handler.wfile.flush()
    handler.wfile.write(b"data: [DONE]\n\n")
    handler.wfile.flush()


def _first_user_text(items: list[Any]) -> str:
    texts = [
        json.dumps(item.get("content"))
        for item in items
        if isinstance(item, dict) and item.get("role") == "user"
    ]
    return "\n".join(texts)


def _items(turn: ModelTurn, index: int, cwd: str, session: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_t{index}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    for k, call in enumerate(turn.calls):
        arguments = substitute(call.input, cwd)
        call_id = f"call_t{index}_{k}"
        if isinstance(arguments, str):
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": f"ctc_t{index}_{k}",
                    "call_id": call_id,
                    "name": call.name,
                    "input": arguments,
                    "status": "completed",
                }
            )
        else:
            arguments = {k: session if v == "{session}" else v for k, v in arguments.items()}
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_t{index}_{k}",
                    "call_id": call_id,
                    "name": call.name,
                    "arguments": json.dumps(arguments),
                    "status": "completed",
                }
            )
    return items


def _stream(turn: ModelTurn, index: int, cwd: str, session: int) -> Iterator[tuple[str, Any]]:
    response_id = f"resp_t{index}"
    base = {"id": response_id, "object": "response", "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": base}
    items = _items(turn, index, cwd, session)
    for position, item in enumerate(items):
        yield (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": position, "item": item},
        )
        yield (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": position, "item": item},
        )
    usage = {
        "input_tokens": turn.input_tokens,
        "input_tokens_details": {"cached_tokens": turn.cached_tokens},
        "output_tokens": turn.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }
    done = dict(base, status="completed", output=items, usage=usage)
    yield "response.completed", {"type": "response.completed", "response": done}


def codex_home(path: Path, origin: str, *, model: str = "gpt-5.5") -> Path:
    """Write a ``CODEX_HOME`` at ``path`` whose default provider is the server at
    ``origin``; returns ``path``. The key variable is ``SEAWALL_FAKE_OPENAI_KEY``."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(
        f'model = "{model}"\n'
        'model_provider = "scripted"\n'
        "[model_providers.scripted]\n"
        'name = "scripted"\n'
        f'base_url = "{origin}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "SEAWALL_FAKE_OPENAI_KEY"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n",
        encoding="utf-8",
    )
    return path


def opencode_config(origin: str, *, model: str = "coder") -> str:
    """opencode's configuration (``OPENCODE_CONFIG_CONTENT``) whose model ``scripted/<model>``
    is served by the server at ``origin`` through Chat Completions."""
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Scripted",
        "options": {"baseURL": f"{origin}/v1", "apiKey": "sk-scripted"},
        "models": {model: {"name": model, "tool_call": True}},
    }
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"scripted": provider},
        "model": f"scripted/{model}",
        "autoupdate": False,
        "share": "disabled",
    }
    return json.dumps(config)


def usage_limit(resets_at: int) -> ModelTurn:
    """A ChatGPT plan's usage limit as the Responses API answers it; Codex does not retry
    it, and says the reset to the minute."""
    return ModelTurn(
        status=429,
        error={
            "type": "usage_limit_reached",
            "message": "The usage limit has been reached",
            "plan_type": "plus",
            "resets_at": resets_at,
            "resets_in_seconds": max(0, resets_at - int(time.time())),
        },
    )
