"""Session state: the ledger (state.json), telemetry (events.jsonl) and STATE.md."""

from seawall.state.ledger import (
    AgentRecord,
    IssueRef,
    SessionPhase,
    SessionState,
    TaskRecord,
    WavePhase,
    WaveRecord,
)
from seawall.state.render import history_line, render_state_md
from seawall.state.store import SessionPaths, StateStore, latest_session, load_state

__all__ = [
    "AgentRecord",
    "IssueRef",
    "SessionPaths",
    "SessionPhase",
    "SessionState",
    "StateStore",
    "TaskRecord",
    "WavePhase",
    "WaveRecord",
    "history_line",
    "latest_session",
    "load_state",
    "render_state_md",
]
