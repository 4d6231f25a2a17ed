"""The recovery protocol: what happens to a task after its wave was reviewed.

- ``done`` / ``no-tests-needed``: nothing; the task is finished.
- ``partial``: its REMAINING work is carried into the next wave with context.
- ``failed`` (and ``blocked``, a tripped per-agent breaker): a fix task with corrected
  instructions goes into the next wave, and the first failure files a carryover issue.
- ``spiral``: the agent's changes are reverted (never merged), the task is re-scoped to
  a single file and re-dispatched; a second spiral escalates with a carryover issue and
  the task is not dispatched again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from seawall.model import Status, Task, TaskKind
from seawall.prompting import (
    ERROR_CLASSES,
    render_carry_forward_prompt,
    render_fix_prompt,
    render_rescope_prompt,
)
from seawall.state.ledger import AgentRecord, SpiralRecord, TaskRecord

__all__ = ["Action", "Recovery", "decide_recovery", "failure_text"]


class Action(StrEnum):
    NONE = "none"
    CARRY_FORWARD = "carry-forward"
    FIX = "fix"
    RESCOPE = "rescope"
    ESCALATE = "escalate"


@dataclass(frozen=True, slots=True, kw_only=True)
class Recovery:
    """What to do with a task: the next task to queue (if any) and a carryover to file."""

    action: Action
    next_task: Task | None = None
    carryover: str | None = None  # "SPIRAL" or "FAILED"
    reason: str = ""


def decide_recovery(
    original: Task, agent: AgentRecord, record: TaskRecord, *, max_attempts: int = 4
) -> Recovery:
    """Decide the recovery for one agent of a reviewed wave.

    ``original`` is the task as the plan gave it (prompts are always rebuilt from it, so
    a third attempt does not nest the second one's instructions); ``record`` is the
    task's history, already updated with this wave's outcome. A task that has used
    ``max_attempts`` dispatches is escalated whatever its status: re-dispatching is
    bounded even with the wave breaker disabled.
    """
    status = agent.status or Status.FAILED
    if status.is_success:
        return Recovery(action=Action.NONE, reason="finished")
    if record.attempts >= max_attempts:
        kind = "SPIRAL" if status is Status.SPIRAL else "FAILED"
        return Recovery(
            action=Action.ESCALATE,
            carryover=kind,
            reason=f"{record.attempts} attempts used: escalated",
        )
    if status is Status.PARTIAL:
        prompt = render_carry_forward_prompt(
            original, done=agent.summary, remaining=agent.remaining
        )
        return Recovery(
            action=Action.CARRY_FORWARD,
            next_task=_next(original, prompt),
            reason="partial: remaining work carried forward",
        )
    if status is Status.SPIRAL:
        return _spiral(original, agent, record)
    return _failed(original, agent, record)


def _spiral(original: Task, agent: AgentRecord, record: TaskRecord) -> Recovery:
    if record.spirals >= 2:
        return Recovery(
            action=Action.ESCALATE,
            carryover="SPIRAL",
            reason=f"spiralled {record.spirals} times: escalated",
        )
    verdict = agent.spiral or SpiralRecord(summary="")
    files = list(verdict.files)
    in_scope = [
        f
        for f in files
        if not original.scope
        or f in original.scope
        or any(f.startswith(s) for s in original.scope if s.endswith("/"))
    ]
    target = (
        in_scope or files or list(original.scope) or ["the single function named in the task"]
    )[0]
    evidence = list(verdict.evidence) or [
        verdict.summary or "the same file was edited again and again"
    ]
    prompt = render_rescope_prompt(original, target=target, evidence=evidence)
    narrowed = (target,) if target in files or target in original.scope else original.scope
    task = replace(_next(original, prompt), scope=narrowed)
    return Recovery(
        action=Action.RESCOPE, next_task=task, reason=f"spiral: reverted and re-scoped to {target}"
    )


def _failed(original: Task, agent: AgentRecord, record: TaskRecord) -> Recovery:
    error_class = "other"
    for finding in agent.findings:
        if finding.error_class in ERROR_CLASSES:
            error_class = str(finding.error_class)
    error = failure_text(agent)
    if agent.trip:
        error = f"breaker {agent.trip.kind.label}: {agent.trip.evidence}\n{error}"
    prompt = render_fix_prompt(original, error=error, error_class=error_class)
    carryover = None if record.issue is not None else "FAILED"
    return Recovery(
        action=Action.FIX,
        next_task=_fix_task(original, prompt),
        carryover=carryover,
        reason="failed: fix task queued",
    )


def failure_text(agent: AgentRecord) -> str:
    """What a FAILED agent met, as its fix is told: its error, else its report."""
    return agent.error_signature or agent.summary or agent.reason or "the agent reported failure"


def _next(original: Task, prompt: str) -> Task:
    return replace(original, prompt=prompt, depends_on=())


def _fix_task(original: Task, prompt: str) -> Task:
    kind = original.kind if original.kind is TaskKind.TEST_WRITER else TaskKind.FIX
    return replace(_next(original, prompt), kind=kind)
