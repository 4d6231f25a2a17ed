"""Carryover issues: file each escalated task exactly once, never raising.

``file_carryover`` files the carryover issue of a spiralling or failed task: it
returns a ``CarryoverResult`` saying created / duplicate / error and never raises.

Deduplication does not use a search API (it lags new issues and is rate-limited). A
stable fingerprint of the work (plan identity, task id, kind; never the prompt text) is
written as a hidden marker in the issue body, and a ``CarryoverFiler`` lists the open
issues carrying the carryover label over all pages once per session, keeping that list
current as it creates issues. A create whose answer was lost (5xx, timeout, dropped
connection) may have been applied, so the filer lists again before it retries.

The module also holds the STATE.md bookkeeping of the session loop: the ``→ issue #N``
suffixes and the session-end validation that files missing carryovers retroactively.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from coordinator.errors import ConfigurationError, StateError
from coordinator.model import Plan, Status

if TYPE_CHECKING:
    from coordinator.filing import CarryoverFiler, RetryPolicy, file_carryover

__all__ = [
    "MARKER_PATTERN",
    "TITLE_LIMIT",
    "Carryover",
    "CarryoverFiler",
    "CarryoverKind",
    "CarryoverResult",
    "IssueRef",
    "LedgerEntry",
    "Priority",
    "RetryPolicy",
    "covered_tasks",
    "file_carryover",
    "file_missing",
    "find_marker",
    "fingerprint",
    "issue_suffix",
    "ledger_entries",
    "marker",
    "missing_carryovers",
    "parse_issue_suffix",
    "plan_identity",
    "render_body",
    "render_title",
]

TITLE_LIMIT = 100
MARKER_PATTERN = re.compile(r"<!--\s*seawall:carryover\s+([0-9a-f]{16,64})\s*-->")
_SUFFIX_PATTERN = re.compile(r"→\s*(issue|existing)\s+#(\d+)")
_FILING = ("CarryoverFiler", "RetryPolicy", "file_carryover")


class CarryoverKind(StrEnum):
    SPIRAL = "SPIRAL"
    FAILED = "FAILED"


class Priority(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True, slots=True, kw_only=True)
class Carryover:
    """What to file for one escalated task (2×SPIRAL, or a first FAILED).

    ``plan`` is the plan's stable identity (see ``plan_identity``); with ``task_id`` and
    ``kind`` it makes the fingerprint. ``description`` is the one-line task shown in the
    title (the task id when empty); the rest is evidence for the body: ``final_text`` is
    the agent's final message (an excerpt is shown, and the error signature is taken from
    it when none was recorded), ``work_ref`` the ref holding the agent's work,
    ``work_commit`` its last commit there (the ref moves on with later attempts) and
    ``base`` the commit it started from, ``plan_path`` the plan file a rerun starts from.
    """

    plan: str
    task_id: str
    kind: CarryoverKind
    session: str
    wave: int
    description: str = ""
    tried: str = ""
    spiral_verdict: str = ""
    error_signature: str = ""
    remaining: str = ""
    context: str = ""
    priority: Priority = Priority.HIGH
    final_text: str = ""
    work_ref: str = ""
    work_commit: str = ""
    base: str = ""
    plan_path: str = ""

    def __post_init__(self) -> None:
        if not self.plan.strip() or not self.task_id.strip():
            raise ConfigurationError("a carryover needs a non-empty plan identity and task id")

    @property
    def fingerprint(self) -> str:
        return fingerprint(plan=self.plan, task_id=self.task_id, kind=self.kind)

    def labels(self, label: str = "carryover") -> tuple[str, ...]:
        """Type, priority and status labels: ``carryover``, ``priority:high``, ``status:spiral``."""
        return (label, f"priority:{self.priority.value}", f"status:{self.kind.value.lower()}")


@dataclass(frozen=True, slots=True, kw_only=True)
class CarryoverResult:
    """The outcome of filing one carryover. ``file_carryover`` always returns one.

    - created: ``created=True`` and the new issue's ``number`` and ``url``.
    - duplicate: ``skipped="duplicate"`` with the existing issue's ``number`` and ``url``;
      ``error`` is set only if the "seen again" comment could not be posted.
    - error: ``skipped="error"`` and ``error`` naming the tracker and the operation.
    """

    created: bool
    number: int | None = None
    url: str | None = None
    skipped: Literal["duplicate", "error"] | None = None
    error: str | None = None
    fingerprint: str = ""


# -- rendering -------------------------------------------------------------------------


def fingerprint(*, plan: str, task_id: str, kind: CarryoverKind | str) -> str:
    """A stable 16-hex-digit id of the work: plan identity, task id and kind only."""
    parts = (" ".join(plan.split()), task_id.strip(), str(kind).upper())
    digest = hashlib.sha256("\0".join(("seawall-carryover/v1", *parts)).encode("utf-8"))
    return digest.hexdigest()[:16]


def plan_identity(plan: Plan) -> str:
    """The plan's stable identity for fingerprints: its ``[session] name``."""
    return plan.session.name


def marker(fingerprint_: str) -> str:
    return f"<!-- seawall:carryover {fingerprint_} -->"


def find_marker(body: str) -> str | None:
    """The fingerprint in an issue body's carryover marker, if it has one."""
    match = MARKER_PATTERN.search(body or "")
    return match.group(1) if match else None


def render_seen_again(carryover: Carryover) -> str:
    return (
        f"Seen again by seawall session `{carryover.session}` (wave {carryover.wave}): "
        f"task `{carryover.task_id}` is still {carryover.kind.value}."
    )


def __getattr__(name: str) -> Any:
    """The filer lives in ``coordinator.filing``; its names are re-exported here."""
    if name in _FILING:
        from coordinator import filing

        return getattr(filing, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- STATE.md bookkeeping ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class IssueRef:
    """The issue a Wave History line points to; ``existing`` for a duplicate."""

    number: int
    url: str = ""
    existing: bool = False


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


def issue_suffix(outcome: CarryoverResult | IssueRef) -> str:
    """``→ issue #N`` for a new issue, ``→ existing #N`` for a duplicate, else ``""``."""
    if isinstance(outcome, IssueRef):
        return f"→ {'existing' if outcome.existing else 'issue'} #{outcome.number}"
    if outcome.number is None or outcome.skipped == "error":
        return ""
    return f"→ {'issue' if outcome.created else 'existing'} #{outcome.number}"


def parse_issue_suffix(line: str) -> IssueRef | None:
    """The ``→ issue #N`` / ``→ existing #N`` reference on a STATE.md line, if any."""
    match = _SUFFIX_PATTERN.search(line)
    if match is None:
        return None
    return IssueRef(number=int(match.group(2)), existing=match.group(1) == "existing")


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


def ledger_entries(state: Mapping[str, Any]) -> list[LedgerEntry]:
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


def covered_tasks(state: Mapping[str, Any]) -> set[str]:
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


def _entry(agent: Mapping[str, Any], wave: int) -> LedgerEntry:
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


from coordinator.carryover_text import render_body, render_title  # noqa: E402  (uses Carryover)
