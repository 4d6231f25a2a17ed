"""Session-end validation: every SPIRAL/FAILED line of the Wave History has its issue.

The ledger's agent lines are read as ``LedgerEntry`` values; ``missing_carryovers``
finds the escalated ones that point to no issue, and ``file_missing`` files them
retroactively, deduplicated by fingerprint like every other filing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from seawall.carryover.model import Carryover, CarryoverKind, CarryoverResult
from seawall.codec import JsonView
from seawall.errors import ConfigurationError, StateError
from seawall.model import IssueRef, Status

if TYPE_CHECKING:
    from seawall.carryover.filer import CarryoverFiler

__all__ = [
    "LedgerEntry",
    "covered_tasks",
    "file_missing",
    "ledger_entries",
    "missing_carryovers",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerEntry:
    """One agent line of the session's Wave History."""

    task: str
    wave: int
    status: str
    issue: IssueRef | None = None
    summary: str = ""

    @property
    def kind(self) -> CarryoverKind | None:
        return {
            Status.SPIRAL.value: CarryoverKind.SPIRAL,
            Status.FAILED.value: CarryoverKind.FAILED,
        }.get(self.status.lower())


def missing_carryovers(
    entries: Iterable[LedgerEntry], *, covered_tasks: Iterable[str] = ()
) -> tuple[LedgerEntry, ...]:
    """The SPIRAL/FAILED entries that lack an issue, one per (task, kind), latest wave.

    An entry counts as covered when any entry of the same task and kind has an issue
    (the session loop skips filing when the history already holds one for the task), or
    when its task is in ``covered_tasks`` (tasks whose ledger record has an issue).
    """
    entries = list(entries)
    covered = {(e.task, e.kind) for e in entries if e.issue is not None and e.kind}
    whole = set(covered_tasks)
    missing: dict[tuple[str, CarryoverKind], LedgerEntry] = {}
    for entry in sorted(entries, key=lambda e: e.wave):
        kind = entry.kind
        if kind is None or entry.issue is not None or entry.task in whole:
            continue
        if (entry.task, kind) not in covered:
            missing[(entry.task, kind)] = entry
    return tuple(missing.values())


def file_missing(
    filer: CarryoverFiler,
    entries: Iterable[LedgerEntry],
    *,
    plan: str,
    covered_tasks: Iterable[str] = (),
) -> list[tuple[LedgerEntry, CarryoverResult]]:
    """File a carryover for each entry ``missing_carryovers`` returns; never raises."""
    results = []
    for entry in missing_carryovers(entries, covered_tasks=covered_tasks):
        kind = entry.kind
        assert kind is not None  # missing_carryovers only returns SPIRAL/FAILED entries
        try:
            carryover = Carryover(
                plan=plan,
                task_id=entry.task,
                kind=kind,
                session=filer.session,
                wave=entry.wave,
                tried=entry.summary,
                context="Filed retroactively by `seawall carryover validate` at session end.",
            )
        except ConfigurationError as exc:
            results.append((entry, CarryoverResult(created=False, skipped="error", error=str(exc))))
            continue
        results.append((entry, filer.file(carryover)))
    return results


def ledger_entries(state: JsonView) -> list[LedgerEntry]:
    """The agent lines of a ``state.json`` ledger (``{"waves": [{"number", "agents"}]}``)."""
    waves = state.get("waves")
    if not isinstance(waves, list):
        raise StateError("state.json has no 'waves' list")
    entries = []
    for wave in waves:
        try:
            number = int(wave["number"])
            for agent in wave.get("agents", []):
                entries.append(_entry(agent, number))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StateError(f"state.json has a malformed wave entry: {exc!r}") from exc
    return entries


def covered_tasks(state: JsonView) -> set[str]:
    """Tasks that need no retroactive carryover: those whose ledger record
    (``state["tasks"][id]``) has an issue, and those that finished successfully in a
    later wave (a spiral or failure the session recovered from is not left over)."""
    tasks = state.get("tasks")
    if not isinstance(tasks, Mapping):
        return set()
    return {
        str(task_id)
        for task_id, record in tasks.items()
        if isinstance(record, Mapping)
        and (
            isinstance(record.get("issue"), Mapping)
            or record.get("status") in (Status.DONE.value, Status.NO_TESTS_NEEDED.value)
        )
    }


def _entry(agent: JsonView, wave: int) -> LedgerEntry:
    raw = agent.get("issue")
    issue = None
    if isinstance(raw, Mapping):
        issue = IssueRef(
            number=int(raw["number"]),
            url=str(raw.get("url", "")),
            existing=bool(raw.get("existing", False)),
        )
    return LedgerEntry(
        task=str(agent["task"]),
        wave=wave,
        status=str(agent["status"]),
        issue=issue,
        summary=str(agent.get("summary", "")),
    )
