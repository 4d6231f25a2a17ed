"""Detectors and breakers over real public agent transcripts (read in place).

The transcripts live outside the project (``../shared/fixtures/transcripts``, with
their sources and licences in its SOURCES.md); these tests skip when that folder is
absent. On real, productive work nothing may trip. The one exception is asserted
explicitly: in spotter session ae4a77f8 the agent ran the same ``git commit`` into the
same failing pre-commit check (Dialyzer) three times, edits between notwithstanding,
and then bypassed the check with ``--no-verify``: exactly the "fails identically"
stall of spec 000 and the error echo of spec 004.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from coordinator.breakers import AgentBreaker, BreakerKind, Trip
from coordinator.events import ToolResult
from coordinator.stagnation import GIT_WRITES, AgentMonitor, Finding, Pattern
from coordinator.transcripts import parse_file
from tests.fixtures_path import TRANSCRIPTS, transcripts_present

ROOT = TRANSCRIPTS
FILES = sorted(
    path for path in ROOT.rglob("*") if path.is_file() and path.suffix in (".jsonl", ".txt")
) if transcripts_present() else []  # fmt: skip

pytestmark = pytest.mark.skipif(
    not FILES, reason=f"real transcripts not found at {ROOT} (a clone without ../shared)"
)

STUCK_COMMIT = "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
EXPECTED_TRIPS = {STUCK_COMMIT: [BreakerKind.COMMAND_FAILURES]}
EXPECTED_OTHER_FINDINGS = {STUCK_COMMIT: [Pattern.ERROR_ECHO]}


def watch(path: Path, workspace: Path) -> tuple[list[Trip], tuple[Finding, ...], Counter[str]]:
    monitor = AgentMonitor(
        session="real", wave=1, agent=path.stem, workspace=workspace, repo=workspace,
        clock=lambda: 0.0,
    )  # fmt: skip
    trips: list[Trip] = []
    kinds: Counter[str] = Counter()
    for event in parse_file(path):
        kinds[type(event).__name__] += 1
        trip = monitor.observe(event)
        if trip is not None:
            trips.append(trip)
            monitor.breaker.reset()  # keep reading: one trip must not hide another
    return trips, monitor.finish(), kinds


def ids(path: Path) -> str:
    return str(path.relative_to(ROOT)) if ROOT in path.parents else path.name


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_productive_real_work_trips_nothing(path: Path, tmp_path: Path) -> None:
    trips, findings, kinds = watch(path, tmp_path)
    if "acompact" not in path.name:  # a context-compaction agent makes no tool calls
        assert kinds["ToolCall"] > 0, "the transcript parser found no tool calls"
    assert [trip.kind for trip in trips] == EXPECTED_TRIPS.get(path.name, [])
    other = [f.pattern for f in findings if f.pattern is not Pattern.GIT_WRITE]
    assert other == EXPECTED_OTHER_FINDINGS.get(path.name, [])


@pytest.mark.parametrize("path", [p for p in FILES if "subagents" in p.parts], ids=ids)
def test_dispatched_subagents_show_no_finding_at_all(path: Path, tmp_path: Path) -> None:
    _, findings, _ = watch(path, tmp_path)
    assert findings == ()


def test_the_stuck_commit_is_found_with_its_evidence(tmp_path: Path) -> None:
    path = next((p for p in FILES if p.name == STUCK_COMMIT), None)
    if path is None:
        pytest.skip(f"{STUCK_COMMIT} not in {ROOT}")
    trips, findings, _ = watch(path, tmp_path)
    assert "Pre-commit validation failed" in trips[0].evidence
    echo = next(f for f in findings if f.pattern is Pattern.ERROR_ECHO)
    assert echo.occurrences == 3 and echo.error_class is not None
    assert echo.error_class.value == "other" and "git commit" in echo.subject


def test_real_git_writes_are_parsed_not_searched(tmp_path: Path) -> None:
    """Every real git write found is a real subcommand; commit messages written through
    heredocs (``git commit -m "$(cat <<'EOF' ...)"``) are commits, whatever they say."""
    found: Counter[str] = Counter()
    for path in FILES:
        _, findings, _ = watch(path, tmp_path)
        writes = [f.subject for f in findings if f.pattern is Pattern.GIT_WRITE]
        assert len(writes) == len(set(writes)), "a write is recorded on its first occurrence only"
        found.update(writes)
    assert set(found) <= GIT_WRITES
    assert found["commit"] >= 5 and found["push"] >= 3


def test_real_cancelled_siblings_are_not_failures() -> None:
    """agent-a2898e3 had seven calls dropped because a sibling call errored. Counted as
    failures of their own they would trip consecutive-failures; they are not."""
    path = next((p for p in FILES if p.name == "agent-a2898e3.jsonl"), None)
    if path is None:
        pytest.skip(f"agent-a2898e3.jsonl not in {ROOT}")
    events = list(parse_file(path))
    cancelled = [e for e in events if isinstance(e, ToolResult) and e.cancelled]
    assert len(cancelled) == 7
    as_is = AgentBreaker(clock=lambda: 0.0)
    assert [t for t in map(as_is.observe, events) if t is not None] == []
    miscounted = AgentBreaker(clock=lambda: 0.0)
    uncancelled = [replace(e, cancelled=False) if isinstance(e, ToolResult) else e for e in events]
    trips = [t.kind for t in map(miscounted.observe, uncancelled) if t is not None]
    assert trips == [BreakerKind.CONSECUTIVE_FAILURES]
