"""Detectors and breakers scored over real public agent transcripts (read in place).

The transcripts live outside the project (``$SEAWALL_FIXTURES/transcripts``, with
their sources and licences in its SOURCES.md); these tests skip when that folder is
absent. ``transcript_labels`` holds careful human labels of their stretches, stuck or
only looking stuck. The score: every stuck stretch is flagged by the breaker the label
names within one step of where a careful reader would stop the agent; no productive
stretch trips anything; nothing trips outside a stuck stretch; and no detector finding
(git writes aside, which are surfaced, not judged) appears outside one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from seawall.breakers import AgentBreaker, BreakerKind, Trip
from seawall.events import ToolResult
from seawall.replay import ReplayRecord, ReplayReport, replay_file
from seawall.replay_score import Outcome, load_labels, score_labels
from seawall.stagnation import GIT_WRITES, AgentMonitor, Finding, Pattern
from seawall.transcripts import parse_file
from tests.fixtures_path import TRANSCRIPTS, transcripts_present
from tests.integration.transcript_labels import HELD_OUT, HELD_OUT_LABELS, LABELS, Stretch

ROOT = TRANSCRIPTS
ALL_FILES = sorted(
    path for path in ROOT.rglob("*") if path.is_file() and path.suffix in (".jsonl", ".txt")
) if transcripts_present() else []  # fmt: skip
FILES = [path for path in ALL_FILES if str(path.relative_to(ROOT)) not in HELD_OUT]
"""The tuning set: every public transcript but the held-out ones."""

pytestmark = pytest.mark.skipif(
    not FILES, reason=f"real transcripts not found at {ROOT} (a clone without ../shared)"
)

STUCK_COMMIT = "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


@cache
def replayed(relative: str) -> ReplayReport:
    return replay_file(ROOT / relative, workspace=Path("/nonexistent/replay"))


def stuck_steps(relative: str) -> set[int]:
    return {
        step
        for label in LABELS
        if label.stuck and label.file == relative
        for step in range(label.first, label.last + 1)
    }


def ids(path: Path) -> str:
    return str(path.relative_to(ROOT)) if ROOT in path.parents else path.name


def label_id(label: Stretch) -> str:
    return f"{label.file.rsplit('/', 1)[-1]}:{label.first}-{label.last}"


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


@pytest.mark.parametrize("label", LABELS, ids=label_id)
def test_each_label_points_at_its_stretch(label: Stretch) -> None:
    report = replayed(label.file)
    at_first = [r for r in report.records if r.step == label.first and r.kind in ("call", "final")]
    assert at_first, f"{label.file} has no step {label.first}"
    assert label.marker in at_first[0].evidence, at_first[0]
    assert max(r.step for r in report.records) >= label.last
    assert label.stuck == (label.stop_at is not None) == (label.breaker is not None)


@pytest.mark.parametrize("label", [label for label in LABELS if label.stuck], ids=label_id)
def test_every_stuck_stretch_is_flagged_within_one_step(label: Stretch) -> None:
    assert label.stop_at is not None
    trips = [t for t in replayed(label.file).trips if label.first <= t.step <= label.last]
    assert trips, f"the stuck stretch was not flagged ({label.reason})"
    first: ReplayRecord = trips[0]
    assert abs(first.step - label.stop_at) <= 1, (first.step, label.stop_at, first.evidence)
    assert first.name == f"breaker/{label.breaker}"


@pytest.mark.parametrize("label", [label for label in LABELS if not label.stuck], ids=label_id)
def test_no_productive_stretch_trips(label: Stretch) -> None:
    trips = [t for t in replayed(label.file).trips if label.first <= t.step <= label.last]
    assert trips == [], label.reason


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_nothing_trips_or_is_found_outside_a_stuck_stretch(path: Path) -> None:
    relative = str(path.relative_to(ROOT))
    report = replayed(relative)
    stuck = stuck_steps(relative)
    if "acompact" not in path.name:  # a context-compaction agent makes no tool calls
        assert any(r.kind == "call" for r in report.records), "the parser found no tool calls"
    assert [t for t in report.trips if t.step not in stuck] == []
    judged = [f for f in report.findings if f.name != Pattern.GIT_WRITE.value]
    assert [f for f in judged if f.line == 0 or f.step not in stuck] == []


def test_the_score_over_all_labels() -> None:
    """The whole score at once: flagged stuck stretches, clean productive ones."""
    flagged = clean = 0
    for label in LABELS:
        trips = [t for t in replayed(label.file).trips if label.first <= t.step <= label.last]
        if label.stuck:
            assert label.stop_at is not None
            flagged += bool(trips) and abs(trips[0].step - label.stop_at) <= 1
        else:
            clean += not trips
    stuck = sum(label.stuck for label in LABELS)
    assert (flagged, clean) == (stuck, len(LABELS) - stuck)


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


def test_the_held_out_transcripts_are_out_of_every_tuning_test() -> None:
    """The held-out fixtures exist, none is labelled here, none is among ``FILES``; and
    the tuning set keeps most of the fixtures (so the held-out set is the smaller part)."""
    held = [ROOT / relative for relative in sorted(HELD_OUT)]
    assert [path for path in held if not path.is_file()] == []
    assert {label.file for label in LABELS}.isdisjoint(HELD_OUT)
    assert set(FILES).isdisjoint(held) and set(FILES) | set(held) == set(ALL_FILES)
    assert len(held) < len(FILES)


def test_replay_score_agrees_with_the_tuning_labels(tmp_path: Path) -> None:
    """``seawall replay --score`` over the tuning labels, written as a labels file, gives
    the score the tests above assert: every stuck stretch on time, every productive one
    clean. (The held-out file is only loaded here, never scored.)"""
    rows = ['root = "' + str(ROOT) + '"\n']
    for label in LABELS:
        rows.append(
            f'[[stretch]]\ntranscript = "{label.file}"\nstuck = {str(label.stuck).lower()}\n'
            f"first = {label.first}\nlast = {label.last}\n"
            + (f"stop_at = {label.stop_at}\n" if label.stop_at is not None else "")
        )
    path = tmp_path / "tuning.toml"
    path.write_text("\n".join(rows))
    scores, total = score_labels(path)
    assert [s.outcome for s in scores if s.stuck] == [Outcome.ON_TIME] * total.stuck
    assert (total.clean, total.hard, total.soft) == (total.productive, 0, 0)
    held, _ = load_labels(HELD_OUT_LABELS, root=ROOT)
    assert {str(label.transcript.relative_to(ROOT)) for label in held} == HELD_OUT
