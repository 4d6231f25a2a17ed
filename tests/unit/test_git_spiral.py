"""Spiral verdicts from hand-built histories: counting, reverts, scratch files, two timelines."""

from __future__ import annotations

from seawall.git import (
    AgentHistory,
    ChangeKind,
    EntryKind,
    FileChange,
    HistoryEntry,
    SignalKind,
    detect_spiral,
)
from seawall.model import SpiralConfig


def _entry(
    commit: str,
    *changes: tuple[str, str | None, str | None],
    kind: EntryKind = EntryKind.CHECKPOINT,
) -> HistoryEntry:
    return HistoryEntry(
        commit=commit,
        kind=kind,
        title=commit,
        time=0,
        changes=tuple(
            FileChange(
                path=path,
                kind=ChangeKind.ADDED
                if old is None
                else ChangeKind.DELETED
                if new is None
                else ChangeKind.MODIFIED,
                old_path=None,
                old_blob=old,
                new_blob=new,
            )
            for path, old, new in changes
        ),
    )


def _history(
    checkpoints: list[HistoryEntry], commits: list[HistoryEntry] | None = None
) -> AgentHistory:
    return AgentHistory(
        task_id="t1", base="base", checkpoints=tuple(checkpoints), commits=tuple(commits or ())
    )


def test_no_history_is_no_spiral() -> None:
    verdict = detect_spiral(_history([]), SpiralConfig())
    assert not verdict.is_spiral and verdict.summary() == ""


def test_the_same_edit_seen_as_checkpoint_and_commit_counts_once() -> None:
    checkpoints = [_entry("c1", ("a.py", "b0", "b1")), _entry("c2", ("a.py", "b1", "b2"))]
    commits = [_entry("k1", ("a.py", "b0", "b2"), kind=EntryKind.COMMIT)]
    assert not detect_spiral(_history(checkpoints, commits), SpiralConfig()).is_spiral


def test_a_file_created_and_deleted_is_scratch_not_a_revert() -> None:
    history = _history(
        [
            _entry("c1", ("tmp.txt", None, "x1"), ("a.py", "b0", "b1")),
            _entry("c2", ("tmp.txt", "x1", None)),
        ]
    )
    assert not detect_spiral(history, SpiralConfig()).is_spiral


def test_a_deleted_file_brought_back_is_a_revert() -> None:
    history = _history(
        [
            _entry("c1", ("a.py", "b0", None)),
            _entry("c2", ("a.py", None, "b0"), ("z.py", "z0", "z1")),
        ]
    )
    verdict = detect_spiral(history, SpiralConfig())
    assert [s.kind for s in verdict.signals] == [SignalKind.CONTENT_REVERT]
    assert verdict.signals[0].commits == ("c1", "c2")
    assert verdict.summary() == "a.py returned to an earlier version (c2)"


def test_repeat_edits_and_revert_are_both_reported_with_evidence() -> None:
    history = _history(
        [
            _entry("c1", ("a.py", "b0", "b1")),
            _entry("c2", ("a.py", "b1", "b2")),
            _entry("c3", ("a.py", "b2", "b1"), ("c.py", "c0", "c1")),
        ]
    )
    verdict = detect_spiral(history, SpiralConfig(file_changes=3))
    assert [s.kind for s in verdict.signals] == [SignalKind.REPEAT_EDITS, SignalKind.CONTENT_REVERT]
    assert verdict.summary().startswith("a.py changed 3×; a.py returned")
    assert verdict.commits == ("c1", "c2", "c3")
    assert verdict.files == ("a.py",)
