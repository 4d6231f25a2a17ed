"""A scripted Anthropic Messages API (``POST /v1/messages`` with SSE streaming).

Point Claude Code at it with ``ANTHROPIC_BASE_URL=<origin>``, any ``ANTHROPIC_API_KEY``
and ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``. Requests no script claims (Claude
Code's own side requests) get a short plain answer; every request is logged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from seawall.testing.http import send_json
from tests.fakes.model_script import ModelServer, ModelTurn, send_sse, substitute

__all__ = ["AnthropicServer", "usage_limit"]

_CWD = re.compile(r"[Ww]orking directory: (\S+)")


class AnthropicServer(ModelServer):
    """The Messages API, answering each conversation from its script."""

    def serve(self, handler: BaseHTTPRequestHandler, path: str, body: Any) -> None:
        if not path.endswith("/v1/messages") or not isinstance(body, dict):
            self.log(handler.command, path, body, None, None)
            if path.endswith("/count_tokens"):
                send_json(handler, 200, {"input_tokens": 100})
            else:
                send_json(handler, 404, {"type": "error", "error": {"type": "not_found_error"}})
            return
        messages = body.get("messages") or []
        answered = self.answer(handler, path, body, _first_user_text(messages), messages)
        if answered is None:
            return
        turn, index = answered
        model = str(body.get("model") or "claude-sonnet-4-5")
        cwd = _cwd(body)
        if body.get("stream"):
            send_sse(handler, _stream(turn, index, model, cwd))
        else:
            send_json(handler, 200, _message(turn, index, model, cwd))


def _first_user_text(messages: list[Any]) -> str:
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            return json.dumps(message.get("content"))
    return ""


def _cwd(body: dict[str, Any]) -> str:
    match = _CWD.search(json.dumps(body.get("system")) + json.dumps(body.get("messages")))
    return match.group(1).rstrip("\\n\"'") if match else ""


def _blocks(turn: ModelTurn, index: int, cwd: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for k, call in enumerate(turn.calls):
        arguments = substitute(call.input, cwd)
        blocks.append(
            {
                "type": "tool_use",
                "id": f"call_t{index}_{k}",
                "name": call.name,
                "input": arguments if isinstance(arguments, dict) else {"input": arguments},
            }
        )
    return blocks


def _message(turn: ModelTurn, index: int, model: str, cwd: str) -> dict[str, Any]:
    return {
        "id": f"msg_t{index}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _blocks(turn, index, cwd),
        "stop_reason": "tool_use" if turn.calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens},
    }


def _stream(turn: ModelTurn, index: int, model: str, cwd: str) -> Iterator[tuple[str, Any]]:
    message = _message(turn, index, model, cwd)
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = {"input_tokens": turn.input_tokens, "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    for position, block in enumerate(message["content"]):
        if block["type"] == "text":
            empty: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        else:
            empty = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": position, "content_block": empty},
        )
        yield (
            "content_block_delta",
            {"type": "content_block_delta", "index": position, "delta": delta},
        )
        yield "content_block_stop", {"type": "content_block_stop", "index": position}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": turn.output_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def usage_limit(resets_at: int) -> ModelTurn:
    """A subscriber's usage limit as Anthropic's API answers it: 429 with the unified
    rate-limit headers (rejected, the reset, the five-hour window); Claude Code does not
    retry it."""
    return ModelTurn(
        status=429,
        error={"type": "rate_limit_error", "message": "usage limit"},
        headers={
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(resets_at),
            "anthropic-ratelimit-unified-representative-claim": "five_hour",
        },
    )
