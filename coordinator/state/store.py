"""Where a session's files live, and reading/writing its ledger safely.

Everything lives under ``<repo>/.seawall/<session>/``: ``state.json`` (the ledger),
``events.jsonl`` (telemetry), ``STATE.md`` (rendered for people), ``BLOCKED.md``,
``agents/<task>/`` (transcripts, breaker state) and ``wave-<n>/scope.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from coordinator.errors import StateError
from coordinator.fsutil import atomic_write_text, file_lock
from coordinator.state.ledger import SCHEMA_VERSION, SessionPhase, SessionState
from coordinator.telemetry import EventLog

__all__ = ["SessionPaths", "StateStore", "find_sessions", "latest_session", "seawall_dir"]


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
    def backup(self) -> Path:
        """The ledger as it was before the last save."""
        return self.root / "state.json.bak"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def state_md(self) -> Path:
        return self.root / "STATE.md"

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
    """Reads and writes one session's ledger; every save also renders STATE.md."""

    def __init__(self, repo: Path, session: str) -> None:
        self.paths = SessionPaths(repo=repo, session=session)
        self.events = EventLog(self.paths.events, session=session)

    def lock(self) -> AbstractContextManager[None]:
        """Hold the session's lock: a second coordinator fails at once."""
        return file_lock(self.paths.lock, blocking=False, what=f"session {self.paths.session}")

    def exists(self) -> bool:
        return self.paths.state.exists()

    def load(self) -> SessionState:
        return load_state(self.paths.state)

    def save(self, state: SessionState) -> None:
        from coordinator.state.render import render_state_md

        state.updated_at = round(time.time(), 3)
        text = json.dumps(state.to_dict(), indent=2, sort_keys=False, default=str) + "\n"
        from coordinator.faults import kill_point

        _keep_backup(self.paths.state, self.paths.backup)
        atomic_write_text(
            self.paths.state, text, before_replace=lambda: kill_point("while-writing-state")
        )
        atomic_write_text(self.paths.state_md, render_state_md(state))


def _keep_backup(state: Path, backup: Path) -> None:
    """Keep the current ledger as ``backup`` before it is replaced: a second name for the
    same file (the save writes a new file), so it costs no copy."""
    if not state.exists():
        return
    spare = backup.with_name(backup.name + ".tmp")
    try:
        spare.unlink(missing_ok=True)
        spare.hardlink_to(state)
        spare.replace(backup)
    except OSError:
        pass  # the backup is a convenience; the save itself reports a full disk


def load_state(path: Path) -> SessionState:
    """Load and check a ``state.json``; a corrupt or unknown-schema file is a StateError
    that names the file and, when there is one, the backup that can replace it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StateError(f"no session state at {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateError(f"{path} is unreadable or corrupt: {exc}{_backup_hint(path)}") from exc
    if not isinstance(data, dict):
        raise StateError(f"{path} does not hold a session ledger{_backup_hint(path)}")
    schema = data.get("schema")
    if schema != SCHEMA_VERSION:
        raise StateError(
            f"{path} has schema version {schema!r}; this seawall reads version {SCHEMA_VERSION}"
        )
    try:
        return SessionState.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise StateError(
            f"{path} is not a valid session ledger: {exc}{_backup_hint(path)}"
        ) from exc


def _backup_hint(path: Path) -> str:
    backup = path.with_name(path.name + ".bak")
    if not backup.exists():
        return "; there is no backup of it"
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(backup.stat().st_mtime))
    return (
        f"; the ledger before its last save is kept at {backup} (saved {stamp}): "
        f"`cp {backup} {path}` to use it"
    )


def find_sessions(repo: Path) -> Iterator[tuple[Path, float]]:
    """Every session ledger under ``repo``, with its modification time."""
    base = seawall_dir(repo)
    if not base.is_dir():
        return
    for path in base.glob("*/state.json"):
        yield path, path.stat().st_mtime


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
