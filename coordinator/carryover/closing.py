"""Carryover issues that close: landed work and duplicates.

When a later wave or session lands a task that has an open carryover issue (a SPIRAL
or FAILED fingerprint of the same plan and task), the issue gets one comment naming
the commit that landed it and is closed. ``carryover validate`` also closes younger
issues that carry the same fingerprint as an older open one, as duplicates with a link.

Like filing, closing is deduplicated (an issue already closed is not listed, so it is
never touched again; each issue is commented at most once) and fault-tolerant:
transient faults are retried with backoff, and every outcome is a ``CloseResult``;
nothing here raises a tracker error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from seawall.carryover import CarryoverFiler, CarryoverKind, find_marker, fingerprint
from seawall.errors import TrackerError
from seawall.model import Status
from seawall.telemetry import CarryoverClosed
from seawall.tracker import Issue

if TYPE_CHECKING:
    from seawall.state.ledger import WaveRecord
    from seawall.telemetry import EventLog

__all__ = [
    "CloseResult",
    "close_duplicates",
    "close_landed",
    "close_landed_wave",
    "landed_comment",
]

_SUCCESS = (Status.DONE, Status.NO_TESTS_NEEDED)


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseResult:
    """The outcome of closing one issue: ``closed``, or ``error`` saying what failed.

    ``reason`` is ``landed`` or ``duplicate``; ``duplicate_of`` names the kept issue.
    """

    number: int
    url: str
    task: str = ""
    reason: Literal["landed", "duplicate"] = "landed"
    closed: bool = False
    error: str | None = None
    duplicate_of: int | None = None


def landed_comment(*, task: str, commit: str, session: str, wave: int, branch: str) -> str:
    return (
        f"Landed: task `{task}` was merged into `{branch}` in commit `{commit}` by seawall "
        f"session `{session}` (wave {wave}). Closing this carryover.\n\n"
        f"<!-- seawall:landed {commit} -->"
    )


def close_landed(
    filer: CarryoverFiler,
    *,
    plan: str,
    task: str,
    commit: str,
    wave: int,
    branch: str,
) -> list[CloseResult]:
    """Close the open carryovers (SPIRAL and FAILED) of ``task``, now landed in ``commit``."""
    wanted = {fingerprint(plan=plan, task_id=task, kind=kind) for kind in CarryoverKind}
    body = landed_comment(task=task, commit=commit, session=filer.session, wave=wave, branch=branch)
    try:
        with filer.serialised():
            found = [issue for fp, issue in filer.index().items() if fp in wanted]
            results = [_close(filer, issue, body, task=task, reason="landed") for issue in found]
            for issue in found:
                filer.drop(issue)
    except TrackerError as exc:
        return [CloseResult(number=0, url="", task=task, error=f"listing carryovers: {exc}")]
    return results


def close_duplicates(filer: CarryoverFiler) -> list[CloseResult]:
    """Close every open carryover whose fingerprint an older open issue already carries."""
    try:
        with filer.serialised():
            listed = filer.retrying(lambda: filer.tracker.list_issues(filer.label))
            oldest: dict[str, Issue] = {}
            results = []
            for issue in sorted(listed, key=lambda i: i.number):
                fp = find_marker(issue.body)
                if fp is None:
                    continue
                kept = oldest.setdefault(fp, issue)
                if kept is issue:
                    continue
                note = (
                    f"Duplicate of #{kept.number} ({kept.url}): both carry the seawall carryover "
                    f"fingerprint `{fp}`. Closing the younger one."
                )
                results.append(
                    _close(filer, issue, note, reason="duplicate", duplicate_of=kept.number)
                )
            filer.forget()
    except TrackerError as exc:
        return [CloseResult(number=0, url="", reason="duplicate", error=f"listing: {exc}")]
    return results


def _close(
    filer: CarryoverFiler,
    issue: Issue,
    note: str,
    *,
    reason: Literal["landed", "duplicate"],
    task: str = "",
    duplicate_of: int | None = None,
) -> CloseResult:
    def result(closed: bool, error: str | None = None) -> CloseResult:
        return CloseResult(
            number=issue.number,
            url=issue.url,
            task=task,
            reason=reason,
            closed=closed,
            error=error,
            duplicate_of=duplicate_of,
        )

    errors = []
    try:
        filer.tracker.comment(issue.number, note)  # once: a retried comment could repeat
    except TrackerError as exc:
        errors.append(f"the closing comment failed: {exc}")
    try:
        # closing a closed issue is harmless, so a transient fault is safe to retry
        filer.retrying(lambda: filer.tracker.close_issue(issue.number))
    except TrackerError as exc:
        return result(False, "; ".join([*errors, str(exc)]))
    return result(True, "; ".join(errors) or None)


def close_landed_wave(
    filer: CarryoverFiler,
    *,
    plan: str,
    wave: WaveRecord,
    branch: str,
    events: EventLog,
    log: Callable[[str], None],
) -> list[CloseResult]:
    """Close the carryovers of every task ``wave`` landed (merged with a success status)."""
    commit = wave.integration or wave.target_after or ""
    results: list[CloseResult] = []
    if not commit:
        return results
    for agent in wave.agents:
        if not agent.merged or agent.status not in _SUCCESS:
            continue
        for result in close_landed(
            filer, plan=plan, task=agent.task, commit=commit, wave=wave.number, branch=branch
        ):
            results.append(result)
            events.append(
                CarryoverClosed(
                    wave=wave.number,
                    agent=agent.task,
                    number=result.number or None,
                    reason=result.reason,
                    closed=result.closed,
                    commit=commit,
                    error=result.error,
                )
            )
            if result.closed:
                log(f"W{wave.number} {agent.task}: landed; closed issue #{result.number}")
            else:
                log(f"warning: closing the carryover of {agent.task} failed: {result.error}")
    return results
