"""Live tailing of transcripts that agents write themselves.

When a lead agent dispatches agents with its own tool (Claude Code's Agent tool), the
coordinator sees no event stream: each agent writes its transcript to a file (e.g.
``<session>/subagents/agent-<id>.jsonl``). ``TranscriptTailer`` follows those files as
they grow and feeds each one's events to that agent's ``AgentMonitor``, so findings and
trips are written to ``events.jsonl`` within one poll interval of the line landing on
disk, and they stay there when the agent is killed a moment later.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import anyio
from anyio.abc import TaskStatus

from seawall.breakers.trip import Trip
from seawall.events import Event
from seawall.runtime.files import file_lock
from seawall.stagnation.finding import Finding
from seawall.stagnation.monitor import AgentMonitor
from seawall.transcripts import TranscriptReader

__all__ = [
    "LineFollower",
    "LineParser",
    "MonitorFactory",
    "TailStatistics",
    "TranscriptTailer",
    "TripHandler",
    "agent_id",
    "tail_lock_path",
]

_READ_CHUNK = 4 * 1024 * 1024  # bytes read per file per poll; the rest waits for the next


class LineParser(Protocol):
    """Turns one transcript line into events (``TranscriptReader`` is the default)."""

    def feed(self, line: str) -> list[Event]: ...


MonitorFactory = Callable[[str, Path], AgentMonitor | None]
TripHandler = Callable[[AgentMonitor, Trip], None]


def agent_id(path: Path) -> str:
    """The agent id a transcript file names: ``agent-a881341.jsonl`` -> ``a881341``."""
    stem = path.name.split(".", 1)[0]
    return stem.removeprefix("agent-")


def tail_lock_path(repo: Path, session: str) -> Path:
    """``<repo>/.seawall/<session>/tail.lock``: held by the session's one tailer."""
    return repo / ".seawall" / session / "tail.lock"


class LineFollower:
    """Follows one growing file: each ``read()`` returns the complete lines appended since
    the last one; an unfinished last line waits for its newline (``rest()`` gives it at
    the end). A file that is truncated or replaced is read again from its start
    (``restarted`` says so); a removed file reads as nothing, and what was read stays read.
    """

    __slots__ = ("inode", "offset", "partial", "path", "restarted")

    def __init__(self, path: Path, inode: int | None = None) -> None:
        self.path = path
        self.inode = inode if inode is not None else path.stat().st_ino
        self.offset = 0
        self.partial = b""
        self.restarted = False

    def read(self, limit: int = _READ_CHUNK) -> list[bytes]:
        """The complete lines appended since the last read (at most ``limit`` bytes)."""
        self.restarted = False
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return []
        if stat.st_ino != self.inode or stat.st_size < self.offset:
            self.restarted = True
            self.inode = stat.st_ino
            self.offset = 0
            self.partial = b""
        if stat.st_size == self.offset:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read(limit)
        self.offset += len(data)
        *lines, self.partial = (self.partial + data).split(b"\n")
        return lines

    def rest(self) -> bytes:
        """The unfinished last line (once): for a file that will not grow any more."""
        rest, self.partial = self.partial, b""
        return rest


class _Followed:
    """One followed file: its follower, parser and agent monitor."""

    __slots__ = ("follower", "monitor", "parser", "path")

    def __init__(self, path: Path, monitor: AgentMonitor, parser: LineParser, inode: int) -> None:
        self.path = path
        self.monitor = monitor
        self.parser = parser
        self.follower = LineFollower(path, inode)


@dataclass(frozen=True, slots=True, kw_only=True)
class TailStatistics:
    """A snapshot of the tailer's work."""

    files: int
    lines: int
    events: int
    trips: int
    findings: int
    restarts: int  # files that were truncated or replaced and read again from the start
    polls: int


class TranscriptTailer:
    """Follows a session's agent transcript files and watches each agent live.

    Duties: find files matching ``pattern`` under ``directory`` (new ones at every
    poll); read only what was appended since the last poll; keep an unfinished last
    line until its newline arrives; start over when a file is truncated or replaced;
    feed each complete line to that file's parser and its events to that agent's
    monitor (which writes the records); report trips to ``on_trip``. ``run`` holds the
    session's tail lock, so there is one tailer per session.
    """

    def __init__(
        self,
        *,
        session: str,
        repo: Path,
        directory: Path,
        monitor_for: MonitorFactory,
        pattern: str = "agent-*.jsonl",
        interval: float = 0.05,
        on_trip: TripHandler | None = None,
        parser_for: Callable[[Path], LineParser] | None = None,
    ) -> None:
        self.session = session
        self.repo = repo
        self.directory = directory
        self.pattern = pattern
        self.interval = interval
        self._monitor_for = monitor_for
        self._on_trip = on_trip
        self._parser_for = parser_for or (lambda _path: TranscriptReader())
        self._followed: dict[Path, _Followed] = {}
        self._ignored: set[Path] = set()
        self._lines = self._events = self._trips = self._restarts = self._polls = 0

    @property
    def monitors(self) -> dict[str, AgentMonitor]:
        """The monitor of every agent seen so far, by agent id."""
        return {agent_id(path): f.monitor for path, f in self._followed.items()}

    def statistics(self) -> TailStatistics:
        return TailStatistics(
            files=len(self._followed),
            lines=self._lines,
            events=self._events,
            trips=self._trips,
            findings=sum(len(f.monitor.findings) for f in self._followed.values()),
            restarts=self._restarts,
            polls=self._polls,
        )

    # -- sync core ----------------------------------------------------------------------

    def poll(self) -> int:
        """One pass over every transcript: returns the number of complete lines read."""
        self._polls += 1
        self._discover()
        return sum(self._read(followed) for followed in list(self._followed.values()))

    def finish(self) -> dict[str, tuple[Finding, ...]]:
        """Read what is left, parse a final line that never got its newline, and run
        each agent's post-wave checks. Returns every agent's findings."""
        self.poll()
        for followed in self._followed.values():
            rest = followed.follower.rest()
            if rest.strip():
                self._feed(followed, rest)
        return {agent_id(path): f.monitor.finish() for path, f in self._followed.items()}

    def _discover(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            for path in self.directory.glob(self.pattern):
                if path in self._followed or path in self._ignored or not path.is_file():
                    continue
                monitor = self._monitor_for(agent_id(path), path)
                if monitor is None:
                    self._ignored.add(path)
                    continue
                inode = path.stat().st_ino
                self._followed[path] = _Followed(path, monitor, self._parser_for(path), inode)

    def _read(self, followed: _Followed) -> int:
        lines = followed.follower.read()
        if followed.follower.restarted:
            self._restarts += 1
            followed.parser = self._parser_for(followed.path)
        for line in lines:
            self._feed(followed, line)
        return len(lines)

    def _feed(self, followed: _Followed, raw: bytes) -> None:
        self._lines += 1
        monitor = followed.monitor
        for event in followed.parser.feed(raw.decode("utf-8", "replace")):
            self._events += 1
            trip = monitor.observe(event)
            if trip is not None:
                self._trips += 1
                if self._on_trip is not None:
                    self._on_trip(monitor, trip)

    # -- async --------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Poll every ``interval`` seconds until cancelled, holding the session's tail lock.

        Raises ``SessionLockedError`` at once when another tailer follows this session.
        """
        with _tail_lock(self.repo, self.session):
            self.poll()
            task_status.started()
            while True:
                await anyio.sleep(self.interval)
                self.poll()


@contextlib.contextmanager
def _tail_lock(repo: Path, session: str) -> Iterator[None]:
    with file_lock(
        tail_lock_path(repo, session), blocking=False, what=f"the transcript tail of {session}"
    ):
        yield
