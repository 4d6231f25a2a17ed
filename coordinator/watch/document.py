"""``seawall watch --json``: the session as ``seawall watch`` reads it, once, as one
document (``seawall.watch/1``), for a script or a lead agent instead of the screen."""

from __future__ import annotations

from dataclasses import dataclass, field

from seawall.watch.rows import SessionView, WaveView

__all__ = ["WatchAgent", "WatchDocument", "watch_document"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchAgent:
    """One agent of one wave, now: the cells of its row as data."""

    wave: int
    task: str
    state: str  # waiting, running, stopping, finished, stopped, interrupted, or its status
    running: bool
    elapsed_s: float
    turns: int
    tool_calls: int
    tokens: int
    cost_usd: float
    cost_estimated: bool
    last_tool: str
    trips: tuple[str, ...]
    warnings: tuple[str, ...]
    merge: str  # merged, dropped (with why), not merged; "" before the merge
    stop_reason: str
    transcript: str  # "" until it has one


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchDocument:
    """``seawall watch --json``: the session now, read from its files; ``ended`` once
    it no longer runs, ``spend`` its spend against each budget it has."""

    schema: str = field(default="seawall.watch/1", init=False)

    session: str
    phase: str
    ended: bool
    note: str
    stop_asked: bool
    cost_usd: float
    tokens: int
    running_s: float
    spend: tuple[str, ...]
    waves: tuple[WaveView, ...]
    agents: tuple[WatchAgent, ...]


def watch_document(view: SessionView) -> WatchDocument:
    """The document of ``view``."""
    return WatchDocument(
        session=view.session,
        phase=view.phase,
        ended=view.ended,
        note=view.note,
        stop_asked=view.stop_asked,
        cost_usd=round(view.cost_usd, 6),
        tokens=view.tokens,
        running_s=round(view.running_s, 3),
        spend=view.spend(),
        waves=view.waves,
        agents=tuple(
            WatchAgent(
                wave=a.wave,
                task=a.task,
                state=a.state,
                running=a.running,
                elapsed_s=round(a.elapsed_s, 3),
                turns=a.turns,
                tool_calls=a.tool_calls,
                tokens=a.tokens,
                cost_usd=round(a.cost_usd, 6),
                cost_estimated=a.cost_estimated,
                last_tool=a.last_tool,
                trips=a.trips,
                warnings=a.warnings,
                merge=a.merge,
                stop_reason=a.stop_reason,
                transcript=str(a.transcript or ""),
            )
            for a in view.agents
        ),
    )
