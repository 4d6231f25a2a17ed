"""What a session report shows, read from the ledger and the telemetry stream.

The ledger (``state.json``) is the truth; ``events.jsonl`` only adds what the ledger
does not keep (when each agent finished). Fields a ledger of an older or newer writer
lacks read as empty, so a report of any session renders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from seawall.state.ledger import AgentRecord, SessionState, WaveRecord
from seawall.state.render import set_aside, trip_counts
from seawall.telemetry import (
    AgentFinished,
    CarryoverClosed,
    CarryoverFiled,
    TelemetryEvent,
    UnknownEvent,
    WaveMerged,
)

__all__ = [
    "AgentFacts",
    "IssueFacts",
    "SessionFacts",
    "Totals",
    "WaveFacts",
    "agent_tokens",
    "gather",
]

_SUCCESS = ("done", "no-tests-needed")


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentFacts:
    """One agent of one wave as the report shows it."""

    wave: int
    record: AgentRecord
    started_at: float
    finished_at: float
    tokens: int  # every input and output token, cached input included
    diff: str = ""  # a patch file on disk, when one was written
    cached_tokens: int = 0  # the cached share of ``tokens``

    @property
    def task(self) -> str:
        return self.record.task

    @property
    def status(self) -> str:
        return self.record.status or "running"

    @property
    def succeeded(self) -> bool:
        return self.status in _SUCCESS


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveFacts:
    record: WaveRecord
    agents: tuple[AgentFacts, ...]
    merged: tuple[str, ...]
    set_aside: tuple[tuple[str, str], ...]  # (path, what became of it)

    @property
    def number(self) -> int:
        return self.record.number


@dataclass(frozen=True, slots=True, kw_only=True)
class Totals:
    agents: int = 0
    succeeded: int = 0
    turns: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    merged: int = 0
    conflicts: int = 0
    issues: tuple[int, ...] = ()
    hard_trips: int = 0
    soft_trips: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class IssueFacts:
    """A carryover issue of the session: ``closed`` once the session closed it (its task
    landed later, or it duplicated another), as the session's telemetry records it."""

    number: int
    url: str = ""
    closed: bool = False

    @property
    def state(self) -> str:
        return "closed" if self.closed else "open"


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionFacts:
    state: SessionState
    waves: tuple[WaveFacts, ...]
    totals: Totals
    phase_label: str  # the ledger's phase, or "interrupted" when its coordinator is gone
    events: tuple[TelemetryEvent | UnknownEvent, ...] = field(default=())
    issues: Mapping[int, IssueFacts] = field(default_factory=dict)  # by number


def agent_tokens(agent: AgentRecord) -> int:
    """Every input and output token, cached input included, from the ledger's fields
    or the recorded run's counts."""
    if agent.tokens or agent.run is None:
        return agent.tokens
    return agent.run.counts.tokens


def gather(
    state: SessionState,
    events: Sequence[TelemetryEvent | UnknownEvent] = (),
    diffs: Mapping[tuple[int, str], str] | None = None,
    *,
    interrupted: bool = False,
) -> SessionFacts:
    """The report's facts of ``state``; ``events`` are the session's telemetry records,
    ``diffs`` the patch files by ``(wave, task)``, ``interrupted`` whether the session
    is recorded as running while no coordinator holds its lock."""
    finished = {(e.wave, e.agent): e for e in events if isinstance(e, AgentFinished) and e.agent}
    merges: dict[int, list[str]] = {}
    for e in events:
        if isinstance(e, WaveMerged):
            merges.setdefault(e.wave, []).extend(e.merged)
    waves = tuple(_wave(wave, finished, merges, diffs or {}) for wave in state.waves)
    return SessionFacts(
        state=state,
        waves=waves,
        totals=_totals(state, waves),
        phase_label="interrupted" if interrupted else str(state.phase),
        events=tuple(events),
        issues=_issues(state, events),
    )


def _issues(
    state: SessionState, events: Sequence[TelemetryEvent | UnknownEvent]
) -> dict[int, IssueFacts]:
    """Every carryover issue the ledger or the telemetry names, and whether it closed."""
    urls: dict[int, str] = {}
    refs = [task.issue for task in state.tasks.values()]
    refs += [agent.issue for wave in state.waves for agent in wave.agents]
    for ref in refs:
        if ref is not None:
            urls[ref.number] = urls.get(ref.number) or ref.url
    for event in events:
        if isinstance(event, CarryoverFiled) and event.number is not None:
            urls[event.number] = urls.get(event.number) or event.url or ""
    closed = {e.number for e in events if isinstance(e, CarryoverClosed) and e.closed and e.number}
    return {
        number: IssueFacts(number=number, url=urls[number], closed=number in closed)
        for number in sorted(urls)
    }


def _wave(
    wave: WaveRecord,
    finished: Mapping[tuple[int, str], AgentFinished],
    merges: Mapping[int, Sequence[str]],
    diffs: Mapping[tuple[int, str], str],
) -> WaveFacts:
    agents = []
    for agent in wave.agents:
        event = finished.get((wave.number, agent.task))
        end = event.ts if event else (wave.finished_at if agent.status else 0.0)
        start = end - agent.elapsed_s if end and agent.elapsed_s else wave.started_at
        agents.append(
            AgentFacts(
                wave=wave.number,
                record=agent,
                started_at=start,
                finished_at=end,
                tokens=agent_tokens(agent),
                cached_tokens=agent.cached_tokens,
                diff=diffs.get((wave.number, agent.task), ""),
            )
        )
    merged = tuple(merges.get(wave.number) or (a.task for a in wave.agents if a.merged))
    return WaveFacts(
        record=wave, agents=tuple(agents), merged=merged, set_aside=tuple(set_aside(wave))
    )


def _totals(state: SessionState, waves: Sequence[WaveFacts]) -> Totals:
    agents = [a for w in waves for a in w.agents]
    issues = sorted({t.issue.number for t in state.tasks.values() if t.issue is not None})
    start = state.created_at or min((a.started_at for a in agents if a.started_at), default=0)
    end = max((w.record.finished_at for w in waves), default=0.0) or state.updated_at
    hard, soft = trip_counts(a.record for a in agents)
    return Totals(
        agents=len(agents),
        succeeded=sum(1 for a in agents if a.succeeded),
        turns=sum(a.record.turns for a in agents),
        tool_calls=sum(a.record.tool_calls for a in agents),
        tokens=sum(a.tokens for a in agents),
        cached_tokens=sum(a.cached_tokens for a in agents),
        cost_usd=round(state.cost_usd or sum(a.record.cost_usd for a in agents), 4),
        wall_s=max(0.0, end - start) if start and end else 0.0,
        merged=sum(1 for a in agents if a.record.merged),
        conflicts=sum(len(w.record.resolutions) for w in waves),
        issues=tuple(issues),
        hard_trips=hard,
        soft_trips=soft,
    )
