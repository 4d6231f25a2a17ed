"""runner.log truncation in place and ticks.jsonl trimming."""

from __future__ import annotations

import json
import os
from pathlib import Path

from seawall.unattended.breaker import BreakerState
from seawall.unattended.logs import LOG_KEEP_BYTES, RunnerLog, TickLog, truncate_log
from seawall.unattended.report import TickAction, TickReport


def test_truncation_keeps_the_inode_and_the_last_256_kb(tmp_path: Path) -> None:
    log = tmp_path / "runner.log"
    lines = [f"line {i:07d}\n".encode() for i in range(60_000)]  # ~780 KB
    log.write_bytes(b"".join(lines))
    inode = log.stat().st_ino

    result = truncate_log(log, max_bytes=500_000)

    assert result is not None and result.bytes_before == sum(map(len, lines))
    assert log.stat().st_ino == inode
    assert log.stat().st_size == 0
    kept = (tmp_path / "runner.log.1").read_bytes()
    assert len(kept) <= LOG_KEEP_BYTES and len(kept) > LOG_KEEP_BYTES - 20
    assert kept.endswith(lines[-1]) and kept.startswith(b"line ")  # starts on a line


def test_no_truncation_at_or_below_the_limit(tmp_path: Path) -> None:
    log = tmp_path / "runner.log"
    log.write_text("x" * 100)
    assert truncate_log(log, max_bytes=100) is None
    assert truncate_log(tmp_path / "missing.log", max_bytes=1) is None
    assert log.read_text() == "x" * 100


def test_an_open_append_descriptor_keeps_writing_after_truncation(tmp_path: Path) -> None:
    log = tmp_path / "runner.log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, b"a" * 2000 + b"\n")
        truncate_log(log, max_bytes=1000)
        os.write(fd, b"after\n")
    finally:
        os.close(fd)
    assert log.read_bytes() == b"after\n"  # no hole of zeros before it


def test_runner_log_lines_are_stamped_with_the_injected_clock(tmp_path: Path) -> None:
    log = RunnerLog(tmp_path / "runner.log", clock=lambda: 0.0)
    assert log.write("hello")
    assert log.path.read_text() == "1970-01-01T00:00:00Z seawall runner: hello\n"


def _tick(n: int) -> TickReport:
    return TickReport(
        action=TickAction.IDLE, ts=float(n), duration_sec=0.0, consecutive_failures_before=n
    )


def test_ticks_trim_to_the_newest_lines(tmp_path: Path) -> None:
    ticks = TickLog(tmp_path / "ticks.jsonl")
    for i in range(100):
        ticks.append(_tick(i))
    assert ticks.trim(max_bytes=100_000, keep_lines=10) is None
    result = ticks.trim(max_bytes=100, keep_lines=10)
    assert result is not None
    assert [t.consecutive_failures_before for t in ticks.read()] == list(range(90, 100))
    assert [t.consecutive_failures_before for t in ticks.read(last=3)] == [97, 98, 99]


def test_a_torn_tick_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "ticks.jsonl"
    line = '{"ts": %d, "action": "idle", "duration_sec": 0, "consecutive_failures_before": null}'
    path.write_text(f"{line % 1}\n{line[:30]}\n{line % 3}\n")
    assert [t.ts for t in TickLog(path).read()] == [1.0, 3.0]


def test_a_tick_line_leaves_out_what_the_tick_did_not_have(tmp_path: Path) -> None:
    """The line of the writer before ticks were records: absent fields left out, times
    to the millisecond; it reads back as the record."""
    ticks = TickLog(tmp_path / "ticks.jsonl")
    ticks.append(
        TickReport(
            action=TickAction.RAN,
            ts=12.34567,
            duration_sec=1.00049,
            consecutive_failures_before=0,
            breaker=BreakerState.CLOSED,
            item="a-1",
            outcome="done",
        )
    )
    line = json.loads(ticks.path.read_text())
    assert line == {
        "ts": 12.346,
        "action": "ran",
        "duration_sec": 1.0,
        "consecutive_failures_before": 0,
        "breaker": "closed",
        "item": "a-1",
        "outcome": "done",
    }
    old = '{"ts": 5.5, "action": "breaker-open", "duration_sec": 0.01, '
    old += '"consecutive_failures_before": 3, "breaker": "open", "item": "d-4", '
    old += '"events": ["breaker-open"], "detail": "3 consecutive failed attempts"}'
    path = tmp_path / "old.jsonl"
    path.write_text(old + "\n")
    (tick,) = TickLog(path).read()
    assert tick.action is TickAction.BREAKER_OPEN and tick.breaker is BreakerState.OPEN
    assert tick.events == ("breaker-open",) and not tick.probe
