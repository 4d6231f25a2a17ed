"""A scripted Gemini API (``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``).

Point the Gemini CLI at it with ``GOOGLE_GEMINI_BASE_URL=<origin>``, any
``GEMINI_API_KEY`` and ``security.auth.selectedType = "gemini-api-key"`` in its settings.
The turn to answer is the number of the model's turns already in the conversation.
Requests no script claims (the CLI's own side requests) get a short plain answer; every
request is logged.
"""

from __future__ import annotations

import json
import re
from http.server import BaseHTTPRequestHandler
from typing import Any

from seawall.testing.http import send_json
from tests.fakes.model_script import ModelServer, ModelTurn, pause, substitute

__all__ = ["GeminiServer"]

_CWD = re.compile(r"Workspace Directories:\*\*\\n\s*- (/[^\s\\]+)")


class GeminiServer(ModelServer):
    """The Gemini API's content generation, answering each conversation from its script."""

    def serve(self, handler: BaseHTTPRequestHandler, path: str, body: Any) -> None:
        action = path.rsplit(":", 1)[-1] if ":" in path else ""
        if action == "countTokens":
            self.log(handler.command, path, body, None, None)
            send_json(handler, 200, {"totalTokens": 100})
            return
        if action not in ("generateContent", "streamGenerateContent") or not isinstance(body, dict):
            self.log(handler.command, path, body, None, None)
            send_json(handler, 404, {"error": {"code": 404, "message": "not found"}})
            return
        contents = body.get("contents") or []
        script = self.match(_first_user_text(contents))
        index = sum(1 for c in contents if isinstance(c, dict) and c.get("role") == "model")
        self.log(handler.command, path, body, script, index if script is not None else None)
        turn = script.turn(index) if script is not None else _side_answer(body)
        pause(turn)
        if turn.status != 200:
            error = {"code": turn.status, "message": turn.text, "status": _status(turn.status)}
            send_json(handler, turn.status, {"error": error})
            return
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        response = _response(turn, index, model, _cwd(body))
        if action == "generateContent":
            send_json(handler, 200, response)
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        handler.wfile.write(f"data: {json.dumps(response)}\r\n\r\n".encode())
        handler.wfile.flush()


def _first_user_text(contents: list[Any]) -> str:
    for content in contents:
        if isinstance(content, dict) and content.get("role") == "user":
            return json.dumps(content.get("parts"))
    return ""


def _side_answer(body: dict[str, Any]) -> ModelTurn:
    """The CLI's own side questions (is the next speaker the user? a summary?): JSON when
    it asks for JSON, a short text else."""
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json":
        return ModelTurn(text=json.dumps({"reasoning": "done", "next_speaker": "user"}))
    return ModelTurn(text="ok", input_tokens=10)


def _cwd(body: dict[str, Any]) -> str:
    text = json.dumps(body.get("systemInstruction")) + json.dumps(body.get("contents"))
    match = _CWD.search(text)
    return match.group(1) if match else ""


def _status(code: int) -> str:
    return {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE", 500: "INTERNAL"}.get(code, "UNKNOWN")


def _response(turn: ModelTurn, index: int, model: str, cwd: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if turn.text:
        parts.append({"text": turn.text})
    for k, call in enumerate(turn.calls):
        arguments = substitute(call.input, cwd)
        args = arguments if isinstance(arguments, dict) else {"input": arguments}
        parts.append(
            {"functionCall": {"id": f"call_t{index}_{k}", "name": call.name, "args": args}}
        )
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": turn.input_tokens,
            "candidatesTokenCount": turn.output_tokens,
            "totalTokenCount": turn.input_tokens + turn.output_tokens,
            "cachedContentTokenCount": 0,
        },
        "modelVersion": model,
    }
