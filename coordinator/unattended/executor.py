"""Executors: what runs one queue item. The default runs one session as a subprocess.

An executor is any callable taking an ``ExecutionRequest`` and returning an
``ExecutionResult``; its outcome is data. Tests inject a Python callable; the runner
uses ``SubprocessExecutor``, which runs ``<python> -m coordinator run PLAN --repo REPO``
with a wall-clock timeout and maps the exit code by ``outcomes.EXIT_CODE_OUTCOMES``;
a failed run's detail quotes the last error line the session printed, and its signature
says whether the next failure is the same one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from seawall.runtime.processes import end_group
from seawall.unattended.failure import read_failure, read_resume_after
from seawall.unattended.outcomes import SUCCESS_OUTCOMES, Outcome, outcome_for_exit_code
from seawall.unattended.queue import QueueItem

__all__ = [
    "DEFAULT_SESSION_COMMAND",
    "ExecutionRequest",
    "ExecutionResult",
    "Executor",
    "SubprocessExecutor",
]

DEFAULT_SESSION_COMMAND: tuple[str, ...] = (sys.executable, "-m", "seawall", "run")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionRequest:
    """One session to run: the item, its run's task id, where, and for how long."""

    item: QueueItem
    task_id: str
    repo: Path
    log_path: Path  # the session's output is appended here
    timeout_sec: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionResult:
    """What came out of one session."""

    outcome: str
    exit_code: int | None = None
    publish_gate: str | None = None  # set when the publish step refused
    detail: str | None = None
    signature: str | None = None  # of a failed run's error lines (``failure.run_failure``)
    resume_after: float | None = None  # a provider's limit: when its reset lets work go on


Executor = Callable[[ExecutionRequest], ExecutionResult]


class SubprocessExecutor:
    """Runs ``[*command, PLAN, "--repo", REPO]`` in its own process group.

    Output goes to the runner log (opened in append mode). On timeout the whole group
    gets SIGTERM, then SIGKILL after ``kill_grace_sec``; the outcome is ``timed-out``.
    A command that cannot start is ``failed``, as is death by a signal.
    """

    def __init__(
        self, *, command: Sequence[str] = DEFAULT_SESSION_COMMAND, kill_grace_sec: float = 10.0
    ) -> None:
        if not command:
            raise ValueError("the session command must not be empty")
        self.command = tuple(command)
        self.kill_grace_sec = kill_grace_sec

    def argv(self, request: ExecutionRequest) -> list[str]:
        return [*self.command, request.item.plan, "--repo", str(request.repo)]

    def __call__(self, request: ExecutionRequest) -> ExecutionResult:
        request.log_path.parent.mkdir(parents=True, exist_ok=True)
        with request.log_path.open("ab") as log:
            offset = log.tell()  # where this run's output begins
            try:
                process = subprocess.Popen(
                    self.argv(request),
                    cwd=request.repo,
                    # the session never sets aside the runner's own files
                    env={**os.environ, "SEAWALL_RUNNER_DIR": str(request.log_path.parent)},
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as exc:
                return ExecutionResult(
                    outcome=Outcome.FAILED, detail=f"could not start {self.command[0]}: {exc}"
                )
            try:
                code = process.wait(timeout=request.timeout_sec)
            except subprocess.TimeoutExpired:
                self._stop(process)
                return ExecutionResult(
                    outcome=Outcome.TIMED_OUT,
                    detail=f"no result after {request.timeout_sec:g}s; the session was stopped",
                )
            except BaseException:
                # The tick itself is being stopped (SIGINT/SIGTERM): take the session
                # with it. Its ``running`` row stays; the next tick records it as died.
                self._stop(process)
                raise
        return _with_failure(_result_for_code(code), request.log_path, offset)

    def _stop(self, process: subprocess.Popen[bytes]) -> None:
        end_group(process.pid, grace=self.kill_grace_sec)
        process.wait()


def _with_failure(result: ExecutionResult, log: Path, offset: int) -> ExecutionResult:
    """``result`` with the failure its session printed, when it failed."""
    if result.outcome in SUCCESS_OUTCOMES:
        return result
    if result.outcome == Outcome.RATE_LIMITED:
        result = replace(result, resume_after=read_resume_after(log, offset))
    failure = read_failure(log, offset)
    if failure is None:
        return result
    detail = f"{result.detail}: {failure.line}" if result.detail else failure.line
    return replace(result, detail=detail, signature=failure.signature)


def _result_for_code(code: int) -> ExecutionResult:
    if code < 0:
        return ExecutionResult(
            outcome=Outcome.FAILED, exit_code=code, detail=f"killed by signal {-code}"
        )
    outcome = outcome_for_exit_code(code)
    return ExecutionResult(outcome=outcome, exit_code=code, detail=f"exit {code}")
