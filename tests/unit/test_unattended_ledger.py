"""attempted.jsonl: rows, runs, item histories, and compaction that keeps every row
intake and the cleanup report still read."""

from __future__ import annotations

import json
from pathlib import Path

from seawall.unattended.ledger import (
    COMPACT_KEEP_SEC,
    AttemptRow,
    Ledger,
    group_runs,
    item_histories,
)

DAY = 86_400.0
NOW = 100 * DAY
OLD = NOW - 40 * DAY  # older than the 30 days compaction keeps whole
RECENT = NOW - 2 * DAY


def r(
    item: str,
    task: str,
    outcome: str,
    ts: float,
    *,
    publish_gate: str | None = None,
    exit_code: int | None = None,
    duration_sec: float | None = None,
    detail: str | None = None,
) -> AttemptRow:
    return AttemptRow(
        item=item,
        task=task,
        outcome=outcome,
        ts=ts,
        publish_gate=publish_gate,
        exit_code=exit_code,
        duration_sec=duration_sec,
        detail=detail,
    )


def test_rows_round_trip_and_torn_lines_are_counted(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "attempted.jsonl")
    first = r(
        "a",
        "t1",
        "verification-failed",
        1.5,
        publish_gate="push",
        exit_code=5,
        duration_sec=2.0,
        detail="host refused",
    )
    ledger.append(first)
    with ledger.path.open("a") as handle:
        handle.write('{"item": "a", "task": "t2", "outc')  # a torn write after a crash
        handle.write("\n[1, 2]\n")
    ledger.append(r("b", "t3", "done", 2.0))
    read = ledger.read()
    assert read.rows == (first, r("b", "t3", "done", 2.0))
    assert read.bad_lines == 2


def test_a_missing_ledger_is_empty(tmp_path: Path) -> None:
    assert Ledger(tmp_path / "none.jsonl").read().rows == ()


def test_window_is_by_time(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "attempted.jsonl")
    for ts in (10.0, 20.0, 30.0):
        ledger.append(r("a", f"t{ts}", "failed", ts))
    assert [row.ts for row in ledger.window(now=35.0, window_sec=15.0)] == [20.0, 30.0]


def test_runs_group_by_task_and_take_the_newest_outcome() -> None:
    rows = [r("a", "x", "running", 1.0), r("b", "y", "failed", 2.0), r("a", "x", "done", 3.0)]
    runs = group_runs(rows)
    assert [(run.task, run.outcome, run.first_ts, run.last_ts) for run in runs] == [
        ("x", "done", 1.0, 3.0),
        ("y", "failed", 2.0, 2.0),
    ]


def test_item_histories_ignore_blocked_rows() -> None:
    rows = [
        r("a", "1", "failed", 1.0),
        r("a", "2", "timed-out", 2.0),
        r("a", "3", "rate-limited", 3.0),
        r("a", "4", "blocked-breaker", 4.0),
    ]
    history = item_histories(rows)["a"]
    assert history.outcome == "rate-limited"
    assert history.failures == 2
    assert history.runs == 3
    assert history.last_ts == 3.0
    assert not history.finished


def _scenario() -> tuple[list[AttemptRow], list[AttemptRow]]:
    """All rows, and exactly the rows compaction must keep."""
    rows = {
        # finished long ago: only its newest row is still read
        "done-old/failed": r("done-old", "d1", "failed", OLD),
        "done-old/running": r("done-old", "d2", "running", OLD + 1),
        "done-old/done": r("done-old", "d2", "done", OLD + 2),
        # unfinished: every non-blocked row stays; old blocked rows go unless newest
        "open/failed1": r("open", "o1", "failed", OLD),
        "open/blocked1": r("open", "o2", "blocked-breaker", OLD + 1),
        "open/failed2": r("open", "o3", "timed-out", OLD + 2),
        "open/blocked2": r("open", "o4", "blocked-breaker", OLD + 3),
        # parked is not finished: its task ids tie it to its worktree
        "parked/running": r("parked", "p1", "running", OLD),
        "parked/parked": r("parked", "p1", "needs-input", OLD + 1),
        # finished recently: the old failure goes, recent rows stay whole
        "late/failed": r("late", "l1", "failed", OLD),
        "late/blocked": r("late", "l2", "blocked-breaker", RECENT),
        "late/done": r("late", "l3", "partial", RECENT + 1),
        # recent rows of any kind stay
        "recent/blocked": r("recent", "r1", "blocked-rate-limit", RECENT),
        "recent/failed": r("recent", "r2", "failed", RECENT + 1),
    }
    gone = {"done-old/failed", "done-old/running", "open/blocked1", "late/failed"}
    order = list(rows)
    # Interleave items the way ticks would write them.
    order.sort(key=lambda k: rows[k].ts)
    all_rows = [rows[k] for k in order]
    kept = [rows[k] for k in order if k not in gone]
    return all_rows, kept


def test_compaction_keeps_exactly_the_rows_still_read(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "attempted.jsonl")
    all_rows, kept = _scenario()
    for row in all_rows:
        ledger.append(row)
    original = ledger.path.read_bytes()
    inode_size = len(original)

    result = ledger.compact(now=NOW, max_bytes=inode_size - 1)

    assert result is not None
    assert ledger.read().rows == tuple(kept)
    assert (result.rows_before, result.rows_after) == (len(all_rows), len(kept))
    assert result.bytes_before == inode_size
    assert result.bytes_after == ledger.path.stat().st_size
    assert ledger.backup_path == tmp_path / "attempted.jsonl.1"
    assert ledger.backup_path.read_bytes() == original


def test_compaction_keeps_the_newest_row_of_a_finished_item_even_when_blocked(
    tmp_path: Path,
) -> None:
    ledger = Ledger(tmp_path / "attempted.jsonl")
    rows = [r("x", "1", "done", OLD), r("x", "2", "blocked-breaker", OLD + 1)]
    for row in rows:
        ledger.append(row)
    ledger.compact(now=NOW, max_bytes=1)
    # The newest row stays, and so does the newest row that ran: it says x is finished.
    assert ledger.read().rows == tuple(rows)
    assert item_histories(ledger.read().rows)["x"].finished


def test_no_compaction_at_or_below_the_limit(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "attempted.jsonl")
    ledger.append(r("a", "1", "failed", OLD))
    size = ledger.path.stat().st_size
    assert ledger.compact(now=NOW, max_bytes=size) is None
    assert ledger.read().rows == (r("a", "1", "failed", OLD),)
    assert not ledger.backup_path.exists()
    assert COMPACT_KEEP_SEC == 30 * DAY


def test_rows_written_before_they_were_records_load(tmp_path: Path) -> None:
    """The lines of the writer before rows were records: spaces after the separators,
    characters past ASCII as they are, absent fields left out. A new row's line has the
    same keys."""
    old = (
        '{"item": "a", "task": "t1", "outcome": "verification-failed", "ts": 1.5, '
        '"publish_gate": "push", "exit_code": 5, "duration_sec": 2.0, "detail": "hôte refusé"}\n'
        '{"item": "b", "task": "t2", "outcome": "running", "ts": 2}\n'
        '{"item": "b", "task": "t2", "outcome": "something-newer", "ts": 3.0, '
        '"signature": "abc"}\n'
    )
    ledger = Ledger(tmp_path / "attempted.jsonl")
    ledger.path.write_text(old)
    read = ledger.read()
    assert read.bad_lines == 0
    assert read.rows == (
        r("a", "t1", "verification-failed", 1.5, publish_gate="push", exit_code=5,
          duration_sec=2.0, detail="hôte refusé"),
        r("b", "t2", "running", 2.0),
        AttemptRow(item="b", task="t2", outcome="something-newer", ts=3.0, signature="abc"),
    )  # fmt: skip
    ledger.append(r("c", "t3", "done", 4.0004))
    new = json.loads(ledger.path.read_text().splitlines()[-1])
    assert new == {"item": "c", "task": "t3", "outcome": "done", "ts": 4.0}


def test_a_row_without_its_ids_or_its_time_is_a_bad_line(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "attempted.jsonl")
    ledger.path.write_text(
        '{"item": "", "task": "t", "outcome": "done", "ts": 1}\n'
        '{"item": "a", "task": "t", "outcome": "done", "ts": true}\n'
        '{"item": "a", "task": "t", "outcome": "done"}\n'
        '{"item": "a", "task": "t", "outcome": "done", "ts": 1}\n'
    )
    read = ledger.read()
    assert read.bad_lines == 3 and read.rows == (r("a", "t", "done", 1.0),)
