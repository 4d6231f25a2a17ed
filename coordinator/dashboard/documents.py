"""The JSON documents the dashboard's page polls, built from ``seawall watch``'s view.

A session's document is ``seawall.watch.rows``' ``SessionView`` with each agent's cells
exactly as ``seawall watch`` draws them (``seawall.watch.screen.agent_cells``) and the
links the page offers; nothing here reads a session's files a second way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from seawall.watch.rows import AgentView, SessionView
from seawall.watch.screen import COLUMNS, agent_cells

__all__ = [
    "AgentRow",
    "QueueItemRow",
    "RunnerDocument",
    "SessionDocument",
    "SessionEntry",
    "SessionListDocument",
    "WaveEntry",
    "session_document",
    "session_href",
]

SCHEMA = "seawall.dashboard/1"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRow:
    """One agent's row: the cells ``seawall watch`` shows, and what the page acts on."""

    wave: int
    task: str
    state: str
    running: bool
    elapsed_s: float
    cells: tuple[str, ...]
    transcript: str = ""  # the link to its transcript, once it has one
    diff: str = ""  # the link to its change so far


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveEntry:
    number: int
    phase: str
    isolation: str
    agents: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionDocument:
    """One session now (``GET /api/sessions/<id>``)."""

    schema: str
    session: str
    phase: str
    ended: bool
    note: str
    stop_asked: bool
    spend: tuple[str, ...]
    columns: tuple[str, ...]
    waves: tuple[WaveEntry, ...]
    agents: tuple[AgentRow, ...]
    state_md: str
    report: str  # the link to the finished report, "" while there is none
    can_stop: bool  # whether this dashboard accepts stops (``--allow-stop``)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEntry:
    """One session of the repository, as the list shows it."""

    session: str
    phase: str
    ended: bool
    updated_at: float
    plan: str
    agents: int
    running: int
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueItemRow:
    """One item of the unattended runner's queue, with the session that ran its plan."""

    id: str
    plan: str
    state: str
    runs: int
    failures: int
    last_outcome: str
    session: str = ""  # the newest session of this plan in the repository


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerDocument:
    """The unattended runner's queue: its items, its breaker and why it refuses work."""

    dir: str
    breaker: str
    blocked_reason: str
    items: tuple[QueueItemRow, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionListDocument:
    """Every session of the repository, newest first (``GET /api/sessions``), and the
    runner's queue when the dashboard shows one."""

    schema: str
    repo: str
    sessions: tuple[SessionEntry, ...]
    runner: RunnerDocument | None = None


def session_href(session: str, *parts: str) -> str:
    """The dashboard's path of a session's file or view (each part quoted)."""
    return "/s/" + "/".join(quote(part, safe="") for part in (session, *parts))


def session_document(
    view: SessionView,
    *,
    root: Path,
    can_stop: bool,
    report: bool,
) -> SessionDocument:
    """The document of ``view``, a session whose files are under ``root``; ``report``
    says whether its report has been written."""
    session = view.session
    return SessionDocument(
        schema=SCHEMA,
        session=session,
        phase=view.phase,
        ended=view.ended,
        note=view.note,
        stop_asked=view.stop_asked,
        spend=view.spend(),
        columns=tuple(name for name, _ in COLUMNS),
        waves=tuple(
            WaveEntry(number=w.number, phase=w.phase, isolation=w.isolation, agents=w.agents)
            for w in view.waves
        ),
        agents=tuple(_row(agent, session, root) for agent in view.agents),
        state_md=session_href(session, "STATE.md"),
        report=session_href(session, "report.html") if report else "",
        can_stop=can_stop and not view.ended,
    )


def _row(agent: AgentView, session: str, root: Path) -> AgentRow:
    transcript = agent.transcript
    shown = transcript is not None and transcript.is_file() and transcript.is_relative_to(root)
    return AgentRow(
        wave=agent.wave,
        task=agent.task,
        state=agent.state,
        running=agent.running,
        elapsed_s=round(agent.elapsed_s, 1),
        cells=agent_cells(agent),
        transcript=(
            session_href(session, *transcript.relative_to(root).parts)
            if shown and transcript is not None
            else ""
        ),
        diff=session_href(session, "diff", str(agent.wave), agent.task),
    )
