"""Where a session's files live, and reading/writing its ledger safely.

Everything lives under ``<repo>/.seawall/<session>/``: ``state.json`` and ``state.jsonl``
(the ledger: a snapshot and the journal of the saves since, see ``state.journal``),
``events.jsonl`` (telemetry), ``STATE.md`` (rendered for people; ``STATE.md.digests``
says which of its wave sections a resume may reuse, see ``state.sections``), ``BLOCKED.md``,
``agents/<task>/`` (transcripts, breaker state) and ``wave-<n>/scope.json``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import msgspec

from seawall.codec import JsonObject, decode_any, from_data
from seawall.errors import StateError
from seawall.runtime.files import file_lock, write_in_place
from seawall.state.journal import Journal, apply_line, read_lines
from seawall.state.ledger import SessionPhase, SessionState
from seawall.state.migrate import after_journal, migrate
from seawall.state.render import render_state_md
from seawall.state.sections import SectionMemo
from seawall.telemetry import EventLog

__all__ = [
    "LedgerRead",
    "SessionPaths",
    "StateStore",
    "find_sessions",
    "latest_session",
    "ledger_data",
    "load_state",
    "read_ledger",
    "seawall_dir",
]


def seawall_dir(repo: Path) -> Path:
    return repo / ".seawall"


@dataclass(frozen=True, slots=True)
class SessionPaths:
    """The file layout of one session."""

    repo: Path
    session: str

    @property
    def root(self) -> Path:
        return seawall_dir(self.repo) / self.session

    @property
    def state(self) -> Path:
        return self.root / "state.json"

    @property
    def journal(self) -> Path:
        """What each save since the snapshot ``state`` changed, one line per save."""
        return self.root / "state.jsonl"

    @property
    def backup(self) -> Path:
        """The snapshot as it was before the last compaction (with ``journal_backup``)."""
        return self.root / "state.json.bak"

    @property
    def journal_backup(self) -> Path:
        return self.root / "state.jsonl.bak"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def state_md(self) -> Path:
        return self.root / "STATE.md"

    @property
    def state_md_digests(self) -> Path:
        """Which of STATE.md's wave sections were rendered from which wave record."""
        return self.root / "STATE.md.digests"

    @property
    def blocked(self) -> Path:
        return self.root / "BLOCKED.md"

    @property
    def lock(self) -> Path:
        return self.root / "lock"

    def agent_dir(self, task: str) -> Path:
        return self.root / "agents" / task

    def wave_dir(self, wave: int) -> Path:
        return self.root / f"wave-{wave}"


class StateStore:
    """Reads and writes one session's ledger; every save also renders STATE.md.

    A save appends what changed since the last save to the journal (see
    ``seawall.state.journal``); a session that stops running is compacted into one
    ``state.json``.
    """

    def __init__(self, repo: Path, session: str) -> None:
        self.paths = SessionPaths(repo=repo, session=session)
        self.events = EventLog(self.paths.events, session=session)
        self._journal = Journal(self.paths.state, kill_point=_kill_while_writing)
        self._sections = SectionMemo(self.paths.state_md_digests)
        self._state_md = ""

    def lock(self) -> AbstractContextManager[None]:
        """Hold the session's lock: a second coordinator fails at once."""
        return file_lock(self.paths.lock, blocking=False, what=f"session {self.paths.session}")

    def exists(self) -> bool:
        return self.paths.state.exists()

    def load(self) -> SessionState:
        read = read_ledger(self.paths.state)
        parts = self._journal.loaded(
            read.state, base=read.base, seq=read.seq, journal_size=read.size
        )
        self._sections.seed(parts, self.paths.state_md)
        return read.state

    def save(self, state: SessionState) -> None:
        state.updated_at = round(time.time(), 3)
        self._sections.parts = self._journal.save(
            state, compact=state.phase is not SessionPhase.RUNNING
        )
        # rendered from the ledger and never read back: rewritten in place, unflushed
        self._sections.changed = self._journal.take_changed()
        text = render_state_md(state, sections=self._sections.history)
        if text != self._state_md or not self.paths.state_md.exists():
            write_in_place(self.paths.state_md, text)
            self._state_md = text
        self._sections.write_digests()


def _kill_while_writing() -> None:
    from seawall.runtime.fault_injection import kill_point

    kill_point("while-writing-state")


@dataclass(frozen=True, slots=True)
class LedgerRead:
    """A ledger as read: the state, its snapshot's save number, the last save applied,
    and the byte length of the journal's whole lines."""

    state: SessionState
    base: int
    seq: int
    size: int


def load_state(path: Path) -> SessionState:
    """Load and check a ledger (``state.json`` and the journal beside it); a corrupt or
    unknown-schema file is a StateError that names the file and, when there is one,
    the backup that can replace it."""
    return read_ledger(path).state


def read_ledger(path: Path) -> LedgerRead:
    """``load_state``, with what a writer needs to append to the journal."""
    data, base, lines, size = _read(path)
    try:
        state = from_data(data, SessionState)
    except (msgspec.ValidationError, ValueError) as exc:
        raise StateError(
            f"{path} is not a valid session ledger: {exc}{_backup_hint(path)}"
        ) from exc
    return LedgerRead(state=state, base=base, seq=lines[-1]["seq"] if lines else base, size=size)


def ledger_data(path: Path) -> JsonObject:
    """The ledger at ``path`` (snapshot and journal) as JSON-shaped values, in the
    current schema but not checked field by field (for readers of a few keys)."""
    return _read(path)[0]


def _read(path: Path) -> tuple[JsonObject, int, list[JsonObject], int]:
    try:
        data = decode_any(path.read_bytes())
    except FileNotFoundError:
        raise StateError(f"no session state at {path}") from None
    except (OSError, msgspec.DecodeError) as exc:
        raise StateError(f"{path} is unreadable or corrupt: {exc}{_backup_hint(path)}") from exc
    if not isinstance(data, dict):
        raise StateError(f"{path} does not hold a session ledger{_backup_hint(path)}")
    data = migrate(data, path)
    base = data.pop("seq", 0)
    if not isinstance(base, int):
        raise StateError(f"{path} has a save number {base!r} that is not an integer")
    lines, size = read_lines(path.with_name(path.stem + ".jsonl"), base)
    try:
        for line in lines:
            apply_line(data, line)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StateError(
            f"{path}: its journal does not apply: {exc!r}{_backup_hint(path)}"
        ) from exc
    data = after_journal(data)
    return data, base, lines, size


def _backup_hint(path: Path) -> str:
    backup = path.with_name(path.name + ".bak")
    if not backup.exists():
        return "; there is no backup of it"
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(backup.stat().st_mtime))
    journal = path.with_name(path.stem + ".jsonl")
    also = ""
    if journal.with_name(journal.name + ".bak").exists():
        also = f" and `cp {journal}.bak {journal}` (the saves after it)"
    return (
        f"; the ledger before its last compaction is kept at {backup} (saved {stamp}): "
        f"`cp {backup} {path}` to use it{also}"
    )


def find_sessions(repo: Path) -> Iterator[tuple[Path, float]]:
    """Every session ledger under ``repo``, with the time of its last save."""
    base = seawall_dir(repo)
    if not base.is_dir():
        return
    for path in base.glob("*/state.json"):
        journal = path.with_name("state.jsonl")
        saved = path.stat().st_mtime
        with contextlib.suppress(FileNotFoundError):
            saved = max(saved, journal.stat().st_mtime)
        yield path, saved


def latest_session(repo: Path, *, unfinished: bool = False) -> str | None:
    """The id of the most recent session (optionally the most recent not done/killed)."""
    candidates = sorted(find_sessions(repo), key=lambda item: item[1], reverse=True)
    for path, _ in candidates:
        if not unfinished:
            return path.parent.name
        state = load_state(path)  # a corrupt ledger is named, not taken for no session
        if state.phase in (SessionPhase.RUNNING, SessionPhase.HALTED):
            return state.session
    return None
