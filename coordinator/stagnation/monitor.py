"""One agent's live watch: the per-agent breaker and the five detectors together.

The session loop makes one ``AgentMonitor`` per dispatched agent and feeds it every
event of that agent (``observe``); the transcript tailer does the same for agents a
lead dispatched itself. Live findings (git write, status-partial, error echo) are
written to ``events.jsonl`` the moment they fire; ``finish`` adds the post-wave
findings (pagination spiral, turn-key repetition) and returns them all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from seawall.breakers.agent import AgentBreaker, BreakerStatistics
from seawall.breakers.keys import KeyEncoder
from seawall.breakers.trip import Trip
from seawall.events import Event, HumanTurn, Message, ToolCall, ToolResult, Turn, Usage
from seawall.model import BreakerLimits, Isolation, StagnationConfig, Status
from seawall.stagnation.finding import Finding, Pattern, write_finding
from seawall.stagnation.watch import AgentStagnation
from seawall.telemetry import BreakerTripped, EventLog

__all__ = ["AgentMonitor", "FindingListener", "MonitorStatistics"]

FindingListener = Callable[[Finding], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class MonitorStatistics:
    """A snapshot of one agent's watch."""

    agent: str
    events: int
    findings: tuple[Finding, ...]
    breaker: BreakerStatistics
    live_status: Status | None
    finished: bool


class AgentMonitor:
    """Watches one agent: breakers trip live, findings are recorded once each.

    Duties: feed every event to the agent's breaker and detectors; on the first trip,
    write one ``breaker_tripped`` record and return the ``Trip`` (the caller stops the
    agent, snapshots its work if ``trip.wants_snapshot`` and appends BLOCKED.md); write
    each finding as one ``stagnation_detected`` record; never look at another agent.
    """

    def __init__(
        self,
        *,
        session: str,
        wave: int,
        agent: str,
        workspace: Path,
        repo: Path,
        isolation: Isolation = Isolation.NONE,
        limits: BreakerLimits | None = None,
        stagnation: StagnationConfig | None = None,
        event_log: EventLog | None = None,
        clock: Callable[[], float] = time.monotonic,
        breaker: AgentBreaker | None = None,
    ) -> None:
        self.session = session
        self.wave = wave
        self.agent = agent
        self.event_log = event_log
        self.breaker = breaker or AgentBreaker(limits=limits, clock=clock, agent=agent)
        self._keys = KeyEncoder(fast=True)  # a live watch writes many keys
        self.stagnation = AgentStagnation(
            config=stagnation,
            agent=agent,
            workspace=workspace,
            repo=repo,
            isolation=isolation,
            background=self.breaker.background,  # one watch of background jobs per agent
            keys=self._keys,
        )
        self._findings: list[Finding] = []
        self.trips: list[Trip] = []  # every new trip, soft ones (a nudge) included
        self._listeners: list[FindingListener] = []
        self._events = 0

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding recorded so far (live ones during the run, all after ``finish``)."""
        return tuple(self._findings)

    @property
    def live_status(self) -> Status | None:
        """The last STATUS the agent wrote live; its final report wins over this."""
        return self.stagnation.live_status

    def add_listener(self, listener: FindingListener) -> None:
        """Call ``listener`` with every finding as it is recorded."""
        self._listeners.append(listener)

    def observe(self, event: Event) -> Trip | None:
        """Feed one event; return the trip if it tripped the agent's breaker."""
        self._events += 1
        breaker = self.breaker
        if type(event) is ToolCall:
            already = breaker.trip is not None
            # one call key and one judgement, for the detectors and the breaker alike
            full = self._keys.call_key(event.name, event.arguments)
            facts = breaker.background.judge(event)
            for finding in self.stagnation.observe_judged(event, full, facts):
                self._record(finding)
            trip = breaker.observe_call(event, full, facts)
        elif type(event) is ToolResult:
            already = breaker.trip is not None
            self._record(self.stagnation.observe_result(event))
            trip = breaker.observe_result(event)
        elif type(event) is Usage:
            return None
        elif type(event) is Turn:  # a turn only checks the clock
            trip = breaker.check_time()  # (None once tripped: a trip it returns is new)
            if trip is not None:
                self._trip_record(trip)
            return trip
        elif type(event) is Message:
            self._record(self.stagnation.observe_message(event))
            return None
        elif type(event) is HumanTurn:  # a person spoke: every streak ends
            self.stagnation.human_turn()
            return breaker.observe(event)
        else:  # a failed run counts as a failure
            already = breaker.trip is not None
            trip = breaker.observe(event)
        if trip is not None and not already:
            self._trip_record(trip)
        return trip

    def finish(self) -> tuple[Finding, ...]:
        """Run the post-wave checks once, record their findings, return every finding."""
        for finding in self.stagnation.finish():
            self._record(finding)
        return self.findings

    def statistics(self) -> MonitorStatistics:
        return MonitorStatistics(
            agent=self.agent,
            events=self._events,
            findings=self.findings,
            breaker=self.breaker.statistics(),
            live_status=self.stagnation.live_status,
            finished=self.stagnation.finished,
        )

    def findings_of(self, pattern: Pattern) -> tuple[Finding, ...]:
        return tuple(f for f in self._findings if f.pattern is pattern)

    def _record(self, finding: Finding | None) -> None:
        if finding is None:
            return
        self._findings.append(finding)
        if self.event_log is not None:
            write_finding(self.event_log, finding, wave=self.wave)
        for listener in self._listeners:
            listener(finding)

    def _trip_record(self, trip: Trip) -> None:
        self.trips.append(trip)
        if self.event_log is None:
            return
        self.event_log.append(
            BreakerTripped(
                wave=self.wave,
                agent=self.agent,
                breaker=trip.kind,
                evidence=trip.evidence,
                count=trip.count,
                limit=trip.limit,
                snapshot=trip.wants_snapshot,
                next_action=trip.next_action(self.agent),
            )
        )
