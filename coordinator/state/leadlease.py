"""The repository held for a lead agent between ``prepare`` and ``review``.

In step mode each command is a short process, so the repository lock
(``seawall.state.repolock``) is only held while one runs. Between the commands a
lead's agents are at work in the repository, and another ``seawall run``, ``resume``
or ``prepare`` of a different session would step on them. So preparing a wave for a
lead records a lease, ``<repo>/.seawall/lead.json``: the session, the wave, and the
process that holds it, the lead (the nearest ancestor of the ``seawall`` command that
is not a shell: the agent CLI, the MCP server, the script). While the lead lives,
every other session's command is refused, naming the wave and how to end it; the
session's own step commands go on. Review, ``seawall kill`` and a finished session
release it. A lead that died (its pid gone, or reused by a process started later) is
taken over with a note, so nothing stays stuck.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from seawall.codec import decode, encode
from seawall.errors import SessionLockedError
from seawall.runtime.files import atomic_write_bytes

__all__ = ["Lease", "check_lease", "lead_process", "release_lease", "take_lease"]

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "busybox", "timeout", "env"})
_MAX_ANCESTORS = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class Lease:
    """Who holds the repository for a lead: ``pid`` started at ``started`` (clock ticks
    since boot, 0 where unknown) holds wave ``wave`` of ``session`` since ``since``."""

    session: str
    wave: int
    pid: int
    started: int = 0
    since: float = 0.0

    def alive(self) -> bool:
        """Whether the holder still runs (the same process, not a reused pid)."""
        if self.pid <= 0:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # it exists, under another user
        return not self.started or _start_ticks(self.pid) == self.started

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.since))
        return f"wave {self.wave} of session {self.session} (lead pid {self.pid}, since {when})"


def _path(repo: Path) -> Path:
    return repo / ".seawall" / "lead.json"


def _start_ticks(pid: int) -> int:
    """The process's start time (``/proc/<pid>/stat`` field 22), 0 where unknown."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    fields = raw.rsplit(")", 1)[-1].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return 0


def _parent(pid: int) -> tuple[int, str]:
    """(parent pid, command name) of ``pid``; (0, "") where unknown."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0, ""
    name = raw[raw.find("(") + 1 : raw.rfind(")")]
    fields = raw.rsplit(")", 1)[-1].split()
    try:
        return int(fields[1]), name
    except (IndexError, ValueError):
        return 0, name


def lead_process() -> int:
    """The process a lease names: the nearest ancestor that is not a shell (a lead's
    tool runs ``seawall`` through one, which exits with the command)."""
    pid = os.getppid()
    for _ in range(_MAX_ANCESTORS):
        parent, _name = _parent(pid)
        name = Path(_name).name
        if name not in _SHELLS or parent <= 1:
            return pid
        pid = parent
    return pid


def read_lease(repo: Path) -> Lease | None:
    """The recorded lease, or None (none, or unreadable: a lease is advisory)."""
    try:
        return decode(_path(repo).read_bytes(), Lease)
    except (OSError, ValueError):  # msgspec's DecodeError and ValidationError
        return None


def take_lease(repo: Path, *, session: str, wave: int) -> Lease:
    """Record that the lead of this command holds ``wave`` of ``session``. Call it with
    the repository lock held, after ``check_lease``."""
    pid = lead_process()
    lease = Lease(session=session, wave=wave, pid=pid, started=_start_ticks(pid), since=time.time())
    atomic_write_bytes(_path(repo), encode(replace(lease, since=round(lease.since, 3))) + b"\n")
    return lease


def release_lease(repo: Path, session: str) -> bool:
    """Drop ``session``'s lease (another session's is left alone); True if one was held."""
    lease = read_lease(repo)
    if lease is None or lease.session != session:
        return False
    with contextlib.suppress(FileNotFoundError):
        _path(repo).unlink()
    return True


def check_lease(
    repo: Path,
    *,
    session: str,
    command: str,
    on_takeover: Callable[[str], None],
    lead_step: bool = False,
) -> None:
    """Refuse ``command`` of ``session`` while a live lead holds a wave.

    The holding session's own step commands (``lead_step``) pass; anything else (another
    session, or ``run``/``resume``, which would review the lead's wave without its
    outputs) raises ``SessionLockedError`` naming the wave, the lead and what ends the
    lease. A dead lead's lease is dropped and ``on_takeover`` told."""
    lease = read_lease(repo)
    if lease is None or (lease.session == session and lead_step):
        return
    if not lease.alive():
        with contextlib.suppress(FileNotFoundError):
            _path(repo).unlink()
        on_takeover(
            f"took over the repository from the lead of {lease.describe()}: that process "
            "is no longer running; its wave stays dispatched until that session is "
            "reviewed, resumed or killed"
        )
        return
    raise SessionLockedError(
        f"`seawall {command}` refused: {repo} is held for a lead agent, which has "
        f"{lease.describe()} out with its agents. Review that wave (`seawall next "
        f"--session {lease.session} --input OUTPUTS.json`) or end it (`seawall kill "
        f"--session {lease.session}`) first"
    )
