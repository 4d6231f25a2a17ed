"""An interrupted agent continues its own conversation; the fix of its work goes back to it.

When a task's agent ran on a runner that can continue a conversation
(``AgentRunner.continues_conversations``) and its CLI named one (``AgentRecord.conversation``,
from the ``Conversation`` event; a resume after a kill reads it from the agent's live
file), the task's next dispatch continues that conversation instead of starting a new
agent that must read everything again:

- paused by a provider's limit, or stopped by the coordinator's end (a kill, salvaged on
  resume): it goes on where it was; the turns it used count against its limit;
- stopped by a time or turn limit, or reporting PARTIAL: it finishes what is left;
- FAILED (a failed check, a rejected STATUS, an error): it is told the failure and fixes
  its own work;
- its work conflicted in the merge: the conflict's fix task continues the author's
  conversation (``seawall.session.phases.merge``).

The continued agent works in a fresh workspace on the new base (its work so far merged
there) and is told so; its message is ``prompts/continue.txt``, dispatched with the usual
FILE-SCOPE, TURN LIMIT and STATUS blocks. Not continued, and given a new agent with the
carry-forward or fix prompt as before: a spiral (reverted and re-scoped: that conversation
is the problem), an agent a breaker stopped, a runner that cannot, ``[session]
continue_conversations = false``, and a conversation another pending task continues
already. A conversation the CLI cannot continue any more (gone from its store) starts the
agent afresh at dispatch (``AgentJob.fresh``), said in the run's notes and STATE.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from seawall.model import Status, Task
from seawall.prompting import render_continue_prompt
from seawall.runner import AgentRequest
from seawall.session.after_review import failure_text
from seawall.session.context import WaveContext
from seawall.state.ledger import AgentRecord, ConversationRef, WaveRecord

__all__ = [
    "SALVAGED",
    "RenderFn",
    "continue_later",
    "continued_request",
    "continues",
    "moved",
    "recovery_continuation",
    "said_at_dispatch",
    "take_continuation",
]

RenderFn = Callable[[Task, str], str]
"""Renders task text as an agent's whole prompt, given the WORKSPACE line's path ("")."""

SALVAGED = "the coordinator stopped before the agent reported"
"""The stop reason of an agent a resume salvaged (the coordinator died under it)."""


def continues(ctx: WaveContext, task: Task) -> bool:
    """Whether ``task``'s agents may continue conversations (the plan and the runner)."""
    return ctx.config.continue_conversations and ctx.runner_for(task).continues_conversations


def continue_later(
    ctx: WaveContext,
    record: AgentRecord,
    task: Task,
    *,
    happened: str,
    next_step: str,
    turns: int = 0,
) -> bool:
    """Make ``task``'s next dispatch continue the conversation of ``record``'s agent,
    with a message saying what ``happened`` and the ``next_step``; ``turns`` count
    against the continued agent's limit. False, and the task starts afresh, when it
    cannot (see the module docstring)."""
    task_record = ctx.state.task(task.id)
    task_record.conversation = None
    conversation = record.conversation
    if not conversation or not continues(ctx, task):
        return False
    if any(
        other.conversation is not None and other.conversation.id == conversation
        for other in ctx.state.tasks.values()
    ):
        return False  # one conversation, one agent at a time
    task_record.conversation = ConversationRef(
        id=conversation,
        workspace=record.workspace,
        happened=_one_line(happened),
        next_step=next_step,
        turns=turns,
        by=record.task,
        model=record.model,
    )
    return True


def recovery_continuation(ctx: WaveContext, record: AgentRecord, next_task: Task) -> bool:
    """After review: continue the conversation of an agent that stopped short (partial,
    paused, failed without a breaker's stop) in its task's next dispatch."""
    status = record.status
    run = record.run
    stop = run.stop_reason if run is not None else ""
    # an interruption from outside keeps the turns used, over every run of the conversation
    used = record.turns + (record.resumes.turns if record.resumes is not None else 0)
    if status is Status.PAUSED:
        happened = record.reason or "the model provider's limit stopped you"
        return continue_later(
            ctx,
            record,
            next_task,
            happened=f"you were {happened}; the limit has reset",
            next_step="Go on with your task where you left off.",
            turns=used,
        )
    if status is Status.PARTIAL:
        left = f"What is left: {record.remaining}" if record.remaining else ""
        if stop == SALVAGED:
            return continue_later(
                ctx,
                record,
                next_task,
                happened="you were interrupted: the session stopped before you finished",
                next_step=f"Go on with your task where you left off. {left}".strip(),
                turns=used,
            )
        happened = f"you were stopped ({stop})" if stop else "you reported STATUS: partial"
        return continue_later(
            ctx,
            record,
            next_task,
            happened=happened,
            next_step=f"Finish the task. {left}".strip(),
        )
    if status is Status.FAILED and record.trip is None:
        return continue_later(
            ctx,
            record,
            next_task,
            happened="your attempt ended as FAILED",
            next_step=(
                f"The error:\n\n{failure_text(record)}\n\n"
                "Find the cause, fix your work, and finish the task."
            ),
        )
    ctx.state.task(next_task.id).conversation = None
    return False


def take_continuation(ctx: WaveContext, agent: AgentRecord, task: Task) -> None:
    """While a wave is prepared: the conversation ``task``'s agent continues, moved from
    the task's record onto the agent's; dropped when the runner cannot continue it, or
    when the attempt escalates to another model (``Task.models``): a model does not
    continue another's conversation."""
    task_record = ctx.state.task(task.id)
    ref = task_record.conversation
    if ref is None:
        return
    task_record.conversation = None
    if continues(ctx, task) and ref.model == agent.model:
        agent.resumes = ref


def continued_request(
    request: AgentRequest, ref: ConversationRef, task: Task, *, render: RenderFn
) -> AgentRequest:
    """``request`` (the fresh start of ``task``) as a continuation of ``ref``: the
    message that continues it (``render``-ed as task text, with a WORKSPACE line when the
    agent works somewhere new), the turns left, the conversation and where it ran."""
    limit = request.max_turns
    turns = limit if limit is None else max(1, limit - ref.turns)
    elsewhere = moved(ref, str(request.workspace))
    text = render_continue_prompt(happened=ref.happened, next_step=ref.next_step, moved=elsewhere)
    prompt = render(
        replace(task, prompt=text, max_turns=turns),
        str(request.workspace) if elsewhere else "",
    )
    return replace(
        request,
        prompt=prompt,
        max_turns=turns,
        conversation=ref.id,
        conversation_workspace=Path(ref.workspace) if ref.workspace else None,
    )


def moved(ref: ConversationRef, workspace: str) -> bool:
    """Whether the continued agent works somewhere else than its conversation did."""
    return bool(ref.workspace) and os.path.realpath(ref.workspace) != os.path.realpath(workspace)


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "you were stopped"


def said_at_dispatch(wave: WaveRecord, agent: AgentRecord) -> str:
    """The console's line for an agent continuing a conversation."""
    ref = agent.resumes
    if ref is None:
        return ""
    whose = f" (the agent of {ref.by})" if ref.by and ref.by != agent.task else ""
    return f"W{wave.number} {agent.task}: continues the conversation {ref.id}{whose}"
