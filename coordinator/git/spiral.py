"""Spiral detection from one agent's history.

Signals, each with its evidence:

- ``repeat-edits``: a file changed in ``SpiralConfig.file_changes`` or more checkpoints
  or commits of the agent;
- ``content-revert``: a file's content returned to an earlier version of itself (a file
  the agent created and deleted again is a scratch file, not a revert);
- ``net-empty``: the agent changed files, but its net change against the base is empty.

Checkpoints and the agent's own commits record the same edits, so each sequence is read
on its own and a file's count is its highest in either; nothing is counted twice. Two
agents changing one file is never a spiral: a history belongs to one agent.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from enum import StrEnum

from seawall.git.history import AgentHistory, ChangeKind, HistoryEntry
from seawall.model import SpiralConfig

__all__ = ["SignalKind", "SpiralSignal", "SpiralVerdict", "detect_spiral"]


class SignalKind(StrEnum):
    REPEAT_EDITS = "repeat-edits"
    CONTENT_REVERT = "content-revert"
    NET_EMPTY = "net-empty"


@dataclass(frozen=True, slots=True, kw_only=True)
class SpiralSignal:
    kind: SignalKind
    path: str | None
    count: int
    commits: tuple[str, ...]

    def describe(self) -> str:
        if self.kind is SignalKind.REPEAT_EDITS:
            return f"{self.path} changed {self.count}×"
        if self.kind is SignalKind.CONTENT_REVERT:
            return f"{self.path} returned to an earlier version ({self.commits[-1][:8]})"
        return f"net change empty after {self.count} change(s)"


@dataclass(frozen=True, slots=True, kw_only=True)
class SpiralVerdict:
    """Whether an agent spiralled, and the evidence for STATE.md and carryover issues."""

    task_id: str
    signals: tuple[SpiralSignal, ...] = field(default_factory=tuple)

    @property
    def is_spiral(self) -> bool:
        return bool(self.signals)

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(sorted({s.path for s in self.signals if s.path is not None}))

    @property
    def commits(self) -> tuple[str, ...]:
        return tuple(sorted({commit for s in self.signals for commit in s.commits}))

    def summary(self) -> str:
        """One line for STATE.md, e.g. ``src/auth.py changed 4×``; empty if no spiral."""
        return "; ".join(signal.describe() for signal in self.signals)


@dataclass(slots=True)
class _FileTrack:
    versions: list[str | None]
    count: int = 0
    commits: list[str] = field(default_factory=list)
    reverted_at: str | None = None


def detect_spiral(history: AgentHistory, config: SpiralConfig) -> SpiralVerdict:
    """Judge one agent's history against the thresholds of ``config``."""
    best: dict[str, _FileTrack] = {}
    reverts: dict[str, _FileTrack] = {}
    empty_counts: list[int] = []
    for line in history.timelines:
        tracks = _replay(line)
        for path, track in tracks.items():
            if path not in best or track.count > best[path].count:
                best[path] = track
            if track.reverted_at is not None and path not in reverts:
                reverts[path] = track
        total = sum(track.count for track in tracks.values())
        at_base = all(track.versions[-1] == track.versions[0] for track in tracks.values())
        empty_counts.append(total if total and at_base else 0)
    signals = [
        SpiralSignal(
            kind=SignalKind.REPEAT_EDITS, path=path, count=track.count, commits=tuple(track.commits)
        )
        for path, track in sorted(best.items())
        if track.count >= config.file_changes
    ]
    if config.detect_reverts:
        signals.extend(
            SpiralSignal(
                kind=SignalKind.CONTENT_REVERT,
                path=path,
                count=track.count,
                commits=(*track.commits[: track.commits.index(track.reverted_at or "") + 1],),
            )
            for path, track in sorted(reverts.items())
        )
        if empty_counts and all(empty_counts):
            commits = tuple(entry.commit for line in history.timelines for entry in line)
            signals.append(
                SpiralSignal(
                    kind=SignalKind.NET_EMPTY, path=None, count=max(empty_counts), commits=commits
                )
            )
    return SpiralVerdict(task_id=history.task_id, signals=tuple(signals))


def _replay(line: tuple[HistoryEntry, ...]) -> dict[str, _FileTrack]:
    """Follow every file through one sequence of commits."""
    tracks: dict[str, _FileTrack] = defaultdict(lambda: _FileTrack(versions=[]))
    for entry in line:
        for change in entry.changes:
            if change.kind is ChangeKind.RENAMED and change.old_path in tracks:
                tracks[change.path] = tracks.pop(change.old_path)
            track = tracks[change.path]
            if not track.versions:
                track.versions.append(change.old_blob)
            if change.new_blob == track.versions[-1]:
                continue
            revert = change.new_blob is not None and change.new_blob in track.versions
            if revert and track.reverted_at is None:
                track.reverted_at = entry.commit
            track.versions.append(change.new_blob)
            track.count += 1
            track.commits.append(entry.commit)
    return dict(tracks)
