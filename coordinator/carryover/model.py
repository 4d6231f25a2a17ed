"""What a carryover is: the escalated task to file, its fingerprint and its outcome.

A stable fingerprint of the work (plan identity, task id, kind; never the prompt text)
is written as a hidden marker in the issue body, so existing issues are found by
listing the carryover label and matching the marker, never by a search API.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from seawall.errors import ConfigurationError
from seawall.model import IssueRef, Plan

__all__ = [
    "MARKER_PATTERN",
    "TITLE_LIMIT",
    "Carryover",
    "CarryoverKind",
    "CarryoverResult",
    "Priority",
    "find_marker",
    "fingerprint",
    "marker",
    "plan_identity",
]

TITLE_LIMIT = 100
MARKER_PATTERN = re.compile(r"<!--\s*seawall:carryover\s+([0-9a-f]{16,64})\s*-->")


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

    @property
    def issue(self) -> IssueRef | None:
        """The issue this outcome points to (new or existing); None for an error."""
        if self.number is None or self.skipped == "error":
            return None
        return IssueRef(number=self.number, url=self.url or "", existing=not self.created)


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
