"""How a remote agent's run ends on the coordinator's side: its ``AgentResult``.

``StopState`` is what the coordinator did to the run (stopped it, its time limit, no
node took it) and where the agent ran; ``Settled`` how the Ray task itself ended.
``remote_result`` makes the local worktree the agent's final state, keeps the
transcripts the worker sent, and builds the result: the worker's own, overridden by a
stop of the coordinator's or by the loss of the worker (``lost_reason`` tells a lost
node from a worker that died on a live one).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from seawall.adapters.runners.ray.local import LocalWorktree
from seawall.adapters.runners.ray.wire import WorkerOutcome
from seawall.codec import JsonObject
from seawall.errors import RunnerError
from seawall.runner import AgentRequest, AgentResult, Emitter

__all__ = ["Settled", "StopState", "lost_reason", "remote_result", "stopped_before"]


@dataclass(slots=True)
class StopState:
    """Why the coordinator ended the run, if it did; where and when the agent started."""

    kind: str = ""  # "", "cancelled", "timed_out", "unplaced"
    reason: str = ""
    forced: bool = False
    started: anyio.Event | None = None
    started_at: float | None = None
    node: str = ""  # the Ray node the agent runs on, once it started


@dataclass(slots=True)
class Settled:
    """How the remote task ended: its value, or the Ray error that ended it."""

    outcome: WorkerOutcome | None = None
    error: BaseException | None = None
    done: bool = False


async def remote_result(
    ray: Any,
    request: AgentRequest,
    local: LocalWorktree,
    emitter: Emitter,
    stop: StopState,
    settled: Settled,
    started: float,
) -> AgentResult:
    """The run's result (``started``: when ``run()`` began, for the queueing time);
    ``RunnerError`` when the agent never started (no node took it, setup failed)."""
    outcome = settled.outcome
    if stop.kind == "unplaced":
        raise RunnerError(f"task {request.task_id!r}: {stop.reason}")
    if outcome is not None and outcome.setup_error:
        raise RunnerError(
            f"task {request.task_id!r}: cannot start the agent on Ray: {outcome.setup_error}"
        )
    if outcome is not None and outcome.runner_error:
        raise RunnerError(outcome.runner_error)
    if outcome is not None and outcome.final is not None:
        await anyio.to_thread.run_sync(local.apply, outcome.final)
    if outcome is not None and outcome.transcripts and request.transcript_path is not None:
        await anyio.to_thread.run_sync(_write_transcripts, request.transcript_path, outcome)
    remote = (outcome.result if outcome is not None else None) or {}
    counter = emitter.counter
    fields: JsonObject = {
        "final_text": remote.get("final_text", ""),
        "exit_code": remote.get("exit_code"),
        "is_error": bool(remote.get("is_error", True)),
        "timed_out": bool(remote.get("timed_out", False)),
        "cancelled": bool(remote.get("cancelled", False)),
        "stop_reason": str(remote.get("stop_reason", "")),
        "stderr_tail": str(remote.get("stderr_tail", "")),
    }
    if stop.kind:
        fields.update(
            exit_code=None,
            is_error=True,
            timed_out=stop.kind == "timed_out",
            cancelled=stop.kind == "cancelled",
            stop_reason=stop.reason,
        )
    elif settled.error is not None:
        fields.update(
            exit_code=None,
            is_error=True,
            cancelled=True,
            stop_reason=await anyio.to_thread.run_sync(lost_reason, ray, stop, settled.error),
            stderr_tail=str(settled.error)[-8000:],
        )
    elif outcome is not None and outcome.crash:
        fields.update(is_error=True, stderr_tail=outcome.crash)
    if not fields["final_text"] and counter.final is not None:
        fields["final_text"] = counter.final.text
    return AgentResult(
        task_id=request.task_id,
        turns=counter.turns,
        tool_calls=counter.tool_calls,
        cost_usd=counter.cost_usd,
        transcript_path=request.transcript_path,
        duration_s=anyio.current_time() - (stop.started_at or started),
        queued_s=(stop.started_at or anyio.current_time()) - started,
        **fields,
    )


def lost_reason(ray: Any, stop: StopState, error: BaseException) -> str:
    """Why the remote task ended without a result: its node was lost, or its worker died."""
    first = str(error).strip().splitlines()
    detail = f"{type(error).__name__}" + (f": {first[0][:300]}" if first else "")
    lost = isinstance(error, ray.exceptions.NodeDiedError)
    if not lost and stop.node:
        alive = {node.get("NodeID"): node.get("Alive") for node in ray.nodes()}
        lost = not alive.get(stop.node, False)
    if lost:
        where = f" ({stop.node[:12]})" if stop.node else ""
        return (
            f"node lost: the Ray node running the agent{where} left the cluster; its "
            f"mirrored checkpoints are kept ({detail})"
        )
    return f"the Ray worker died ({detail})"


def stopped_before(request: AgentRequest) -> AgentResult:
    return AgentResult(
        task_id=request.task_id,
        is_error=True,
        cancelled=True,
        stop_reason=request.stop.reason or "stopped",
        transcript_path=request.transcript_path,
    )


def _write_transcripts(transcript: Path, outcome: WorkerOutcome) -> None:
    transcript.parent.mkdir(parents=True, exist_ok=True)
    for name, data in (outcome.transcripts or {}).items():
        (transcript.parent / Path(name).name).write_bytes(data)
