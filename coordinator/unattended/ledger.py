"""``attempted.jsonl``: the runner's ledger of attempts, one JSON row per line.

A run writes a ``running`` row before it starts and a row with its outcome after; a run
is identified by its task id, so one run counts once however many rows it wrote. The
breaker, the rate-limit backoff and intake read this file and nothing else.

Past a size limit the file is compacted, not cut: rows of
the last 30 days stay; an older row stays when it is still read, that is the newest
row of its item, or any non-``blocked-*`` row of an item that is not finished. The full
log before compaction is kept in ``attempted.jsonl.1``.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import msgspec

from seawall.codec import decode, encode
from seawall.errors import StateError
from seawall.runtime.files import atomic_write_bytes
from seawall.unattended.outcomes import (
    ChainEffect,
    Outcome,
    chain_effect,
    is_blocked,
    is_finished,
)

__all__ = [
    "COMPACT_KEEP_SEC",
    "AttemptRow",
    "Compaction",
    "ItemHistory",
    "Ledger",
    "LedgerRead",
    "Run",
    "group_runs",
    "item_histories",
    "read_row",
    "row_line",
    "rows_to_keep",
]

COMPACT_KEEP_SEC = 30 * 86_400.0

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


class AttemptRow(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One row of ``attempted.jsonl``; the fields a row does not have are left out of
    its line. ``outcome`` stays a string: a row may come from a newer writer, and an
    outcome this version does not know counts as a failure (see ``outcomes``)."""

    item: NonEmpty
    task: NonEmpty  # one run: every row a run writes carries its task id
    outcome: NonEmpty
    ts: float
    publish_gate: str | None = None  # the publish step that refused, on such rows
    exit_code: int | None = None
    duration_sec: float | None = None
    detail: str | None = None
    signature: str | None = None  # of a failed run's error lines: the same failure again?
    resume_after: float | None = None  # a provider's limit: its reset, as the session said


def row_line(row: AttemptRow) -> bytes:
    """The row as one line of the file (its time to the millisecond)."""
    return encode(msgspec.structs.replace(row, ts=round(row.ts, 3))) + b"\n"


def read_row(line: str) -> AttemptRow:
    """One line read back; ``ValueError`` (naming the field) for anything else."""
    return decode(line, AttemptRow)


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerRead:
    """The rows of the ledger, oldest first, and how many lines could not be read."""

    rows: tuple[AttemptRow, ...]
    bad_lines: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    """One run (one task id): its outcome is that of its newest row."""

    task: str
    item: str
    outcome: str
    publish_gate: str | None
    first_ts: float
    last_ts: float
    rows: tuple[AttemptRow, ...]

    @property
    def last_row(self) -> AttemptRow:
        return self.rows[-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemHistory:
    """What the ledger says about one queue item."""

    item: str
    outcome: str | None  # the newest non-blocked outcome; None: never ran
    failures: int  # runs whose outcome counts as a failure
    runs: int  # every run that was not refused
    last_ts: float | None  # when the newest non-blocked row was written

    @property
    def finished(self) -> bool:
        return self.outcome is not None and is_finished(self.outcome)


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """What a compaction did."""

    rows_before: int
    rows_after: int
    bytes_before: int
    bytes_after: int


class Ledger:
    """Reads and appends ``attempted.jsonl``; compacts it past a size limit.

    Appends are single ``write`` calls on an ``O_APPEND`` descriptor. Only the tick that
    holds the runner's tick lock writes, so a compaction never races an append.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def backup_path(self) -> Path:
        return self.path.with_name(self.path.name + ".1")

    def append(self, row: AttemptRow) -> None:
        """Append one row; a full disk is a ``StateError`` (the attempt must be recorded)."""
        data = row_line(row)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise StateError(f"cannot record an attempt in {self.path}: disk full") from exc
            raise

    def read(self) -> LedgerRead:
        """Every row, oldest first. A torn or foreign line is counted, not fatal."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return LedgerRead(rows=())
        rows: list[AttemptRow] = []
        bad = 0
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                rows.append(read_row(line))
            except ValueError:  # msgspec's DecodeError and ValidationError
                bad += 1
        return LedgerRead(rows=tuple(rows), bad_lines=bad)

    def window(self, *, now: float, window_sec: float) -> tuple[AttemptRow, ...]:
        """The rows written in the trailing window ``[now - window_sec, ...]``."""
        since = now - window_sec
        return tuple(row for row in self.read().rows if row.ts >= since)

    def compact(
        self, *, now: float, max_bytes: int, keep_sec: float = COMPACT_KEEP_SEC
    ) -> Compaction | None:
        """Compact the ledger when it is larger than ``max_bytes``; None when it is not.

        The whole file is first copied to ``attempted.jsonl.1``, then the kept rows
        replace ``attempted.jsonl``; both writes are atomic.
        """
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return None
        if size <= max_bytes:
            return None
        original = self.path.read_bytes()
        rows = self.read().rows
        keep = rows_to_keep(rows, now=now, keep_sec=keep_sec)
        kept = [row for row, stays in zip(rows, keep, strict=True) if stays]
        data = b"".join(row_line(row) for row in kept)
        atomic_write_bytes(self.backup_path, original)
        atomic_write_bytes(self.path, data)
        return Compaction(
            rows_before=len(rows),
            rows_after=len(kept),
            bytes_before=size,
            bytes_after=len(data),
        )


def rows_to_keep(rows: Sequence[AttemptRow], *, now: float, keep_sec: float) -> list[bool]:
    """For each row (oldest first), whether compaction keeps it (the rules above).

    "The newest row of its item" is kept twice over when the newest row is a
    ``blocked-*`` one: the newest row that ran stays too, because that is the row that
    says whether the item is finished.
    """
    since = now - keep_sec
    newest: set[int] = set()  # the newest row of each item, and its newest row that ran
    seen: set[tuple[str, bool]] = set()
    for index in range(len(rows) - 1, -1, -1):
        row = rows[index]
        for key in ((row.item, False), (row.item, True)):
            ran_only = key[1]
            if key not in seen and not (ran_only and is_blocked(row.outcome)):
                seen.add(key)
                newest.add(index)
    histories = item_histories(rows)
    keep: list[bool] = []
    for index, row in enumerate(rows):
        recent = row.ts >= since
        unfinished = not histories[row.item].finished and not is_blocked(row.outcome)
        keep.append(recent or index in newest or unfinished)
    return keep


def group_runs(rows: Iterable[AttemptRow]) -> tuple[Run, ...]:
    """Group rows into runs by task id, ordered by when each run first appeared."""
    grouped: dict[str, list[AttemptRow]] = {}
    for row in rows:
        grouped.setdefault(row.task, []).append(row)
    runs = []
    for task, task_rows in grouped.items():
        last = task_rows[-1]
        runs.append(
            Run(
                task=task,
                item=last.item,
                outcome=last.outcome,
                publish_gate=last.publish_gate,
                first_ts=task_rows[0].ts,
                last_ts=last.ts,
                rows=tuple(task_rows),
            )
        )
    return tuple(runs)


def item_histories(rows: Iterable[AttemptRow]) -> dict[str, ItemHistory]:
    """Per item: its newest non-blocked outcome, failed runs and runs (all rows given)."""
    by_item: dict[str, list[Run]] = {}
    for run in group_runs(rows):
        by_item.setdefault(run.item, []).append(run)
    histories: dict[str, ItemHistory] = {}
    for item, runs in by_item.items():
        ran = [run for run in runs if not is_blocked(run.outcome)]
        newest = max(ran, key=lambda run: run.last_ts, default=None)
        histories[item] = ItemHistory(
            item=item,
            outcome=newest.outcome if newest else None,
            failures=sum(1 for run in ran if _counts(run)),
            runs=sum(1 for run in ran if run.outcome != Outcome.RUNNING),
            last_ts=newest.last_ts if newest else None,
        )
    return histories


def _counts(run: Run) -> bool:
    return chain_effect(run.outcome, run.publish_gate) is ChainEffect.COUNTS
