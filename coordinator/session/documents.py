"""What the session commands print with ``--json``: records, written by the one codec.

``seawall run`` and ``seawall resume`` print a :class:`SessionOutcome`; ``seawall
status`` and ``seawall wave finish`` a :class:`SessionStatus` (one :class:`WaveStatus`
per wave, one :class:`AgentStatus` per agent), which the MCP server reads back into the
same record; ``seawall kill`` a :class:`Killed`, ``seawall reset`` a
:class:`LeadReleased` or a :class:`BreakerReset`. A session whose coordinator is gone
shows ``interrupted``: its phase and the status of its agents that have none are a
:class:`ShownPhase` and a :class:`ShownStatus`, the ledger's values and that one more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from seawall.breakers.wave import WaveBreakerState
from seawall.model import Enforcement, Isolation
from seawall.session.result import SessionResult
from seawall.state.ledger import (
    AdoptedRecord,
    AgentRecord,
    ChecksRecord,
    Halt,
    Resolution,
    SessionPhase,
    SessionState,
    SetAsideRecord,
    SpiralRecord,
    WavePhase,
    WaveRecord,
)
from seawall.state.render import set_aside_for_fixes, trip_counts

__all__ = [
    "AgentStatus",
    "BreakerReset",
    "Killed",
    "LeadReleased",
    "SessionOutcome",
    "SessionStatus",
    "ShownPhase",
    "ShownStatus",
    "WaveStatus",
    "outcome_document",
    "status_document",
]

INTERRUPTED = "interrupted"


class ShownPhase(StrEnum):
    """A session's phase as ``status`` shows it: the ledger's, or ``interrupted``."""

    RUNNING = "running"
    HALTED = "halted"
    DONE = "done"
    KILLED = "killed"
    INTERRUPTED = INTERRUPTED  # its coordinator is gone: `seawall resume` finishes it


class ShownStatus(StrEnum):
    """An agent's status as ``status`` shows it: the ledger's, or ``interrupted`` for an
    agent that has none in a session whose coordinator is gone."""

    DONE = "done"
    NO_TESTS_NEEDED = "no-tests-needed"
    PARTIAL = "partial"
    FAILED = "failed"
    SPIRAL = "spiral"
    BLOCKED = "blocked"
    PAUSED = "paused"
    INTERRUPTED = INTERRUPTED


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionOutcome:
    """How a session ended (``seawall run --json``, ``seawall resume --json``)."""

    schema: str = field(default="seawall.outcome/1", init=False)

    session: str
    phase: SessionPhase
    exit_code: int
    waves: int
    done: tuple[str, ...]
    carried_over: tuple[str, ...]
    merged: int
    breaker: WaveBreakerState
    not_merged: tuple[str, ...] = ()  # reviewed, in a wave that halted before its merge
    halt: Halt | None
    state_md: str
    report: str | None


def outcome_document(result: SessionResult) -> SessionOutcome:
    """The document of ``result``."""
    return SessionOutcome(
        session=result.session,
        phase=result.phase,
        exit_code=result.exit_code,
        waves=result.waves,
        done=result.done,
        carried_over=result.abandoned,
        merged=result.merged,
        not_merged=result.unmerged,
        breaker=result.breaker,
        halt=result.halt,
        state_md=str(result.state_md),
        report=None if result.report is None else str(result.report),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentStatus:
    """One agent of a wave: how it ran and what came of it; ``issue`` is its carryover
    issue's number, ``set_aside`` the conflicts that kept its version out of the merge."""

    task: str
    status: ShownStatus | None
    summary: str
    remaining: str
    inferred: bool
    reason: str
    turns: int
    tool_calls: int
    cost_usd: float
    elapsed_s: float
    spiral: SpiralRecord | None
    issue: int | None
    merged: bool
    set_aside: tuple[Resolution, ...]
    cost_estimated: bool
    input_tokens: int  # uncached input
    output_tokens: int
    cache_read_tokens: int = 0  # cached input read
    cache_write_tokens: int = 0  # cached input written
    tokens: int = 0  # all of them: what budgets.tokens counts
    model: str = ""  # the model of this attempt, when the task names its models
    hard_trips: int = 0  # 1 when a breaker stopped the agent
    soft_trips: int = 0  # nudges to run the check (unverified-edits): the agent went on
    conversation: str = ""  # the agent CLI's conversation id ("" when it named none)
    continued: str = ""  # the conversation this agent continued ("" for a fresh start)


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveStatus:
    """One wave: how it ran, its checks, its agents, what it set aside."""

    number: int
    isolation: Isolation
    enforcement: Enforcement
    base: str
    phase: WavePhase
    checks: ChecksRecord | None
    agents: tuple[AgentStatus, ...]
    set_aside: SetAsideRecord | None
    adopted: AdoptedRecord | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStatus:
    """A session as ``seawall status --json`` shows it. ``next`` is the command that
    continues it, when one does; ``breaker`` is the wave breaker's state (armed, with
    no counts, before its first wave); ``halt`` why it halted when no breaker tripped."""

    schema: str = field(default="seawall.status/1", init=False)

    session: str
    phase: ShownPhase
    next: str | None
    target_branch: str
    cost_usd: float
    waves: tuple[WaveStatus, ...]
    pending: tuple[str, ...]
    breaker: WaveBreakerState
    halt: Halt | None
    hard_trips: int = 0  # agents a per-agent breaker stopped
    soft_trips: int = 0  # soft trips (a nudge to run the check), counted apart


def status_document(state: SessionState, *, interrupted: bool = False) -> SessionStatus:
    """The status document of the session ``state`` is the ledger of; ``interrupted``
    when its coordinator is gone."""
    phase = ShownPhase.INTERRUPTED if interrupted else ShownPhase(state.phase)
    continues = interrupted or state.phase is SessionPhase.HALTED
    hard, soft = trip_counts(agent for wave in state.waves for agent in wave.agents)
    return SessionStatus(
        session=state.session,
        phase=phase,
        next="seawall resume" if continues else None,
        target_branch=state.target_branch,
        cost_usd=state.cost_usd,
        waves=tuple(_wave(wave, interrupted=interrupted) for wave in state.waves),
        pending=tuple(task.id for task in state.pending),
        breaker=state.breaker or WaveBreakerState(),
        halt=state.halt,
        hard_trips=hard,
        soft_trips=soft,
    )


def _wave(wave: WaveRecord, *, interrupted: bool) -> WaveStatus:
    return WaveStatus(
        number=wave.number,
        isolation=wave.isolation,
        enforcement=wave.enforcement,
        base=wave.base,
        phase=wave.phase,
        checks=wave.checks,
        agents=tuple(_agent(wave, agent, interrupted=interrupted) for agent in wave.agents),
        set_aside=wave.set_aside,
        adopted=wave.adopted,
    )


def _agent(wave: WaveRecord, agent: AgentRecord, *, interrupted: bool) -> AgentStatus:
    if agent.status is not None:
        status: ShownStatus | None = ShownStatus(agent.status)
    else:
        status = ShownStatus.INTERRUPTED if interrupted else None
    return AgentStatus(
        task=agent.task,
        status=status,
        summary=agent.summary,
        remaining=agent.remaining,
        inferred=agent.inferred,
        reason=agent.reason,
        turns=agent.turns,
        tool_calls=agent.tool_calls,
        cost_usd=agent.cost_usd,
        elapsed_s=agent.elapsed_s,
        spiral=agent.spiral,
        issue=None if agent.issue is None else agent.issue.number,
        merged=agent.merged,
        set_aside=tuple(set_aside_for_fixes(wave, agent.task)),
        cost_estimated=agent.cost_estimated,
        input_tokens=agent.input_tokens,
        output_tokens=agent.output_tokens,
        cache_read_tokens=agent.cache_read_tokens,
        cache_write_tokens=agent.cache_write_tokens,
        tokens=agent.tokens,
        model=agent.model,
        hard_trips=trip_counts([agent])[0],
        soft_trips=trip_counts([agent])[1],
        conversation=agent.conversation,
        continued=agent.continued,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Killed:
    """A session ``seawall kill`` ended; its agents' work stays on ``refs``. ``requested``:
    a coordinator was running the session, and was asked to stop it (``phase`` is still
    ``running`` until it has)."""

    schema: str = field(default="seawall.kill/1", init=False)

    session: str
    phase: SessionPhase
    refs: str
    requested: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class LeadReleased:
    """``seawall reset --lead``: whether a lead's hold on the repository was released."""

    schema: str = field(default="seawall.reset-lead/1", init=False)

    session: str
    released: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerReset:
    """``seawall reset --agent``: whether the agent's breaker was tripped and is cleared."""

    schema: str = field(default="seawall.reset-agent/1", init=False)

    agent: str
    cleared: bool
