"""The session report: one self-contained HTML page of a session, for people.

``write_report`` renders ``.seawall/<session>/report.html`` from the ledger and the
telemetry (a timeline per wave of every agent, the wave graph, totals, links to each
agent's transcript and diff on disk). Every session writes it when it ends or halts;
``seawall report`` writes it on demand.
"""

from __future__ import annotations

from pathlib import Path

from seawall.report.facts import SessionFacts, gather
from seawall.report.page import render_page
from seawall.runtime.files import atomic_write_text, lock_is_held
from seawall.state.ledger import SessionPhase, SessionState, WavePhase
from seawall.state.store import StateStore
from seawall.telemetry import read_events

__all__ = ["SessionFacts", "gather", "is_interrupted", "render_page", "report_path", "write_report"]


def report_path(store: StateStore) -> Path:
    return store.paths.root / "report.html"


def is_interrupted(store: StateStore, state: SessionState) -> bool:
    """A session recorded as running whose coordinator is gone (nobody holds its lock).

    A wave a lead agent dispatched (step mode) is waiting for its review, not
    interrupted: no coordinator holds the lock between the steps of step mode.
    """
    if state.phase is not SessionPhase.RUNNING:
        return False
    wave = state.current_wave
    if wave is not None and wave.lead and wave.phase is WavePhase.DISPATCHED:
        return False
    if wave is None or wave.phase is WavePhase.DONE:
        # between waves, or before the first: only a driven run is ever here unlocked
        # after its start; a lead's session is here between its review and next prepare
        return not _led(state) and not lock_is_held(store.paths.lock)
    return not lock_is_held(store.paths.lock)


def _led(state: SessionState) -> bool:
    return any(wave.lead for wave in state.waves)


def write_report(store: StateStore, path: Path | None = None) -> Path:
    """Render the session's report to ``path`` (default: ``report.html`` of the session)."""
    from seawall.git.repo import open_repository
    from seawall.report.diffs import write_diffs

    state = store.load()
    target = (path or report_path(store)).resolve()
    diffs = write_diffs(open_repository(store.paths.repo), state, store.paths.root / "diffs")
    facts = gather(
        state,
        list(read_events(store.paths.events)),
        diffs,
        interrupted=is_interrupted(store, state),
    )
    atomic_write_text(target, render_page(facts, base=target.parent))
    return target
