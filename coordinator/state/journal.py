"""The ledger on disk: a snapshot and an append-only journal of what each save changed.

``state.json`` is a snapshot of the whole ledger (``"schema"``, ``"seq"`` and every
field), written atomically (temporary file, fsync, rename, directory fsync).
``state.jsonl`` beside it holds one line per later save: ``{"base", "seq", "parts",
"drop"}``, where ``parts`` are the pieces of the ledger that save changed, whole (the
session's own fields, the recorded plan, the pending tasks, one task's record, one
wave's record) and ``drop`` the pieces that are gone. A save appends one line and
syncs it, so its cost follows what the phase changed, not the length of the history.

Reading takes the snapshot and applies, in order, the lines whose ``base`` is the
snapshot's ``seq``. A line torn by a crash can only be the last one: it is ignored (the
ledger is the previous save's) and cut off before the next line is appended. Lines of
another base belong to an older snapshot (a compaction that was interrupted, or a
backup put back by hand) and are ignored.

The journal is compacted into a new snapshot when it grows past twice the snapshot (so
the bytes written stay proportional to the bytes changed), when the session stops
running (done, halted or killed), and when the files are not the ones this writer last
wrote (another process saved in between: its whole ledger then wins, as a whole-file
rewrite would). Before a compaction replaces them, the snapshot and journal are kept as
``state.json.bak`` and ``state.jsonl.bak``: together they are the ledger as it was
before that compaction.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from seawall.codec import JsonObject, decode_any, encode
from seawall.errors import StateError
from seawall.runtime.files import fsync_dir, write_temp
from seawall.state.ledger import SCHEMA_VERSION, SessionState
from seawall.state.pieces import HEAD, PENDING, PLAN, Parts

__all__ = ["Journal", "apply_line", "read_lines", "snapshot_bytes"]

_MIN_JOURNAL = 256 * 1024


def snapshot_bytes(parts: dict[str, bytes], seq: int) -> bytes:
    """The snapshot of a ledger cut into ``parts``, as save ``seq``: one JSON object
    (``schema``, ``seq``, then every field) built from the pieces' bytes, encoding
    nothing again; ends with a newline."""
    tasks: list[bytes] = []
    waves: list[bytes] = []
    for key, data in parts.items():
        if key.startswith("task/"):
            tasks.append(encode(key.removeprefix("task/")) + b":" + data)
        elif key.startswith("wave/"):
            waves.append(data)
    return b"".join(
        (
            b'{"schema":%d,"seq":%d,' % (SCHEMA_VERSION, seq),
            parts[HEAD][1:-1],
            b",",
            parts[PLAN][1:-1],
            b',"pending":',
            parts[PENDING],
            b',"tasks":{',
            b",".join(tasks),
            b'},"waves":[',
            b",".join(waves),
            b"]}\n",
        )
    )


def apply_line(data: JsonObject, line: JsonObject) -> None:
    """Apply one journal line to a ledger held as JSON-shaped values."""
    for key in line.get("drop", ()):
        _drop(data, str(key))
    for key, value in line["parts"].items():
        if key in (HEAD, PLAN):
            data.update(value)
        elif key == PENDING:
            data["pending"] = value
        elif key.startswith("task/"):
            data.setdefault("tasks", {})[key.removeprefix("task/")] = value
        elif key.startswith("wave/"):
            waves = [w for w in data.get("waves", []) if w.get("number") != value["number"]]
            waves.append(value)
            data["waves"] = sorted(waves, key=lambda w: int(w["number"]))
        else:
            raise ValueError(f"unknown ledger part {key!r}")


def _drop(data: JsonObject, key: str) -> None:
    if key.startswith("task/"):
        data.get("tasks", {}).pop(key.removeprefix("task/"), None)
    elif key.startswith("wave/"):
        number = int(key.removeprefix("wave/"))
        data["waves"] = [w for w in data.get("waves", []) if w.get("number") != number]


def read_lines(path: Path, base: int) -> tuple[list[JsonObject], int]:
    """The journal lines of snapshot ``base``, in order, and the byte length of the
    journal's whole lines (a torn last line is not counted: it is cut off on the next
    append). A damaged line that is not the last one is a StateError naming it."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return [], 0
    lines: list[JsonObject] = []
    good = 0
    chunks = raw.split(b"\n")
    for number, chunk in enumerate(chunks[:-1], start=1):
        try:
            line = decode_any(chunk)
            if not isinstance(line, dict) or not isinstance(line.get("parts"), dict):
                raise ValueError("not a journal line")
            seq, line_base = int(line["seq"]), int(line["base"])
        except (msgspec.DecodeError, ValueError, KeyError, TypeError) as exc:
            if number == len(chunks) - 1 and not chunks[-1]:
                break  # a torn line ended by the next append's own newline: the last one
            raise StateError(f"{path}:{number} is not a valid journal line: {exc}") from exc
        good += len(chunk) + 1
        if line_base != base:
            continue
        expected = lines[-1]["seq"] + 1 if lines else base + 1
        if seq != expected:
            raise StateError(f"{path}:{number} has save {seq}, expected save {expected}")
        lines.append(line)
    return lines, good


@dataclass(slots=True)
class _Written:
    """What this writer last put on disk (the files that hold the ledger's pieces), and
    what was cut since but is not on disk yet: a piece's bytes, or None for a piece that
    is gone (kept by a save that failed, for the next one to write)."""

    base: int
    seq: int
    snapshot_size: int
    journal_size: int
    identity: tuple[int, int, int]  # snapshot inode, journal inode, journal size
    unsaved: dict[str, bytes | None] = field(default_factory=dict)


class Journal:
    """Writes one session's ledger as a snapshot plus journal lines (see the module)."""

    def __init__(self, snapshot: Path, *, kill_point: Callable[[], None]) -> None:
        self.snapshot = snapshot
        self.journal = snapshot.with_name(snapshot.stem + ".jsonl")
        self._kill_point = kill_point
        self._written: _Written | None = None
        self._parts = Parts()

    def loaded(
        self, state: SessionState, *, base: int, seq: int, journal_size: int
    ) -> dict[str, bytes]:
        """Remember what a load read, so the next save appends only what changed;
        returns the ledger's pieces as read."""
        self._parts = Parts()
        self._parts.cut(state)
        self._written = _Written(
            base=base,
            seq=seq,
            snapshot_size=_size(self.snapshot),
            journal_size=journal_size,
            identity=self._identity(),
        )
        return self._parts.pieces

    def save(self, state: SessionState, *, compact: bool = False) -> dict[str, bytes]:
        """Save ``state``: a journal line of what changed, or a new snapshot. Returns the
        ledger's pieces as saved."""
        cut = self._parts.cut(state)
        pieces = self._parts.pieces
        written = self._written
        if written is not None:
            unsaved = written.unsaved
            for key in cut.dropped:
                unsaved[key] = None
            unsaved.update(cut.changed)
        if (
            compact
            or written is None
            or written.identity != self._identity()
            or written.journal_size > max(_MIN_JOURNAL, 2 * written.snapshot_size)
        ):
            self._compact(pieces)
            return pieces
        changed = {k: msgspec.Raw(v) for k, v in written.unsaved.items() if v is not None}
        dropped = [k for k, v in written.unsaved.items() if v is None]
        seq = written.seq + 1
        line = encode({"base": written.base, "seq": seq, "parts": changed, "drop": dropped})
        self._append(line + b"\n", written.journal_size)
        written.seq = seq
        written.unsaved = {}
        written.journal_size += len(line) + 1
        written.identity = self._identity()
        return pieces

    def take_changed(self) -> set[str]:
        """The keys of the ledger's pieces that changed since the last call (all of
        them after a load)."""
        return self._parts.take_changed()

    def _append(self, line: bytes, keep: int) -> None:
        """Append ``line`` after the first ``keep`` bytes (a torn tail is cut off first)."""
        try:
            fd = os.open(self.journal, os.O_WRONLY | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _state_error(self.journal, exc) from exc
        try:
            if os.fstat(fd).st_size != keep:
                os.ftruncate(fd, keep)
            os.lseek(fd, keep, os.SEEK_SET)
            half = len(line) // 2
            os.write(fd, line[:half])
            self._kill_point()  # a crash here leaves a torn last line
            _write_all(fd, line[half:])
            os.fdatasync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, keep)  # the previous save stays the last whole line
            raise _state_error(self.journal, exc) from exc
        finally:
            os.close(fd)

    def _compact(self, parts: dict[str, bytes]) -> None:
        """A new snapshot and an empty journal. Both are written before either replaces
        its file, so a full disk changes nothing; a crash between the two renames leaves
        the new snapshot and lines of the old base, which reading ignores."""
        seq = self._written.seq + 1 if self._written is not None else _seq_on_disk(self.snapshot)
        data = snapshot_bytes(parts, seq)
        snapshot = write_temp(self.snapshot, data)
        try:
            journal = write_temp(self.journal, b"")
        except BaseException:
            snapshot.unlink(missing_ok=True)
            raise
        _keep_backup(self.snapshot, self.snapshot.with_name(self.snapshot.name + ".bak"))
        _keep_backup(self.journal, self.journal.with_name(self.journal.name + ".bak"))
        try:
            self._kill_point()
            snapshot.replace(self.snapshot)
            journal.replace(self.journal)
        finally:
            snapshot.unlink(missing_ok=True)
            journal.unlink(missing_ok=True)
        fsync_dir(self.snapshot.parent)
        self._written = _Written(
            base=seq,
            seq=seq,
            snapshot_size=len(data),
            journal_size=0,
            identity=self._identity(),
        )

    def _identity(self) -> tuple[int, int, int]:
        try:
            snapshot = self.snapshot.stat().st_ino
            journal = self.journal.stat()
        except FileNotFoundError:
            return (0, 0, 0)
        return (snapshot, journal.st_ino, journal.st_size)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _seq_on_disk(snapshot: Path) -> int:
    """One past the save number on disk (1 for a new ledger), so a rewrite by a writer
    that never read the ledger still orders after every save before it; an unreadable
    snapshot gets a number from the clock, which no earlier journal line can carry."""
    try:
        head = decode_any(snapshot.read_bytes())
        return int(head.get("seq", 0)) + 1
    except FileNotFoundError:
        return 1
    except (OSError, msgspec.DecodeError, ValueError, TypeError, AttributeError):
        return time.time_ns() // 1000


def _keep_backup(current: Path, backup: Path) -> None:
    """Keep ``current`` as ``backup`` before it is replaced: a second name for the same
    file (the replacement is a new file), so it costs no copy."""
    if not current.exists():
        return
    spare = backup.with_name(backup.name + ".tmp")
    try:
        spare.unlink(missing_ok=True)
        spare.hardlink_to(current)
        spare.replace(backup)
    except OSError:
        pass  # the backup is a convenience; the save itself reports a full disk


def _state_error(path: Path, exc: OSError) -> OSError | StateError:
    if exc.errno == errno.ENOSPC:
        return StateError(f"cannot write {path}: the disk is full; the ledger is unchanged")
    return exc
