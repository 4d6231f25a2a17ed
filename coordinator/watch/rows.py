"""A session as ``seawall watch`` shows it, read from the session's files alone.

The ledger (``state.json``, through ``seawall.state``) gives the waves, each agent's
record and the session's phase; an agent that ended in a wave not yet saved has its run
file (``agents/<task>/w<n>-run.json``); a running agent has its live file
(``agents/<task>/w<n>-live.json``, ``seawall.state.live``), whose start time makes its
elapsed time move; the telemetry (``events.jsonl``, ``seawall.telemetry.read_events``)
gives the breaker trips. Nothing is asked of the coordinator: a second terminal, a
finished session and a session whose coordinator died read the same way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from seawall.codec import decode
from seawall.errors import SeawallError
from seawall.model import Budgets
from seawall.report import is_interrupted
from seawall.state import AgentRecord, SessionPhase, SessionState, StateStore, WavePhase
from seawall.state import WaveRecord as LedgerWave
from seawall.state.live import LiveCounts, live_path, read_live, read_stop, session_stop_path
from seawall.state.runs import AgentRun
from seawall.telemetry import BreakerTripped, read_events

__all__ = ["AgentView", "SessionReader", "SessionView", "WaveView", "read_view"]

WARN_FRACTION = 0.8  # of a budget, when the row warns


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentView:
    """One agent of one wave, now."""

    wave: int
    task: str
    state: str  # waiting, running, stopping, finished, stopped, interrupted, or its status
    running: bool
    elapsed_s: float
    turns: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    cost_estimated: bool = False
    last_tool: str = ""
    trips: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    merge: str = ""  # merged, dropped (with why), not merged; "" before the merge
    stop_reason: str = ""
    transcript: Path | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveView:
    number: int
    phase: str
    isolation: str
    agents: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionView:
    """The whole session, now: ``ended`` once it no longer runs (done, halted, killed,
    or its coordinator is gone)."""

    session: str
    phase: str
    ended: bool
    waves: tuple[WaveView, ...]
    agents: tuple[AgentView, ...]
    cost_usd: float
    tokens: int
    running_s: float
    budgets: Budgets | None
    stop_asked: bool = False
    note: str = ""  # the halt, or why the budgets could not be read

    def spend(self) -> tuple[str, ...]:
        """The session's spend against each budget it has (``$1.20 of $5.00``)."""
        parts = [f"${self.cost_usd:.2f}"]
        budgets = self.budgets
        if budgets is not None and budgets.cost_usd is not None:
            parts[0] += f" of ${budgets.cost_usd:.2f}"
        tokens = f"{self.tokens:,} tokens"
        if budgets is not None and budgets.tokens is not None:
            tokens += f" of {budgets.tokens:,}"
        parts.append(tokens)
        minutes = f"{self.running_s / 60:.1f} min"
        if budgets is not None and budgets.session_minutes is not None:
            minutes += f" of {budgets.session_minutes:g}"
        parts.append(minutes)
        return tuple(parts)


class SessionReader:
    """Reads one session's view again and again (``seawall watch`` refreshes it every
    second); the budgets, which the recorded plan fixes, are read once."""

    def __init__(self, store: StateStore) -> None:
        self.store = store
        self._budgets: tuple[Budgets | None, str] | None = None

    def read(self, *, now: float | None = None) -> SessionView:
        """The session as its files say it is at ``now`` (unix seconds)."""
        store = self.store
        now = time.time() if now is None else now
        state = store.load()
        if self._budgets is None:
            self._budgets = _budgets(state)
        budgets, note = self._budgets
        interrupted = is_interrupted(store, state)
        trips = _trips(store)
        agents = tuple(
            _agent(store, wave, record, trips, now, interrupted)
            for wave in state.waves
            for record in wave.agents
        )
        if state.halt is not None:
            note = f"halted: {state.halt.detail}"
        elif interrupted:
            note = "interrupted: no coordinator runs the session; `seawall resume` continues it"
        return SessionView(
            session=state.session,
            phase="interrupted" if interrupted else state.phase.value,
            ended=interrupted or state.phase is not SessionPhase.RUNNING,
            waves=tuple(
                WaveView(
                    number=wave.number,
                    phase=wave.phase.value,
                    isolation=wave.isolation.value,
                    agents=len(wave.agents),
                )
                for wave in state.waves
            ),
            agents=agents,
            cost_usd=sum(agent.cost_usd for agent in agents),
            tokens=sum(agent.tokens for agent in agents),
            running_s=state.running_s,
            budgets=budgets,
            stop_asked=read_stop(session_stop_path(store.paths)) is not None,
            note=note,
        )


def read_view(store: StateStore, *, now: float | None = None) -> SessionView:
    """The session of ``store`` as its files say it is at ``now`` (unix seconds)."""
    return SessionReader(store).read(now=now)


def _agent(
    store: StateStore,
    wave: LedgerWave,
    record: AgentRecord,
    trips: dict[tuple[int, str], list[str]],
    now: float,
    interrupted: bool,
) -> AgentView:
    agent_dir = store.paths.agent_dir(record.task)
    dispatched = wave.phase is WavePhase.DISPATCHED
    view = AgentView(
        wave=wave.number,
        task=record.task,
        state="starting" if dispatched else "waiting",
        running=False,
        elapsed_s=0.0,
        trips=tuple(trips.get((wave.number, record.task), ())),
        merge=_merge(wave, record),
        transcript=agent_dir / f"w{wave.number}-transcript.jsonl",
    )
    run = record.run or _run_file(agent_dir / f"w{wave.number}-run.json")
    if record.status is not None or run is not None:
        return _ended(view, record, run)
    live = read_live(live_path(store.paths, record.task, wave.number))
    if live is None or not dispatched:
        return replace(view, state="interrupted") if interrupted and dispatched else view
    end = live.updated_at if interrupted else now
    elapsed = max(0.0, end - live.started_at)
    state = "interrupted" if interrupted else ("stopping" if live.stop_reason else "running")
    return replace(
        view,
        state=state,
        running=not interrupted,
        elapsed_s=elapsed,
        turns=live.turns,
        tool_calls=live.tool_calls,
        tokens=live.input_tokens + live.output_tokens,
        cost_usd=live.cost_usd,
        cost_estimated=live.cost_estimated,
        last_tool=live.last_tool,
        trips=view.trips or ((live.trip,) if live.trip else ()),
        warnings=_warnings(live, elapsed),
        stop_reason=live.stop_reason,
    )


def _ended(view: AgentView, record: AgentRecord, run: AgentRun | None) -> AgentView:
    """An agent whose run ended: its run's counts (its record's once reviewed)."""
    if run is None:  # reviewed, its run no longer kept
        return replace(
            view,
            state=record.status.value if record.status is not None else "finished",
            elapsed_s=record.elapsed_s,
            turns=record.turns,
            tool_calls=record.tool_calls,
            tokens=record.tokens,
            cost_usd=record.cost_usd,
            cost_estimated=record.cost_estimated,
            last_tool=record.last_tool,
        )
    counts = run.counts
    if record.status is not None:
        state = record.status.value
    else:
        state = "stopped" if run.truncated else "finished"
    return replace(
        view,
        state=state,
        elapsed_s=counts.elapsed_s,
        turns=counts.turns,
        tool_calls=counts.tool_calls,
        tokens=counts.tokens,
        cost_usd=counts.cost_usd,
        cost_estimated=counts.cost_estimated,
        last_tool=counts.last_tool or "",
        trips=view.trips or ((f"{run.trip.kind.label}: {run.trip.evidence}",) if run.trip else ()),
        stop_reason=run.stop_reason,
    )


def _warnings(live: LiveCounts, elapsed: float) -> tuple[str, ...]:
    """The budgets an agent has spent 80 % (the tool budget's own fraction) or more of."""
    warnings = []
    if live.max_tool_calls and live.tool_calls >= live.tool_warn_fraction * live.max_tool_calls:
        warnings.append(f"tool calls {live.tool_calls}/{live.max_tool_calls}")
    if live.max_turns and live.turns >= WARN_FRACTION * live.max_turns:
        warnings.append(f"turns {live.turns}/{live.max_turns}")
    if live.time_limit_s and elapsed >= WARN_FRACTION * live.time_limit_s:
        warnings.append(f"time {elapsed / 60:.1f}/{live.time_limit_s / 60:g} min")
    return tuple(warnings)


def _merge(wave: LedgerWave, record: AgentRecord) -> str:
    if record.merged:
        return "merged"
    dropped = next((d for d in wave.dropped if d.task == record.task), None)
    if dropped is not None:
        return f"dropped: {dropped.reason}" if dropped.reason else "dropped"
    if wave.phase in (WavePhase.MERGED, WavePhase.DONE):
        return "not merged"
    return ""


def _run_file(path: Path) -> AgentRun | None:
    """An agent's run recorded the moment it ended (before the wave's next save)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return decode(data, AgentRun)
    except ValueError:  # written by another version: the ledger will hold the run
        return None


def _trips(store: StateStore) -> dict[tuple[int, str], list[str]]:
    """Each agent's breaker trips, from the telemetry."""
    trips: dict[tuple[int, str], list[str]] = {}
    for trip in read_events(store.paths.events, BreakerTripped):
        if trip.agent is None or trip.breaker is None:
            continue
        trips.setdefault((trip.wave, trip.agent), []).append(
            f"{trip.breaker.label}: {trip.evidence}" if trip.evidence else trip.breaker.label
        )
    return trips


def _budgets(state: SessionState) -> tuple[Budgets | None, str]:
    """The session's budgets, from the plan the ledger records."""
    if not state.plan_text:
        return None, ""
    from seawall.plan.loader import parse_plan

    try:
        plan = parse_plan(state.plan_text, path=state.plan_path or "<recorded plan>")
    except SeawallError as exc:
        return None, f"budgets unknown: {exc}"
    return plan.session.budgets, ""
