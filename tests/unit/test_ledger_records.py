"""The records the ledger holds are typed end to end and convert through one codec."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from seawall.breakers.trip import BreakerKind, Trip
from seawall.codec import decode, encode, from_data
from seawall.git.baseline import Baseline
from seawall.model import Enforcement, Isolation, Status
from seawall.runner import RunCounts
from seawall.session.agent_watch import AgentRun
from seawall.session.user_files import WaveBaselines
from seawall.session.verdict import judge_status
from seawall.stagnation.finding import ErrorClass, Finding, Pattern, Source, Verdict
from seawall.state.ledger import AgentRecord, IssueRef, SessionState, WaveRecord

TRIP = Trip(kind=BreakerKind.LOOP, evidence="Bash:ls 3x", count=3.0, limit=3.0, at=12.5)


def _finding(pattern: Pattern, verdict: Verdict, subject: str = "") -> Finding:
    return Finding(
        agent="a",
        pattern=pattern,
        source=Source.TAIL,
        verdict=verdict,
        occurrences=1,
        evidence=f"STATUS: {subject}",
        error_class=ErrorClass.OTHER if pattern is Pattern.ERROR_ECHO else None,
        subject=subject,
    )


def test_an_agent_run_round_trips_with_its_trip_and_findings_as_json() -> None:
    run = AgentRun(
        task_id="a",
        final_text="x" * 9000,
        trip=TRIP,
        touched=("src/a.py",),
        findings=[_finding(Pattern.ERROR_ECHO, Verdict.FAILED)],
        counts=RunCounts(turns=3, last_tool="Bash"),
    )
    data = json.loads(encode(run.for_ledger()))
    assert data["task_id"] == "a" and len(data["final_text"]) == 8000
    assert data["trip"] == {"kind": "loop", "evidence": "Bash:ls 3x", "count": 3.0,
                            "limit": 3.0, "at": 12.5}  # fmt: skip
    again = decode(encode(run.for_ledger()), AgentRun)
    assert again.trip == TRIP and again.touched == ("src/a.py",)
    assert again.findings == run.findings and again.counts == run.counts
    assert data["counts"]["turns"] == 3 and data["counts"]["last_tool"] == "Bash"


def test_a_recorded_run_of_the_schema_2_shape_reads_its_counts() -> None:
    counts = {"turns": 2, "tool_calls": 5, "cost_usd": 0.5, "cost_estimated": True,
              "input_tokens": 10, "output_tokens": 20, "elapsed_s": 1.5,
              "last_tool": ""}  # fmt: skip
    run = from_data({"task_id": "a", "counts": counts}, AgentRun)
    assert run.counts == RunCounts(
        turns=2, tool_calls=5, cost_usd=0.5, cost_estimated=True, input_tokens=10,
        output_tokens=20, elapsed_s=1.5, last_tool="",
    )  # fmt: skip
    with pytest.raises(msgspec.ValidationError, match=r"counts\.turns"):
        from_data({"task_id": "a", "counts": {"turns": "many"}}, AgentRun)


def test_the_ledger_holds_statuses_trips_findings_and_issues_as_their_types() -> None:
    agent = AgentRecord(
        task="a",
        status=Status.BLOCKED,
        trip=TRIP,
        issue=IssueRef(number=4, url="u"),
        findings=[_finding(Pattern.GIT_WRITE, Verdict.SURFACE)],
    )
    wave = WaveRecord(
        number=1,
        tasks=[],
        isolation=Isolation.NONE,
        enforcement=Enforcement.STRICT,
        max_turns=3,
        agents=[agent],
    )
    state = SessionState(
        session="s", name="n", repo="/r", target_branch="main", start_commit="0", waves=[wave]
    )
    state.task("a").status = Status.BLOCKED
    again = decode(encode(state), SessionState)
    (record,) = again.waves[0].agents
    assert record.status is Status.BLOCKED and again.tasks["a"].status is Status.BLOCKED
    assert record.trip == TRIP and record.issue == IssueRef(number=4, url="u")
    assert record.findings == agent.findings and record.findings[0].pattern is Pattern.GIT_WRITE


def test_a_lost_report_takes_the_status_of_the_live_status_record() -> None:
    for word, status in (("failed", Status.FAILED), ("partial", Status.PARTIAL)):
        verdict = Verdict.FAILED if word == "failed" else Verdict.PARTIAL
        run = AgentRun(
            task_id="a",
            truncated=True,
            stop_reason="killed",
            findings=[_finding(Pattern.STATUS_PARTIAL, verdict, subject=word)],
        )
        report = judge_status(run, changed=False)
        assert report.status is status and report.inferred, word
        assert f"STATUS: {status}" in report.reason


def test_a_baseline_written_before_it_went_through_the_codec_loads(tmp_path: Path) -> None:
    """``baseline.json`` as the hand-written writer left it (``copy`` first, stamps as
    lists, a file name that is not UTF-8 as a ``\\udcXX`` escape)."""
    stamps = {"notes.txt": (3, 1, 2, 99), "caf\udce9.txt": (4, 5, 6, 7), "build/": (0, 8, 9, 10)}
    wave_dir = tmp_path / "wave-1"
    wave_dir.mkdir()
    (wave_dir / "baseline.json").write_text(json.dumps({"copy": "a" * 40, "stamps": stamps}))
    found = WaveBaselines(tmp_path, "s1", lambda n: tmp_path / f"wave-{n}").get(1)
    assert found == Baseline(stamps=stamps, copy="a" * 40)
    assert found.files() == ("caf\udce9.txt", "notes.txt")
    assert decode(encode(found), Baseline) == found
