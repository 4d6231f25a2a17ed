"""A session's halt and its wave breaker are records; schema 2 kept "none" as ``{}``.
A halt's reason is a ``HaltReason`` and its other fields belong to one reason each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seawall.breakers.wave import WaveCheckpoint, WaveCounters, WaveTrigger
from seawall.errors import StateError
from seawall.state.ledger import (
    Halt,
    HaltedAgent,
    HaltReason,
    SessionPhase,
    SessionState,
    WaveBreakerState,
)
from seawall.state.store import StateStore, load_state

_SESSION = {
    "session": "s1",
    "name": "n",
    "repo": "/r",
    "target_branch": "main",
    "start_commit": "0" * 40,
    "phase": "halted",
}


def _ledger(tmp_path: Path, snapshot: dict[str, Any], *lines: dict[str, Any]) -> Path:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(snapshot))
    path.with_name("state.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_schema_2_halt_is_read_as_its_record(tmp_path: Path) -> None:
    halt = {
        "reason": "agent-start",
        "detail": "W1 a: not found",
        "wave": 1,
        "agents": [{"task": "a", "reason": "not found", "exit_code": 127, "stderr": "x"}],
        "stderr": "x",
        "next": "fix the agent program (see its stderr), then `seawall resume`",
    }
    path = _ledger(tmp_path, {"schema": 2, "seq": 0, **_SESSION, "halt": halt, "breaker": {}})
    state = load_state(path)
    assert state.halt == Halt(
        reason=HaltReason.AGENT_START,
        detail="W1 a: not found",
        wave=1,
        agents=(HaltedAgent(task="a", reason="not found", exit_code=127, stderr="x"),),
        stderr="x",
        next="fix the agent program (see its stderr), then `seawall resume`",
    )


def test_no_halt_of_schema_2_is_none_in_the_snapshot_and_in_its_journal(tmp_path: Path) -> None:
    halted = {"reason": "rate-limited", "detail": "d", "wave": 2}
    path = _ledger(tmp_path, {"schema": 2, "seq": 0, **_SESSION, "halt": halted})
    assert load_state(path).halt == Halt(reason=HaltReason.RATE_LIMITED, detail="d", wave=2)
    # a later save of the schema-2 writer cleared the halt the way it did: an empty object
    resumed = {"base": 0, "seq": 1, "parts": {"head": {"halt": {}, "phase": "running"}}}
    path = _ledger(tmp_path, {"schema": 2, "seq": 0, **_SESSION, "halt": halted}, resumed)
    assert load_state(path).halt is None
    path = _ledger(tmp_path, {"schema": 2, "seq": 0, **_SESSION, "halt": {}})
    assert load_state(path).halt is None


def test_a_halt_without_its_reason_is_refused_naming_the_field(tmp_path: Path) -> None:
    path = _ledger(tmp_path, {"schema": 3, "seq": 0, **_SESSION, "halt": {"detail": "d"}})
    with pytest.raises(StateError, match=r"reason.*\$\.halt|\$\.halt.*reason"):
        load_state(path)


def test_a_schema_2_wave_breaker_is_read_as_its_record(tmp_path: Path) -> None:
    tripped = {
        "tripped": True,
        "trigger": "stall",
        "detail": "2 waves without progress",
        "checkpoint": {"wave": 2, "head": "a" * 40},
        "tripped_at": "2026-01-01T00:00:00Z",
        "counters": {"stall_waves": 2},
    }
    path = _ledger(tmp_path, {"schema": 2, "seq": 0, **_SESSION, "breaker": tripped})
    breaker = load_state(path).breaker
    assert breaker == WaveBreakerState(
        tripped=True,
        trigger=WaveTrigger.STALL,
        detail="2 waves without progress",
        checkpoint=WaveCheckpoint(wave=2, head="a" * 40),
        tripped_at="2026-01-01T00:00:00Z",
        counters=WaveCounters(stall_waves=2),
    )
    path = _ledger(tmp_path, {"schema": 2, "seq": 0, **_SESSION, "breaker": {}})
    assert load_state(path).breaker is None
    path = _ledger(tmp_path, {"schema": 3, "seq": 0, **_SESSION, "breaker": {"trigger": "x"}})
    with pytest.raises(StateError, match=r"\$\.breaker\.trigger"):
        load_state(path)


HALTS = (
    Halt(
        reason=HaltReason.AGENT_START,
        detail="W1 a: not found",
        wave=1,
        agents=(HaltedAgent(task="a", reason="not found", exit_code=127, stderr="x"),),
        stderr="x",
        next="fix the agent program (see its stderr), then `seawall resume`",
    ),
    Halt(reason=HaltReason.CHECKS_FAIL_AT_BASE, detail="wave 2: the base fails", wave=2),
    Halt(reason=HaltReason.RATE_LIMITED, detail="every agent met a rate limit", wave=3),
    Halt(
        reason=HaltReason.SESSION_TIME,
        detail="ran 61.0 of its 60 minutes",
        budget="session_minutes",
        elapsed_s=3660.0,
        limit_s=3600.0,
    ),
)


@pytest.mark.parametrize("halt", HALTS, ids=[str(h.reason) for h in HALTS])
def test_each_halt_round_trips_through_the_ledger(tmp_path: Path, halt: Halt) -> None:
    store = StateStore(tmp_path, "s1")
    state = SessionState(
        session="s1",
        name="n",
        repo=str(tmp_path),
        target_branch="main",
        start_commit="0" * 40,
        phase=SessionPhase.HALTED,
        halt=halt,
    )
    store.save(state)
    again = store.load()
    assert again.halt == halt and again.halt is not None
    assert again.halt.reason is halt.reason  # the enum, not its value
    written = json.loads(store.paths.state.read_text())
    assert written["halt"]["reason"] == str(halt.reason)  # flat, by its value


def test_a_halt_is_refused_with_another_reasons_fields_or_without_its_own() -> None:
    with pytest.raises(ValueError, match="a halt for rate-limited has no elapsed_s"):
        Halt(reason=HaltReason.RATE_LIMITED, detail="d", elapsed_s=1.0)
    with pytest.raises(ValueError, match="a halt for session-time has no agents"):
        Halt(
            reason=HaltReason.SESSION_TIME,
            detail="d",
            budget="session_minutes",
            elapsed_s=1.0,
            limit_s=1.0,
            agents=(HaltedAgent(task="a"),),
        )
    with pytest.raises(ValueError, match="a halt for agent-start needs agents"):
        Halt(reason=HaltReason.AGENT_START, detail="d")


def test_a_ledger_holding_a_mixed_or_unknown_halt_is_refused_naming_it(tmp_path: Path) -> None:
    mixed = {"reason": "rate-limited", "detail": "d", "budget": "session_minutes"}
    path = _ledger(tmp_path, {"schema": 3, "seq": 0, **_SESSION, "halt": mixed})
    with pytest.raises(StateError, match=r"rate-limited has no budget.*\$\.halt"):
        load_state(path)
    unknown = {"reason": "tired", "detail": "d"}
    path = _ledger(tmp_path, {"schema": 3, "seq": 0, **_SESSION, "halt": unknown})
    with pytest.raises(StateError, match=r"\$\.halt\.reason"):
        load_state(path)


def test_a_schema_3_halt_written_before_reasons_were_typed_still_loads(tmp_path: Path) -> None:
    """What the writer of schema 3 put in state.json: every field, nulls included."""
    written = {
        "reason": "session-time",
        "detail": "budgets.session_minutes: the session has run 80.0 of its 60 minutes",
        "wave": 2,
        "next": "`seawall resume` runs it for another 60 minutes, or `seawall kill`",
        "agents": [],
        "stderr": None,
        "budget": "session_minutes",
        "elapsed_s": 4800.0,
        "limit_s": 3600.0,
    }
    path = _ledger(tmp_path, {"schema": 3, "seq": 0, **_SESSION, "halt": written})
    halt = load_state(path).halt
    assert halt is not None and halt.reason is HaltReason.SESSION_TIME
    assert (halt.budget, halt.elapsed_s, halt.limit_s) == ("session_minutes", 4800.0, 3600.0)
