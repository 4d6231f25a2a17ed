"""STATE.md bookkeeping: suffixes, validation of the ledger, and the carryover CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.adapters.trackers.local import LocalTracker
from seawall.adapters.trackers.memory import MemoryTracker
from seawall.carryover import (
    CarryoverFiler,
    CarryoverKind,
    CarryoverResult,
    IssueRef,
    LedgerEntry,
    RetryPolicy,
    covered_tasks,
    file_missing,
    fingerprint,
    issue_suffix,
    ledger_entries,
    missing_carryovers,
    parse_issue_suffix,
)
from seawall.cli import main
from seawall.codec import encode, to_data
from seawall.errors import StateError
from seawall.model import Enforcement, Isolation


def test_suffixes_for_created_duplicate_and_error() -> None:
    assert issue_suffix(CarryoverResult(created=True, number=7)) == "→ issue #7"
    assert (
        issue_suffix(CarryoverResult(created=False, number=7, skipped="duplicate"))
        == "→ existing #7"
    )
    assert issue_suffix(CarryoverResult(created=False, skipped="error", error="x")) == ""
    assert issue_suffix(IssueRef(number=3, existing=True)) == "→ existing #3"


def test_suffix_round_trips_through_a_state_line() -> None:
    line = f"- wave 2 · parser · SPIRAL (edit loop) {issue_suffix(IssueRef(number=41))}"
    assert parse_issue_suffix(line) == IssueRef(number=41)
    assert parse_issue_suffix("- wave 2 · parser · FAILED") is None
    assert parse_issue_suffix("→ existing #5") == IssueRef(number=5, existing=True)


def test_an_outcome_points_to_the_one_issue_reference_the_ledger_records() -> None:
    from seawall import model
    from seawall.state import ledger

    assert ledger.IssueRef is model.IssueRef is IssueRef
    created = CarryoverResult(created=True, number=7, url="https://tracker.invalid/7")
    assert created.issue == IssueRef(number=7, url="https://tracker.invalid/7")
    duplicate = CarryoverResult(created=False, number=3, skipped="duplicate")
    assert duplicate.issue == IssueRef(number=3, existing=True)
    assert CarryoverResult(created=False, skipped="error", error="down").issue is None


def entry(task: str, wave: int, status: str, issue: int | None = None) -> LedgerEntry:
    return LedgerEntry(
        task=task, wave=wave, status=status, issue=IssueRef(number=issue) if issue else None
    )


def test_missing_lists_spiral_and_failed_lines_without_an_issue() -> None:
    entries = [
        entry("a", 1, "done"),
        entry("b", 1, "failed", issue=4),
        entry("b", 2, "failed"),  # covered by wave 1's issue for the same task and kind
        entry("c", 1, "spiral"),
        entry("c", 2, "spiral"),  # one carryover per task and kind, the latest wave
        entry("d", 2, "partial"),
        entry("e", 2, "no-tests-needed"),
        entry("f", 3, "FAILED"),
    ]
    missing = missing_carryovers(entries)
    assert [(e.task, e.wave, e.kind) for e in missing] == [
        ("c", 2, CarryoverKind.SPIRAL),
        ("f", 3, CarryoverKind.FAILED),
    ]


def test_a_task_level_issue_covers_every_line_of_the_task() -> None:
    data = state()
    data["tasks"] = {"loop": {"id": "loop", "issue": {"number": 3, "url": "", "existing": False}}}
    assert covered_tasks(data) == {"loop"}
    assert missing_carryovers(ledger_entries(data), covered_tasks=covered_tasks(data)) == ()
    assert [e.task for e in missing_carryovers(ledger_entries(data))] == ["loop"]


def test_file_missing_files_retroactively_and_deduplicates() -> None:
    tracker = MemoryTracker()
    filer = CarryoverFiler(tracker, session="s1", retry=RetryPolicy(sleep=lambda s: None))
    entries = [entry("c", 2, "spiral"), entry("f", 3, "failed")]
    results = file_missing(filer, entries, plan="p")
    assert [r.created for _, r in results] == [True, True]
    assert tracker.issues[0].title == "[Carryover] [SPIRAL] c"
    assert fingerprint(plan="p", task_id="c", kind="SPIRAL") in tracker.issues[0].body
    again = file_missing(CarryoverFiler(tracker, session="s2"), entries, plan="p")
    assert [r.skipped for _, r in again] == ["duplicate", "duplicate"]
    assert len(tracker.issues) == 2


def state(session: str = "s1") -> dict[str, object]:
    return {
        "schema": 1,
        "session": session,
        "name": "demo",
        "tracker": "local",
        "waves": [
            {
                "number": 1,
                "agents": [
                    {"task": "ok", "status": "done", "summary": "", "issue": None},
                    {"task": "loop", "status": "spiral", "summary": "edit loop", "issue": None},
                    {
                        "task": "bad",
                        "status": "failed",
                        "summary": "x",
                        "issue": {"number": 9, "url": "u", "existing": True},
                    },
                ],
            }
        ],
    }


def test_ledger_entries_read_the_state_shape() -> None:
    entries = ledger_entries(state())
    assert [(e.task, e.status, e.issue) for e in entries] == [
        ("ok", "done", None),
        ("loop", "spiral", None),
        ("bad", "failed", IssueRef(number=9, url="u", existing=True)),
    ]
    with pytest.raises(StateError):
        ledger_entries({"waves": [{"agents": []}]})


def write_state(repo: Path, data: dict[str, object]) -> Path:
    path = repo / ".seawall" / str(data["session"]) / "state.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    return path


def test_cli_validate_files_the_missing_and_is_then_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_state(tmp_path, state())
    assert main(["carryover", "validate", "--repo", str(tmp_path), "--dry-run"]) == 1
    assert "missing: wave 1  loop  SPIRAL" in capsys.readouterr().out
    assert main(["carryover", "validate", "--repo", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "wave 1  loop  SPIRAL  → issue #1" in out
    issues = LocalTracker(tmp_path).list_issues("carryover")
    assert [i.title for i in issues] == ["[Carryover] [SPIRAL] loop"]
    # Filing again finds the same fingerprint: the ledger still lacks the suffix, so
    # validate reports the existing issue rather than creating a second one.
    assert main(["carryover", "validate", "--repo", str(tmp_path)]) == 0
    assert "→ existing #1" in capsys.readouterr().out
    assert len(LocalTracker(tmp_path).list_issues("carryover")) == 1
    events = (tmp_path / ".seawall" / "s1" / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["outcome"] for line in events] == ["created", "duplicate"]


def test_cli_list_prints_number_title_labels_and_fingerprint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_state(tmp_path, state())
    assert main(["carryover", "validate", "--repo", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["carryover", "list", "--repo", str(tmp_path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["schema"] == "seawall.carryover/1" and listed["label"] == "carryover"
    (row,) = listed["issues"]
    assert row["number"] == 1
    assert row["labels"] == ["carryover", "priority:high", "status:spiral"]
    assert row["fingerprint"] == fingerprint(plan="demo", task_id="loop", kind="SPIRAL")
    assert main(["carryover", "list", "--repo", str(tmp_path)]) == 0
    assert (
        "#1  [Carryover] [SPIRAL] loop  [carryover, priority:high, status:spiral]  "
        + row["fingerprint"]
        in capsys.readouterr().out
    )


def test_cli_validate_without_a_ledger_or_plan_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["carryover", "validate", "--repo", str(tmp_path)]) == 1
    assert "no session ledger found" in capsys.readouterr().err
    data = state()
    del data["name"]
    write_state(tmp_path, data)
    assert main(["carryover", "validate", "--repo", str(tmp_path)]) == 1
    assert "pass --plan" in capsys.readouterr().err
    assert main(["carryover", "validate", "--repo", str(tmp_path), "--plan", "demo"]) == 0


def test_cli_validate_picks_the_newest_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    old = write_state(tmp_path, state("old"))
    os.utime(old, (1, 1))
    clean = state("new")
    clean["waves"] = []
    write_state(tmp_path, clean)
    assert main(["carryover", "validate", "--repo", str(tmp_path)]) == 0
    assert "session new: every SPIRAL/FAILED line has its issue" in capsys.readouterr().out


def test_reads_the_ledger_the_session_loop_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from seawall.model import Status
    from seawall.state.ledger import SCHEMA_VERSION, AgentRecord, SessionState, WaveRecord
    from seawall.state.ledger import IssueRef as LoopRef

    wave = WaveRecord(
        number=2, tasks=[], isolation=Isolation.NONE, enforcement=Enforcement.STRICT, max_turns=8
    )
    wave.agents = [
        AgentRecord(task="api", status=Status.FAILED, summary="401 from the stub"),
        AgentRecord(task="db", status=Status.SPIRAL, issue=LoopRef(number=5, url="u")),
        AgentRecord(task="ui", status=Status.DONE),
    ]
    loop_state = SessionState(
        session="sess-1",
        name="demo",
        repo=str(tmp_path),
        target_branch="main",
        start_commit="0" * 40,
        tracker="memory",
        waves=[wave],
    )
    data = to_data(loop_state)
    assert [e.task for e in missing_carryovers(ledger_entries(data))] == ["api"]
    write_state(tmp_path, json.loads(encode({"schema": SCHEMA_VERSION, **data})))
    assert main(["carryover", "validate", "--repo", str(tmp_path)]) == 0
    assert "wave 2  api  FAILED  → issue #1" in capsys.readouterr().out
