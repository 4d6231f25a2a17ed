"""A provider's limit is a pause: the agent that met it runs again after the reset.

An agent whose CLI reported a provider limit (``seawall.events.ProviderLimit``) is
``paused``, never ``failed``: its work so far is checkpointed and merged like a partial
agent's, nothing is filed, no fix task is made and the wave breaker does not count it.
When its wave ends (``settle_pauses``) the task goes back to the pending work as a
fresh dispatch carrying its work forward, and the provider is *held* until the reset:

- ``[session] on_limit = "wait"`` (the default): the session goes on; the next
  dispatches of agents of that provider wait for the reset (``hold``), the other agents
  run at once. A reset further than ``max_wait`` minutes ahead halts instead.
- ``on_limit = "halt"``: the session halts at once.

A task paused ``MAX_PAUSES`` dispatches in a row halts the session too, whatever
``on_limit`` says: a provider that refuses it again at every reset needs a person.

A halt exits 6 and names the provider and the reset time (``Halt.provider``,
``Halt.resets_at``), so a timer or ``seawall runner`` resumes at the right moment; the
hold stays recorded, and a resume before the reset waits for it. A limit whose CLI gave
no reset time holds for ``UNKNOWN_RESET`` seconds.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import anyio

from seawall.events import ProviderLimit
from seawall.model import OnLimit, Status, Task
from seawall.runner import AgentRequest, AgentResult, AgentRunner, EmitFn
from seawall.session.context import WaveContext
from seawall.state.ledger import AgentRecord, Halt, HaltReason, SessionPhase, WaveRecord
from seawall.telemetry import SessionHalted

__all__ = [
    "MAX_PAUSES",
    "UNKNOWN_RESET",
    "HeldRunner",
    "format_reset",
    "held_runner",
    "limit_reason",
    "paused_agents",
    "settle_pauses",
]

UNKNOWN_RESET = 300.0
"""Seconds a provider is held after a limit whose reset time its CLI did not say."""

MAX_PAUSES = 3
"""Dispatches in a row a provider's limit may pause one task before the session halts."""


def format_reset(resets_at: float | None) -> str:
    """A reset time as people read it: ``2026-12-05 22:16:00 UTC`` (or "unknown")."""
    if resets_at is None:
        return "an unknown time"
    return datetime.fromtimestamp(resets_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def limit_reason(limit: ProviderLimit) -> str:
    """Why an agent is paused, in one line."""
    who = limit.provider or "the provider"
    return f"paused: {who}'s {limit.kind} limit, resets at {format_reset(limit.resets_at)}"


def paused_agents(wave: WaveRecord) -> list[AgentRecord]:
    """The agents of ``wave`` a provider's limit paused."""
    return [a for a in wave.agents if a.status is Status.PAUSED]


def settle_pauses(ctx: WaveContext, wave: WaveRecord, tasks: dict[str, Task]) -> list[Task]:
    """Hold the providers that paused agents of the ended ``wave`` and halt the session
    when ``on_limit`` says so (or a reset lies past ``max_wait``); the tasks to run
    again (each a fresh dispatch carrying its work forward)."""
    paused = paused_agents(wave)
    if not paused:
        return []
    now = time.time()
    holds = dict(ctx.state.holds)
    for record in paused:
        limit = record.run.limit if record.run is not None else None
        provider = limit.provider if limit is not None else ""
        until = limit.resets_at if limit is not None and limit.resets_at else None
        holds[provider] = max(holds.get(provider, 0.0), until or now + UNKNOWN_RESET)
        ctx.progress.log(f"W{wave.number} {record.task}: {record.reason}")
    ctx.state.holds = holds
    config = ctx.config
    latest = max(paused, key=lambda r: holds[_provider(r)])
    provider, until = _provider(latest), holds[_provider(latest)]
    again = [r for r in paused if ctx.state.task(r.task).pauses >= MAX_PAUSES]
    if again:
        why = f"paused {MAX_PAUSES} dispatches in a row"
        _halt(ctx, wave, again[0], _provider(again[0]), holds[_provider(again[0])], why)
    elif config.on_limit is OnLimit.HALT:
        _halt(ctx, wave, latest, provider, until, 'on_limit is "halt"')
    elif until - now > config.max_wait * 60.0:
        why = (
            f"{(until - now) / 60.0:.0f} minutes away, past max_wait ({config.max_wait:g} minutes)"
        )
        _halt(ctx, wave, latest, provider, until, why)
    else:
        ctx.progress.log(
            f"wave {wave.number}: {provider or 'the provider'}'s limit: its agents wait "
            f"until {format_reset(until)}; the others go on"
        )
    return [tasks[record.task] for record in paused]


def _provider(record: AgentRecord) -> str:
    limit = record.run.limit if record.run is not None else None
    return limit.provider if limit is not None else ""


def _halt(
    ctx: WaveContext, wave: WaveRecord, record: AgentRecord, provider: str, until: float, why: str
) -> None:
    limit = record.run.limit if record.run is not None else None
    said = limit.resets_at if limit is not None else None
    who = provider or "the provider"
    kind = limit.kind if limit is not None else "rate"
    detail = (
        f"wave {wave.number}: {record.task} met {who}'s {kind} limit, which resets at "
        f"{format_reset(said)} ({why})"
    )
    halt = Halt(
        reason=HaltReason.RATE_LIMITED,
        detail=detail,
        wave=wave.number,
        provider=provider,
        resets_at=said,
        next=f"`seawall resume` after {format_reset(until)}: the paused agents run again",
    )
    ctx.state.phase = SessionPhase.HALTED
    ctx.state.halt = halt
    ctx.events.append(SessionHalted(wave=wave.number, reason=HaltReason.RATE_LIMITED))
    ctx.progress.log(f"{detail}; halted. Next: {halt.next}")


class HeldRunner(AgentRunner):
    """A runner whose agents wait for their provider's reset before they start (or
    until they are stopped); the wait is not part of the agent's time limit."""

    def __init__(self, inner: AgentRunner, until: float) -> None:
        self.inner = inner
        self.until = until

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def barrier(self) -> str:
        return self.inner.barrier

    @property
    def continues_conversations(self) -> bool:
        return self.inner.continues_conversations

    @property
    def reports_edits(self) -> bool:
        # the inner runner's: otherwise a held agent's workspace would be watched for
        # writes its runner names anyway (and the sandbox's empty scope files taken
        # for the agent's)
        return self.inner.reports_edits

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        with anyio.move_on_after(max(0.0, self.until - time.time())):
            await request.stop.wait()
        return await self.inner.run(request, emit)


def held_runner(ctx: WaveContext, task: Task, runner: AgentRunner) -> AgentRunner:
    """``runner``, waiting first for its provider's recorded reset when it lies ahead."""
    until = ctx.state.holds.get(runner.provider)
    if until is None or until <= time.time():
        return runner
    ctx.progress.log(
        f"{task.id}: waits for {runner.provider or 'the provider'}'s limit to reset at "
        f"{format_reset(until)}"
    )
    return HeldRunner(runner, until)
