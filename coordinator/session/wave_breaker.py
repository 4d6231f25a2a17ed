"""The wave-level breaker in the session loop: one report per finished wave.

The breaker's state (``tripped, trigger, detail, checkpoint, tripped_at, counters``)
lives in the ledger's ``breaker`` entry; a trip halts the session with one actionable
line, and ``seawall resume`` clears it, keeping the counters.
"""

from __future__ import annotations

from seawall.breakers.wave import WaveBreaker, WaveReport
from seawall.model import Schedule, SessionConfig, Status
from seawall.state.ledger import SessionState, WavePhase, WaveRecord

__all__ = ["clear_for_resume", "evaluate_wave", "review_window", "wave_report"]


def _breaker(state: SessionState, config: SessionConfig) -> WaveBreaker:
    return WaveBreaker(
        config.wave_breaker,
        cost_budget_usd=config.budgets.cost_usd,
        token_budget=config.budgets.tokens,
        state=state.breaker,
    )


def _keep(state: SessionState, breaker: WaveBreaker) -> None:
    state.breaker = breaker.state()


def wave_report(state: SessionState, wave: WaveRecord, config: SessionConfig) -> WaveReport:
    """What the wave did, as the breaker's triggers read it.

    A task that succeeded without changing a file (its work was already on the target)
    landed as surely as a merged one: it is progress, not a stall, so a finished plan
    run again ends as finished instead of tripping the stall trigger.
    """
    window = review_window(state, wave, config)
    merged = sum(
        1
        for landed in window
        for agent in landed.agents
        if agent.merged
        or (agent.status in (Status.DONE, Status.NO_TESTS_NEEDED) and not agent.touched)
    )
    if len(window) < _window_size(config):
        merged = max(merged, 1)  # a rolling session's first reviews: no full window to judge
    redispatched = tuple(a.task for a in wave.agents if state.task(a.task).attempts > 1)
    failures = {
        a.task: (a.error_signature or a.summary or a.reason,)
        for a in wave.agents
        if a.status in (Status.FAILED, Status.BLOCKED, Status.SPIRAL)
    }
    spent = sum(a.cost_usd for w in state.waves for a in w.agents)
    agents = sum(len(w.agents) for w in state.waves) or 1
    next_size = min(len(state.pending), config.max_agents_per_wave)
    projected = spent / agents * next_size if next_size else None
    return WaveReport(
        wave=wave.number,
        merged=merged,
        new_commits=int(any(w.integration and w.integration != w.base for w in window)),
        redispatched=redispatched,
        failures=failures,
        cost_usd=state.cost_usd,
        projected_next_usd=projected,
        tokens=sum(a.tokens for w in state.waves for a in w.agents),
        conflicts=(),
        head=wave.integration or wave.base,
    )


def _window_size(config: SessionConfig) -> int:
    """How many reviews the progress triggers read at once (1: a wave session's wave)."""
    if config.schedule is not Schedule.ROLLING:
        return 1
    return config.wave_breaker.window or config.max_agents


def review_window(state: SessionState, wave: WaveRecord, config: SessionConfig) -> list[WaveRecord]:
    """What the breaker's progress triggers read for ``wave``: the wave itself; in a
    rolling session, its review with the ones before it, the last ``window`` reviews
    (``[session.wave_breaker] window``, by default the concurrency cap) in the order
    they ended."""
    if config.schedule is not Schedule.ROLLING:
        return [wave]
    size = _window_size(config)
    earlier = sorted(
        (w for w in state.waves if w.phase is WavePhase.DONE and w is not wave),
        key=lambda w: w.finished_at,
    )
    return [*earlier[max(0, len(earlier) - size + 1) :], wave]


def evaluate_wave(state: SessionState, wave: WaveRecord, config: SessionConfig) -> str | None:
    """Feed the finished wave to the breaker; return the actionable line on a trip."""
    breaker = _breaker(state, config)
    trip = breaker.record(wave_report(state, wave, config))
    _keep(state, breaker)
    return None if trip is None else trip.line()


def clear_for_resume(state: SessionState, config: SessionConfig) -> str | None:
    """Clear a trip for ``seawall resume`` (counters kept); a trigger still firing re-trips."""
    breaker = _breaker(state, config)
    trip = breaker.resume(config=config.wave_breaker, cost_budget_usd=config.budgets.cost_usd)
    _keep(state, breaker)
    return None if trip is None else trip.line()


def merge_conflict(
    state: SessionState, wave: WaveRecord, config: SessionConfig, detail: str, head: str | None
) -> str | None:
    """Trip on a merge that needs history reconciliation; the actionable line, or None
    when the breaker (or its merge-conflict trigger) is disabled."""
    breaker = _breaker(state, config)
    trip = breaker.conflict(wave=wave.number, detail=detail, head=head)
    _keep(state, breaker)
    return None if trip is None else trip.line()
