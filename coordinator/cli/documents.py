"""The small documents commands print with ``--json``, as records the codec writes.

The session's own documents are ``seawall.session.documents`` and the lead's
``seawall.session.step_types``; these are the rest: an error, a written report, the
adapters and their checks, the seawall worktrees, the open carryover issues, the waves
a plan makes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from msgspec import UNSET, UnsetType

from seawall.model import Enforcement, Isolation, SessionType
from seawall.scope.collisions import Overlap

__all__ = [
    "AdapterCheck",
    "AdapterChecks",
    "AdapterRow",
    "AdapterSources",
    "CarryoverRow",
    "ErrorDetail",
    "ErrorDocument",
    "PlanDocument",
    "PlannedWave",
    "ReportWritten",
    "ScopeCheck",
    "WorktreeRow",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorDetail:
    """What went wrong: the error's kind, its message, the exit code, and the file, task
    and field it names, when it names them."""

    type: str
    message: str
    exit_code: int
    path: str | UnsetType = UNSET
    task: str | UnsetType = UNSET
    field: str | UnsetType = UNSET


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorDocument:
    """``{"error": {...}}``: what a command given ``--json`` prints when it fails."""

    error: ErrorDetail


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportWritten:
    """``seawall report --json``: the session and the path of its HTML report."""

    session: str
    report: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterRow:
    """One adapter name: its kind, the distribution that provides it, where it points."""

    name: str
    kind: str  # tracker | runner
    package: str
    version: str
    target: str
    builtin: bool
    collides_with: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterCheck:
    """One adapter checked: whether it loads (or, for a plan's, works) and what was seen."""

    name: str
    kind: str  # tracker | runner | plan
    ok: bool
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterChecks:
    """``seawall adapters check --json``: every check, and whether all passed."""

    ok: bool
    adapters: tuple[AdapterCheck, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class WorktreeRow:
    """One seawall worktree (``seawall worktrees list --json``); ``state`` is missing,
    merged, dirty or unmerged, ``reason`` why it may be removed or is kept."""

    path: str
    branch: str | None
    session: str
    wave: int | None
    task: str
    age_seconds: float
    state: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CarryoverRow:
    """One open carryover issue (``seawall carryover list --json``)."""

    number: int
    title: str
    labels: tuple[str, ...]
    fingerprint: str | None
    url: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeCheck:
    """A wave's pre-dispatch scope check: what was done, the overlaps, the sub-waves."""

    action: str
    overlaps: tuple[Overlap, ...]
    sub_waves: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedWave:
    """One wave a plan makes, with its isolation and enforcement and why."""

    number: int
    tasks: tuple[str, ...]
    isolation: Isolation
    enforcement: Enforcement
    max_turns: int
    isolation_reason: str
    enforcement_reason: str
    scope_check: ScopeCheck


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterSources:
    """Where the plan's tracker and each of its runners come from."""

    tracker: str
    runners: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanDocument:
    """``seawall plan --json``: the waves, the adapters, and each runner's live barrier."""

    session: str
    session_type: SessionType
    waves: tuple[PlannedWave, ...]
    adapters: AdapterSources
    runners: dict[str, str]
