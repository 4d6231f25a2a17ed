"""A session's halt and its wave breaker are records; schema 2 kept "none" as ``{}``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seawall.breakers.wave import WaveCheckpoint, WaveCounters, WaveTrigger
from seawall.errors import StateError
from seawall.state.ledger import Halt, HaltedAgent, WaveBreakerState
from seawall.state.store import load_state

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
        reason="agent-start",
        detail="W1 a: not found",
        wave=1,
        agents=(HaltedAgent(task="a", reason="not found", exit_code=127, stderr="x"),),
        stderr="x",
        next="fix the agent program (see its stderr), then `seawall resume`",
    )


def test_no_halt_of_schema_2_is_none_in_the_snapshot_and_in_its_journal(tmp_path: Path) -> None:
    halted = {"reason": "rate-limited", "detail": "d", "wave": 2}
    path = _ledger(tmp_path, {"schema": 2, "seq": 0, **_SESSION, "halt": halted})
    assert load_state(path).halt == Halt(reason="rate-limited", detail="d", wave=2)
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
