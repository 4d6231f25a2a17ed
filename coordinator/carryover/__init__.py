"""Carryover issues: file each escalated task exactly once, never raising.

``file_carryover`` files the carryover issue of a spiralling or failed task: it
returns a ``CarryoverResult`` saying created / duplicate / error and never raises.

Deduplication does not use a search API (it lags new issues and is rate-limited). A
stable fingerprint of the work is written as a hidden marker in the issue body, and a
``CarryoverFiler`` lists the open issues carrying the carryover label over all pages
once per session, keeping that list current as it creates issues. A create whose
answer was lost (5xx, timeout, dropped connection) may have been applied, so the filer
lists again before it retries.

The package holds the model (``model``), the words of an issue (``render``), the filer
and its retry policy (``filer``), and the session-end check that every SPIRAL/FAILED
line of the Wave History has its issue (``validation``).
"""

from seawall.carryover.filer import (
    CarryoverFiler,
    RetryPolicy,
    file_carryover,
    is_transient,
    retrying,
)
from seawall.carryover.model import (
    MARKER_PATTERN,
    TITLE_LIMIT,
    Carryover,
    CarryoverKind,
    CarryoverResult,
    Priority,
    find_marker,
    fingerprint,
    marker,
    plan_identity,
)
from seawall.carryover.render import (
    issue_suffix,
    parse_issue_suffix,
    render_body,
    render_seen_again,
    render_title,
)
from seawall.carryover.validation import (
    LedgerEntry,
    covered_tasks,
    file_missing,
    ledger_entries,
    missing_carryovers,
)
from seawall.model import IssueRef

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
    "is_transient",
    "issue_suffix",
    "ledger_entries",
    "marker",
    "missing_carryovers",
    "parse_issue_suffix",
    "plan_identity",
    "render_body",
    "render_seen_again",
    "render_title",
    "retrying",
]
