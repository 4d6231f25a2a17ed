"""What the dashboard serves, read from a repository's session files (and, when it shows
one, the unattended runner's directory), and the stops it may ask for.

Sessions are found as ``seawall.state.store.find_sessions`` finds them; a session's
rows come from ``seawall.watch.rows.SessionReader``, the reader ``seawall watch`` uses.
Only a session the listing found is read, and only its own files of a known kind are
served (STATE.md, the report, its diffs, the agents' transcripts). A stop is the
request file ``seawall watch`` writes (``seawall.state.live``), recorded as a stop by
the user through ``seawall dashboard``; it is refused unless the dashboard was started
with stops allowed.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

from seawall.dashboard.documents import (
    QueueItemRow,
    RunnerDocument,
    SessionDocument,
    SessionEntry,
    SessionListDocument,
    session_document,
)
from seawall.errors import SeawallError
from seawall.report import is_interrupted, report_path
from seawall.state import SessionPhase, WavePhase
from seawall.state.live import agent_stop_path, request_stop, session_stop_path
from seawall.state.store import StateStore, find_sessions
from seawall.unattended.config import RunnerSettings
from seawall.watch.rows import SessionReader

__all__ = ["Dashboard", "RunnerSource", "StopRefused"]

VIA = "seawall dashboard"

# the files of a session the dashboard serves, by their path under the session's folder
_SERVED = re.compile(
    r"STATE\.md|report\.html|diffs/[^/]+\.diff|agents/[^/]+/w\d+-transcript\.jsonl"
)


class StopRefused(SeawallError):
    """A stop the dashboard does not ask for: stops not allowed, or nothing to stop."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerSource:
    """The unattended runner whose queue the dashboard shows."""

    dir: Path
    settings: RunnerSettings


class Dashboard:
    """The sessions of ``repo`` as the dashboard's page reads them."""

    def __init__(
        self, repo: Path, *, runner: RunnerSource | None = None, allow_stop: bool = False
    ) -> None:
        self.repo = repo.resolve()
        self.runner = runner
        self.allow_stop = allow_stop
        self._readers: dict[str, SessionReader] = {}
        self._lock = threading.Lock()

    def _store(self, session: str) -> StateStore | None:
        """The store of ``session`` when the repository has it (never a path made up
        from what a request says)."""
        known = {path.parent.name for path, _ in find_sessions(self.repo)}
        return StateStore(self.repo, session) if session in known else None

    def _reader(self, session: str) -> SessionReader | None:
        store = self._store(session)
        if store is None:
            return None
        with self._lock:
            return self._readers.setdefault(session, SessionReader(store))

    def listing(self) -> SessionListDocument:
        """Every session of the repository, newest first, and the runner's queue."""
        found = sorted(find_sessions(self.repo), key=lambda item: item[1], reverse=True)
        entries = tuple(_entry(StateStore(self.repo, path.parent.name)) for path, _ in found)
        return SessionListDocument(
            schema="seawall.dashboard/1",
            repo=str(self.repo),
            sessions=entries,
            runner=self._runner(entries),
        )

    def session(self, session: str) -> SessionDocument | None:
        """The session's rows now, or None when the repository has no such session."""
        reader = self._reader(session)
        if reader is None:
            return None
        return session_document(
            reader.read(),
            root=reader.store.paths.root,
            can_stop=self.allow_stop,
            report=report_path(reader.store).is_file(),
        )

    def file(self, session: str, parts: tuple[str, ...]) -> Path | None:
        """The session's file at ``parts`` under its folder, when it is one served."""
        store = self._store(session)
        if store is None or any(part in ("", ".", "..") for part in parts):
            return None
        relative = "/".join(parts)
        if _SERVED.fullmatch(relative) is None:
            return None
        root = store.paths.root.resolve()
        path = (root / relative).resolve()
        return path if path.is_relative_to(root) and path.is_file() else None

    def diff(self, session: str, wave: int, task: str) -> str | None:
        """The agent's change so far (a patch), or None when it has none yet."""
        from seawall.git.repo import open_repository
        from seawall.report.diffs import agent_patch

        store = self._store(session)
        if store is None:
            return None
        state = store.load()
        record = next((w for w in state.waves if w.number == wave), None)
        agent = next((a for a in record.agents if a.task == task), None) if record else None
        if record is None or agent is None:
            return None
        return agent_patch(open_repository(self.repo), record, agent)

    def stop(self, session: str, *, wave: int | None = None, task: str | None = None) -> str:
        """Ask the session's coordinator to stop one running agent (``wave`` and
        ``task``) or the whole session; what was asked, said for the page."""
        if not self.allow_stop:
            raise StopRefused("this dashboard is read-only: start it with --allow-stop")
        reader = self._reader(session)
        if reader is None:
            raise StopRefused(f"no session {session!r} in {self.repo}/.seawall")
        view = reader.read()
        if view.ended:
            raise StopRefused(f"session {session} is not running ({view.phase})")
        paths = reader.store.paths
        if task is None:
            request_stop(session_stop_path(paths), via=VIA)
            return f"asked the coordinator to stop session {session}"
        agent = next((a for a in view.agents if a.wave == wave and a.task == task), None)
        if agent is None or not agent.running:
            raise StopRefused(f"W{wave} {task} is not running")
        request_stop(agent_stop_path(paths, task, agent.wave), via=VIA)
        return f"asked the coordinator to stop W{agent.wave} {task}"

    def _runner(self, entries: tuple[SessionEntry, ...]) -> RunnerDocument | None:
        if self.runner is None:
            return None
        from seawall.unattended.status_view import runner_status

        status = runner_status(self.runner.dir, settings=self.runner.settings, last_ticks=0)
        newest: dict[str, str] = {}
        for entry in entries:  # newest first: the first of a plan is its newest
            if entry.plan:
                newest.setdefault(str(Path(entry.plan).resolve()), entry.session)
        breaker = status.breaker
        return RunnerDocument(
            dir=str(status.dir),
            breaker=f"{breaker.state} ({breaker.consecutive_failures} consecutive failed)",
            blocked_reason=status.blocked_reason or "",
            items=tuple(
                QueueItemRow(
                    id=s.item.id,
                    plan=s.item.plan,
                    state=str(s.state),
                    runs=s.runs,
                    failures=s.failures,
                    last_outcome=s.last_outcome or "",
                    session=newest.get(str(Path(s.item.plan).resolve()), ""),
                )
                for s in status.items
            ),
        )


def _entry(store: StateStore) -> SessionEntry:
    session = store.paths.session
    try:
        state = store.load()
    except SeawallError as exc:
        return SessionEntry(
            session=session,
            phase="unreadable",
            ended=True,
            updated_at=0.0,
            plan="",
            agents=0,
            running=0,
            note=str(exc),
        )
    interrupted = is_interrupted(store, state)
    ended = interrupted or state.phase is not SessionPhase.RUNNING
    running = 0
    if not ended:
        running = sum(
            1
            for wave in state.waves
            if wave.phase is WavePhase.DISPATCHED
            for agent in wave.agents
            if agent.status is None
            and agent.run is None
            and not (store.paths.agent_dir(agent.task) / f"w{wave.number}-run.json").exists()
        )
    plan = state.plan_path
    if plan and not Path(plan).is_absolute():
        plan = str(store.paths.repo / plan)
    return SessionEntry(
        session=session,
        phase="interrupted" if interrupted else state.phase.value,
        ended=ended,
        updated_at=state.updated_at,
        plan=plan,
        agents=sum(len(wave.agents) for wave in state.waves),
        running=running,
    )
