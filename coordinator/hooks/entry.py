"""One hook call answered, from the hook's stdin text and its environment.

The same function answers a call in the hook's own process and in the session's hook
server, so both decide alike. A hook never lets its own failure through: pre-tool-use
fails closed (exit 2) unless ``SEAWALL_ENFORCEMENT`` says warn or off; post-tool-use
and subagent-stop report a failure without blocking.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Mapping

from seawall.hooks.protocol import BLOCK_EXIT, HookInputError, HookResponse, read_payload
from seawall.hooks.wire import EVENTS, WireError, decode_request

__all__ = ["HOOK_MODULES", "answer", "answer_request", "failed"]

HOOK_MODULES = {event: f"seawall.hooks.{event.replace('-', '_')}" for event in EVENTS}


def answer(event: str, data: bytes, env: Mapping[str, str], *, cwd: str = "") -> HookResponse:
    """The response to one ``event`` call whose stdin was ``data``; ``cwd`` is the hook
    process's working directory, for an input that names none. Input that is not UTF-8
    is refused like any other unreadable input (never guessed at)."""
    if event not in HOOK_MODULES:
        return failed(event, f"seawall: no such hook event {event!r}", env)
    try:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HookInputError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
        payload = read_payload(io.StringIO(text))
        if cwd and not payload.get("cwd"):
            payload["cwd"] = cwd
        module = importlib.import_module(HOOK_MODULES[event])
        response: HookResponse = module.handle(payload, env)
    except HookInputError as exc:
        return failed(event, f"seawall: the hook input cannot be read: {exc}", env)
    except Exception as exc:  # noqa: BLE001 - a guard that crashes must not let the call through
        return failed(event, f"seawall: the {event} hook failed: {exc!r}", env)
    return response


def answer_request(data: bytes) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) for one request of the wire format, as a hook server
    answers it: a request that cannot be read is refused."""
    try:
        event, cwd, env, payload = decode_request(data)
    except WireError as exc:
        return BLOCK_EXIT, "", f"seawall: bad hook request: {exc}"
    response = answer(event, payload, env, cwd=cwd)
    return response.exit_code, response.stdout, response.stderr


def failed(event: str, message: str, env: Mapping[str, str]) -> HookResponse:
    """The response of a hook that could not decide: a refusal for pre-tool-use (unless
    enforcement is warn or off), a reported, non-blocking error for the others."""
    level = env.get("SEAWALL_ENFORCEMENT", "strict").strip() or "strict"
    if event == "pre-tool-use" and level not in ("warn", "off"):
        return HookResponse(exit_code=BLOCK_EXIT, stderr=message)
    return HookResponse(exit_code=1, stderr=message)
