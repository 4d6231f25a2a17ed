"""A halt round-trips through the ledger and ``seawall status --json``: each reason's
halt comes back as the record the ledger holds, and the run's exit code reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.breakers.wave import WaveBreakerState
from seawall.codec import decode
from seawall.session.documents import SessionStatus, ShownPhase
from seawall.state.ledger import Halt, SessionPhase, SessionState
from seawall.state.store import StateStore
from tests.integration.sessionkit import git, make_repo, seawall
from tests.unit.test_ledger_halt_breaker import HALTS


@pytest.mark.parametrize("halt", HALTS, ids=[str(h.reason) for h in HALTS])
def test_a_halt_round_trips_through_status_json(tmp_path: Path, halt: Halt) -> None:
    repo = make_repo(tmp_path / "repo")
    store = StateStore(repo, "s1")
    store.save(
        SessionState(
            session="s1",
            name="halted",
            repo=str(repo),
            target_branch="main",
            start_commit=git(repo, "rev-parse", "HEAD"),
            phase=SessionPhase.HALTED,
            halt=halt,
        )
    )
    out = seawall("status", "--json", "--repo", str(repo), cwd=repo, check=True).stdout
    document = decode(out, SessionStatus)
    assert document.halt == halt and document.halt is not None
    assert document.halt.reason is halt.reason
    assert document.phase is ShownPhase.HALTED and document.next == "seawall resume"
    assert document.breaker == WaveBreakerState()
    raw = json.loads(out)["halt"]
    assert raw["reason"] == str(halt.reason) and raw["detail"] == halt.detail
    assert store.load().halt == halt  # reading it changed nothing
