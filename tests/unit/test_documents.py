"""The documents commands print with ``--json`` are records written by the codec: their
keys are the ones those commands have always printed, and they read back as records."""

from __future__ import annotations

import json
from pathlib import Path

from seawall.breakers.wave import WaveBreakerState, WaveTrigger
from seawall.codec import decode, encode_text
from seawall.model import Enforcement, Isolation, Status
from seawall.session.documents import (
    SessionStatus,
    ShownPhase,
    ShownStatus,
    outcome_document,
    status_document,
)
from seawall.session.result import SessionResult
from seawall.state.ledger import (
    AgentRecord,
    Halt,
    HaltReason,
    SessionPhase,
    SessionState,
    WavePhase,
    WaveRecord,
)

STATUS_KEYS = [
    "schema", "session", "phase", "next", "target_branch", "cost_usd", "waves", "pending",
    "breaker", "halt", "hard_trips", "soft_trips",
]  # fmt: skip
WAVE_KEYS = [
    "number", "isolation", "enforcement", "base", "phase", "checks", "agents", "set_aside",
    "adopted",
]  # fmt: skip
AGENT_KEYS = [
    "task", "status", "summary", "remaining", "inferred", "reason", "turns", "tool_calls",
    "cost_usd", "elapsed_s", "spiral", "issue", "merged", "set_aside", "cost_estimated",
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "tokens",
    "model", "hard_trips", "soft_trips", "conversation", "continued",
]  # fmt: skip
OUTCOME_KEYS = [
    "schema", "session", "phase", "exit_code", "waves", "done", "carried_over", "merged", "breaker",
    "not_merged",
    "halt", "state_md", "report",
]  # fmt: skip


def _state() -> SessionState:
    wave = WaveRecord(
        number=1,
        tasks=[],
        isolation=Isolation.WORKTREE,
        enforcement=Enforcement.WARN,
        max_turns=5,
        phase=WavePhase.DISPATCHED,
        agents=[
            AgentRecord(task="a", status=Status.BLOCKED, summary="looped"),
            AgentRecord(task="b"),
        ],
    )
    return SessionState(
        session="s1",
        name="n",
        repo="/r",
        target_branch="main",
        start_commit="0" * 40,
        phase=SessionPhase.HALTED,
        waves=[wave],
        halt=Halt(reason=HaltReason.RATE_LIMITED, detail="429", wave=1),
    )


def test_the_shown_phases_and_statuses_are_the_ledgers_and_interrupted() -> None:
    assert {str(p) for p in ShownPhase} == {*map(str, SessionPhase), "interrupted"}
    assert {str(s) for s in ShownStatus} == {*map(str, Status), "interrupted"}


def test_the_status_document_keeps_its_keys_and_reads_back() -> None:
    document = status_document(_state())
    data = json.loads(encode_text(document))
    assert list(data) == STATUS_KEYS
    assert list(data["waves"][0]) == WAVE_KEYS
    assert list(data["waves"][0]["agents"][0]) == AGENT_KEYS
    assert data["phase"] == "halted" and data["next"] == "seawall resume"
    assert data["waves"][0]["isolation"] == "worktree" and data["waves"][0]["phase"] == "dispatched"
    assert data["halt"]["reason"] == "rate-limited"
    assert data["breaker"]["tripped"] is False  # armed, no counts: no wave was fed to it yet
    assert decode(encode_text(document), SessionStatus) == document


def test_an_interrupted_session_shows_interrupted_where_the_ledger_has_nothing() -> None:
    document = status_document(_state(), interrupted=True)
    assert document.phase is ShownPhase.INTERRUPTED and document.next == "seawall resume"
    statuses = [agent.status for agent in document.waves[0].agents]
    assert statuses == [ShownStatus.BLOCKED, ShownStatus.INTERRUPTED]
    assert [a.status for a in status_document(_state()).waves[0].agents] == [
        ShownStatus.BLOCKED,
        None,
    ]


def test_the_outcome_document_keeps_its_keys() -> None:
    tripped = WaveBreakerState(tripped=True, trigger=WaveTrigger.STALL, detail="2 waves")
    result = SessionResult(
        session="s1",
        phase=SessionPhase.HALTED,
        waves=2,
        done=("a",),
        abandoned=("b",),
        state_md=Path("/r/.seawall/s1/STATE.md"),
        breaker=tripped,
    )
    data = json.loads(encode_text(outcome_document(result)))
    assert list(data) == OUTCOME_KEYS
    assert data["exit_code"] == 3 and data["carried_over"] == ["b"] and data["halt"] is None
    assert data["breaker"]["trigger"] == "stall" and data["state_md"] == "/r/.seawall/s1/STATE.md"
