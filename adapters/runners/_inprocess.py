"""Running an agent that is Python code in this process (callable and scripted runners).

The same contract as a subprocess agent: the time limit and the stop signal end the
agent's code (its cancel scope is cancelled) and give a ``timed_out`` / ``cancelled``
result; outer cancellation propagates; an exception raised by the agent's code is the
agent crashing, reported as an error result with its traceback in ``stderr_tail``.
"""

from __future__ import annotations

import inspect
import json
import math
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import IO

import anyio

from seawall.codec import JsonObject
from seawall.events import Event, Final
from seawall.runner import AgentRequest, AgentResult, EmitFn, Emitter, StopSignal

__all__ = ["AgentBody", "event_record", "run_in_process", "transcript_lines"]

AgentBody = Callable[[Emitter], Awaitable[str]]
"""The agent's code: emits events through the emitter, returns its final text."""

_TAIL = 8 * 1024


@dataclass(slots=True)
class _Outcome:
    text: str = ""
    crash: str = ""
    stopped: str = ""


def event_record(event: Event) -> JsonObject:
    """One event as a JSON-ready record: ``{"event": "ToolCall", ...fields}``."""
    record: JsonObject = {"event": type(event).__name__}
    for item in fields(event):
        record[item.name] = getattr(event, item.name)
    return record


def _json_default(value: object) -> object:
    return dict(value) if isinstance(value, Mapping) else str(value)


class _TranscriptEmit:
    """Wraps the coordinator's callback, writing each event as a JSON line first."""

    __slots__ = ("_emit", "_file")

    def __init__(self, emit: EmitFn, file: IO[str]) -> None:
        self._emit = emit
        self._file = file

    async def __call__(self, event: Event) -> None:
        self._file.write(json.dumps(event_record(event), default=_json_default) + "\n")
        self._file.flush()
        outcome = self._emit(event)
        if inspect.isawaitable(outcome):
            await outcome


async def run_in_process(request: AgentRequest, emit: EmitFn, body: AgentBody) -> AgentResult:
    """Run ``body`` as the agent of ``request``; see the module docstring for the contract."""
    path = request.transcript_path
    if path is None:
        return await _supervise(request, Emitter(emit), body)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as file:
        return await _supervise(request, Emitter(_TranscriptEmit(emit, file)), body)


async def _supervise(request: AgentRequest, emitter: Emitter, body: AgentBody) -> AgentResult:
    started = anyio.current_time()
    limit = request.time_limit
    outcome = _Outcome()
    with anyio.CancelScope(deadline=started + limit if limit else math.inf) as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(_watch_stop, request.stop, scope, outcome)
            await _guarded(body, emitter, outcome)
            group.cancel_scope.cancel()
    interrupted = scope.cancelled_caught
    if not interrupted and outcome.crash:
        await emitter(Final(text=outcome.text, is_error=True, subtype="crash"))
    elif not interrupted and emitter.counter.final is None:
        await emitter(Final(text=outcome.text, subtype="success"))
    final = emitter.counter.final
    counter = emitter.counter
    return AgentResult(
        task_id=request.task_id,
        final_text=final.text if final is not None and not interrupted else outcome.text,
        turns=counter.turns,
        tool_calls=counter.tool_calls,
        cost_usd=counter.cost_usd,
        is_error=interrupted or final is None or final.is_error,
        timed_out=interrupted and not outcome.stopped,
        cancelled=interrupted and bool(outcome.stopped),
        stop_reason=outcome.stopped or ("time limit" if interrupted else ""),
        transcript_path=request.transcript_path,
        stderr_tail=outcome.crash[-_TAIL:],
        duration_s=anyio.current_time() - started,
    )


async def _guarded(body: AgentBody, emitter: Emitter, outcome: _Outcome) -> None:
    try:
        outcome.text = await body(emitter)
    except Exception:  # noqa: BLE001 - the agent's code crashing is its outcome, not ours
        outcome.crash = traceback.format_exc()


async def _watch_stop(stop: StopSignal, scope: anyio.CancelScope, outcome: _Outcome) -> None:
    outcome.stopped = await stop.wait()
    scope.cancel()


def transcript_lines(path: Path) -> list[JsonObject]:
    """The event records of an in-process agent's transcript (for review and tests)."""
    with path.open(encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]
