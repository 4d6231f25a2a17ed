"""Running one agent as a subprocess: start, stream, limit, stop, reap.

Shared by the ``command``, ``claude-code`` and ``codex`` runners. On Linux every agent
runs under seawall's supervisor (``seawall.sandbox.supervise``) in a session of its
own: the supervisor applies the request's sandbox, and ends every process the agent
started (even those that left its process group or session) when the agent ends or is
stopped. Stopping the agent sends SIGTERM to the supervisor's group and waits until it
is empty (SIGKILL after the grace). Elsewhere the agent runs directly in that session.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE
from typing import BinaryIO

import anyio
from anyio.abc import Process

from seawall.errors import ConfigurationError, RunnerError
from seawall.runner import AgentRequest, AgentResult, Emitter, StopSignal
from seawall.runtime.processes import aend_group, signal_group
from seawall.sandbox.launch import supervised, supervisor_argv, unavailable_reason
from seawall.sandbox.policy import DEVICE_PATHS, SCRATCH_PREFIX, SandboxPolicy, cli_state_paths
from seawall.sandbox.supervise import SANDBOX_FAILED, SUPERVISOR_SAYS

__all__ = [
    "DEFAULT_KILL_GRACE",
    "LineHandler",
    "ProcessOutcome",
    "agent_environment",
    "check_grace",
    "process_result",
    "resolve_executable",
    "run_agent_process",
    "spawn_agent",
]

DEFAULT_KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL of an agent's process group."""

_DRAIN = 1.0  # seconds to wait for output after the agent exited
_SUPERVISOR_MARGIN = 1.0  # beyond the grace: the supervisor's own SIGKILL round
_MAX_LINE = 8 * 1024 * 1024  # a longer "line" is handed on in pieces
_STDERR_TAIL = 8 * 1024

LineHandler = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessOutcome:
    """How the agent process ended."""

    exit_code: int | None
    timed_out: bool = False
    cancelled: bool = False
    stop_reason: str = ""
    stderr_tail: str = ""
    duration_s: float = 0.0


def resolve_executable(name: str, env: Mapping[str, str], *, task_id: str) -> str:
    """The full path of ``name`` on the agent's PATH; ``RunnerError`` naming it if absent."""
    found = shutil.which(name, path=env.get("PATH", os.defpath))
    if found is None:
        raise RunnerError(
            f"task {task_id!r}: cannot start the agent: executable {name!r} "
            "was not found on PATH (install it, or set the runner's executable)"
        )
    return found


def agent_environment(request: AgentRequest, extra: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment: ours, the runner's ``env``, the request's, then SEAWALL_*;
    ``PWD`` is the workspace (some CLIs take their project from it, not from the cwd)."""
    env = dict(os.environ)
    env.update(extra)
    env.update(request.env)
    env.update(request.seawall_env())
    env["PWD"] = str(request.workspace)
    return env


def _open_transcript(path: Path | None) -> BinaryIO | None:
    """The transcript file for raw output (parents created), or None for no transcript."""
    if path is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("wb")


async def spawn_agent(
    argv: Sequence[str],
    *,
    request: AgentRequest,
    env: Mapping[str, str],
    on_line: LineHandler,
    kill_grace: float = DEFAULT_KILL_GRACE,
    state: Sequence[Path] = (),
) -> ProcessOutcome:
    """Resolve ``argv[0]`` on the agent's PATH, keep the transcript, and run the agent
    with the prompt on stdin under the supervisor and the request's sandbox (see
    ``run_agent_process``). A sandboxed agent gets a temporary directory of its own
    (``TMPDIR``), removed when it ends, and may write ``state`` (the CLI's own state
    directories, made when missing)."""
    executable = resolve_executable(argv[0], env, task_id=request.task_id)
    if request.sandbox is not None and (missing := unavailable_reason()):
        raise RunnerError(f"task {request.task_id!r}: cannot sandbox the agent: {missing}")
    with tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX) as scratch:
        env = dict(env)
        policy = None
        if request.sandbox is not None:
            env["TMPDIR"] = scratch
            policy = _agent_policy(
                request.sandbox, Path(scratch), env, Path(executable).name, state
            )
        command = [executable, *argv[1:]]
        if supervised():
            command = supervisor_argv(command, policy=policy, grace=kill_grace)
        transcript = _open_transcript(request.transcript_path)
        try:
            outcome = await run_agent_process(
                command,
                request=request,
                env=env,
                stdin=request.prompt.encode(),
                on_line=on_line,
                transcript=transcript,
                kill_grace=kill_grace + _SUPERVISOR_MARGIN,
            )
        finally:
            if transcript is not None:
                transcript.close()
    if outcome.exit_code == SANDBOX_FAILED and SUPERVISOR_SAYS in outcome.stderr_tail:
        detail = outcome.stderr_tail.strip().splitlines()[-1]
        raise RunnerError(f"task {request.task_id!r}: cannot start the agent: {detail}")
    return outcome


def _agent_policy(
    sandbox: SandboxPolicy,
    scratch: Path,
    env: Mapping[str, str],
    program: str,
    own_state: Sequence[Path],
) -> SandboxPolicy:
    """The session's policy plus the agent's temp dir, CLI state and the usual devices."""
    for directory in own_state:
        directory.mkdir(parents=True, exist_ok=True)  # the sandbox would refuse it later
    state = (*cli_state_paths(env, create_for=program), *own_state)
    return sandbox.with_paths((scratch, *state, *map(Path, DEVICE_PATHS)))


def process_result(
    request: AgentRequest,
    outcome: ProcessOutcome,
    emitter: Emitter,
    *,
    fallback_text: str = "",
    require_final: bool = True,
) -> AgentResult:
    """The ``AgentResult`` of a subprocess agent from its outcome and counted events.

    The final event's text and error flag win. Without one the fallback text is used,
    and the run is an error when ``require_final`` (an agent CLI that always ends with a
    result line crashed or was killed). A non-zero exit is always an error.
    """
    counter = emitter.counter
    final = counter.final
    interrupted = outcome.timed_out or outcome.cancelled
    exit_failed = outcome.exit_code not in (0, None)
    missing_final = final is None and require_final
    return AgentResult(
        task_id=request.task_id,
        final_text=final.text if final is not None else fallback_text,
        exit_code=outcome.exit_code,
        turns=counter.turns,
        tool_calls=counter.tool_calls,
        cost_usd=counter.cost_usd,
        is_error=interrupted or exit_failed or missing_final or bool(final and final.is_error),
        timed_out=outcome.timed_out,
        cancelled=outcome.cancelled,
        stop_reason=outcome.stop_reason,
        transcript_path=request.transcript_path,
        stderr_tail=outcome.stderr_tail,
        duration_s=outcome.duration_s,
    )


async def run_agent_process(
    argv: Sequence[str],
    *,
    request: AgentRequest,
    env: Mapping[str, str],
    stdin: bytes,
    on_line: LineHandler,
    transcript: BinaryIO | None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> ProcessOutcome:
    """Run ``argv`` in the workspace, hand each stdout line to ``on_line``, and reap it.

    Honours ``request.time_limit`` and ``request.stop`` (returns an outcome marked
    ``timed_out`` / ``cancelled``); on outer cancellation kills the process group and
    re-raises. Raises ``RunnerError`` only when the process cannot be started.
    """
    if not request.workspace.is_dir():
        raise RunnerError(
            f"task {request.task_id!r}: cannot start the agent: workspace "
            f"{str(request.workspace)!r} is not a directory"
        )
    if request.stop.reason is not None:  # stopped before it started: start nothing
        return ProcessOutcome(exit_code=None, cancelled=True, stop_reason=request.stop.reason)
    try:
        process = await anyio.open_process(
            list(argv),
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            cwd=request.workspace,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        raise RunnerError(
            f"task {request.task_id!r}: cannot start the agent {argv[0]!r}: {exc}"
        ) from exc
    return await _supervise(process, request, stdin, on_line, transcript, kill_grace)


async def _supervise(
    process: Process,
    request: AgentRequest,
    stdin: bytes,
    on_line: LineHandler,
    transcript: BinaryIO | None,
    kill_grace: float,
) -> ProcessOutcome:
    started = anyio.current_time()
    limit = request.time_limit
    deadline = started + limit if limit is not None else math.inf
    stderr = bytearray()
    stopped: list[str] = []
    try:
        with anyio.CancelScope(deadline=deadline) as limit_scope:
            async with anyio.create_task_group() as group:
                group.start_soon(_watch_stop, request.stop, limit_scope, stopped)
                group.start_soon(_feed_stdin, process, stdin)
                group.start_soon(_pump_stderr, process, stderr)
                stdout_done = anyio.Event()
                group.start_soon(_pump_stdout, process, on_line, transcript, stdout_done)
                await process.wait()
                await _drain(process, stdout_done)
                group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _terminate_group(process, kill_grace)
            await process.aclose()
            if transcript is not None:
                transcript.flush()
    interrupted = limit_scope.cancelled_caught
    return ProcessOutcome(
        exit_code=None if interrupted else process.returncode,
        timed_out=interrupted and not stopped,
        cancelled=interrupted and bool(stopped),
        stop_reason=stopped[0] if stopped else ("time limit" if interrupted else ""),
        stderr_tail=bytes(stderr[-_STDERR_TAIL:]).decode("utf-8", errors="replace"),
        duration_s=anyio.current_time() - started,
    )


async def _watch_stop(stop: StopSignal, scope: anyio.CancelScope, stopped: list[str]) -> None:
    stopped.append(await stop.wait())
    scope.cancel()


async def _feed_stdin(process: Process, data: bytes) -> None:
    stream = process.stdin
    if stream is None:
        return
    try:
        if data:
            await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the agent exited or closed stdin without reading its prompt: its choice
    finally:
        await stream.aclose()


async def _pump_stderr(process: Process, tail: bytearray) -> None:
    if process.stderr is None:
        return
    async for chunk in process.stderr:
        tail.extend(chunk)
        if len(tail) > 2 * _STDERR_TAIL:
            del tail[:-_STDERR_TAIL]


async def _pump_stdout(
    process: Process, on_line: LineHandler, transcript: BinaryIO | None, done: anyio.Event
) -> None:
    """Split stdout into lines for ``on_line``, copying the raw bytes to the transcript."""
    if process.stdout is None:
        done.set()
        return
    pending = b""
    async for chunk in process.stdout:
        if transcript is not None:
            transcript.write(chunk)
            transcript.flush()  # the transcript survives a killed coordinator
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            await on_line(line.decode("utf-8", errors="replace"))
        while len(pending) > _MAX_LINE:
            piece, pending = pending[:_MAX_LINE], pending[_MAX_LINE:]
            await on_line(piece.decode("utf-8", errors="replace"))
    if pending:
        await on_line(pending.decode("utf-8", errors="replace"))
    done.set()


async def _drain(process: Process, stdout_done: anyio.Event) -> None:
    """Wait briefly for the rest of stdout; a leftover child holding the pipe is killed."""
    with anyio.move_on_after(_DRAIN):
        await stdout_done.wait()
    if not stdout_done.is_set():
        signal_group(process.pid, signal.SIGKILL)
        with anyio.move_on_after(_DRAIN):
            await stdout_done.wait()


async def _terminate_group(process: Process, grace: float) -> None:
    """End the agent's process group (the supervisor and the agent) and wait until it is
    empty; the supervisor ends the agent's other descendants before it exits."""
    await aend_group(process.pid, grace=grace)
    with anyio.move_on_after(grace):
        await process.wait()


def check_grace(grace: float) -> float:
    """``grace`` (seconds between SIGTERM and SIGKILL), refused unless finite and >= 0."""
    if isinstance(grace, bool) or not 0 <= grace < math.inf:
        raise ConfigurationError(f"kill_grace must be seconds >= 0, not {grace!r}")
    return float(grace)
