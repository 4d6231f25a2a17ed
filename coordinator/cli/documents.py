"""The small documents commands print with ``--json``, as records the codec writes.

The session's own documents are ``seawall.session.documents`` and the lead's
``seawall.session.step_types``; these are the rest: an error, a written report, the
adapters and their checks, the seawall worktrees and their pruning, the open carryover
issues and their validation, the waves a plan makes, an agent's prompt, the files put
back, the unattended runner's tick and queue, the hooks installed. Each names its JSON
Schema in ``"schema"`` (shipped in ``seawall/lead/schemas``, see docs/sessions.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from msgspec import UNSET, UnsetType

from seawall.model import Enforcement, Isolation, SessionType
from seawall.scope.collisions import Overlap
from seawall.unattended.report import TickReport

__all__ = [
    "AdapterCheck",
    "AdapterChecks",
    "AdapterList",
    "AdapterRow",
    "AdapterSources",
    "CarryoverFiled",
    "CarryoverList",
    "CarryoverRow",
    "CarryoverValidation",
    "DemoDocument",
    "DemoIssue",
    "DuplicateClosed",
    "ErrorDetail",
    "ErrorDocument",
    "FileWritten",
    "HooksInstalled",
    "McpDescription",
    "McpResource",
    "McpTool",
    "PlanDocument",
    "PlannedWave",
    "PromptDocument",
    "Queued",
    "ReportWritten",
    "Restored",
    "RestoredFile",
    "RunnerResumed",
    "ScopeCheck",
    "TickDone",
    "WaveWatchFindings",
    "WaveWatchTrip",
    "WorktreeList",
    "WorktreePruned",
    "WorktreeRow",
    "WorktreesPruned",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorDetail:
    """What went wrong: ``code`` its kind (``plan``, ``usage``, ``state``, ...), ``type``
    the exception's name, the message, the exit code, and where (the ``file``, its
    ``line`` and ``column``, the ``task`` and the ``field`` path) and what to do
    (``hint``), when the error knows them."""

    code: str
    type: str
    message: str
    exit_code: int
    file: str | UnsetType = UNSET
    line: int | UnsetType = UNSET
    column: int | UnsetType = UNSET
    task: str | UnsetType = UNSET
    field: str | UnsetType = UNSET
    hint: str | UnsetType = UNSET


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorDocument:
    """``{"schema": "seawall.error/1", "error": {...}}``: what a command given ``--json``
    (or one whose answer is always JSON, such as ``seawall next``) prints when it fails,
    on standard output, exiting with the documented code."""

    schema: str = field(default="seawall.error/1", init=False)
    error: ErrorDetail


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportWritten:
    """``seawall report --json``: the session and the path of its HTML report."""

    schema: str = field(default="seawall.report/1", init=False)
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
    """One adapter checked: whether it loads (or, for a plan's, works) and what was seen.
    ``extra`` names the optional extra it needs that is not installed (``ok`` then: no
    plan checked uses it)."""

    name: str
    kind: str  # tracker | runner | plan
    ok: bool
    detail: str
    extra: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterChecks:
    """``seawall adapters check --json``: every check, and whether all passed (an
    optional extra that is not installed and that nothing uses is not a failure)."""

    schema: str = field(default="seawall.adapters-check/1", init=False)
    ok: bool
    adapters: tuple[AdapterCheck, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterList:
    """``seawall adapters list --json``: every adapter name."""

    schema: str = field(default="seawall.adapters/1", init=False)
    adapters: tuple[AdapterRow, ...]


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
class WorktreeList:
    """``seawall worktrees list --json``."""

    schema: str = field(default="seawall.worktrees/1", init=False)
    worktrees: tuple[WorktreeRow, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class WorktreePruned:
    """One worktree ``worktrees prune`` removed or kept, and why."""

    path: str
    owner: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WorktreesPruned:
    """``seawall worktrees prune --json``: what was removed, what was kept, and the
    checkpoints unmerged work was saved as before its worktree was removed."""

    schema: str = field(default="seawall.worktrees-prune/1", init=False)
    removed: tuple[WorktreePruned, ...]
    kept: tuple[WorktreePruned, ...]
    salvaged: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CarryoverRow:
    """One open carryover issue (``seawall carryover list --json``)."""

    number: int
    title: str
    labels: tuple[str, ...]
    fingerprint: str | None
    url: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CarryoverList:
    """``seawall carryover list --json``: the open carryover issues."""

    schema: str = field(default="seawall.carryover/1", init=False)
    label: str
    issues: tuple[CarryoverRow, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CarryoverFiled:
    """One SPIRAL/FAILED line of the history and its issue (``issue`` None while missing
    or when filing failed, ``error`` then says why)."""

    wave: int
    task: str
    status: str
    issue: int | None = None
    url: str | None = None
    existing: bool = False
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DuplicateClosed:
    """An open issue closed as a duplicate of the oldest with the same fingerprint."""

    number: int
    duplicate_of: int | None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CarryoverValidation:
    """``seawall carryover validate --json``: the lines that lacked their issue (filed
    now, or only listed with ``--dry-run``) and the duplicates closed."""

    schema: str = field(default="seawall.carryover-validate/1", init=False)
    session: str
    dry_run: bool
    missing: tuple[CarryoverFiled, ...]
    duplicates: tuple[DuplicateClosed, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptDocument:
    """``seawall prompt --json``: the exact prompt TASK's agent gets in its wave."""

    schema: str = field(default="seawall.prompt/1", init=False)
    task: str
    wave: int
    max_turns: int
    scope: tuple[str, ...]
    prompt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RestoredFile:
    """A set-aside file: ``restored`` when written back, else it exists and was kept."""

    path: str
    wave: int
    ref: str
    restored: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Restored:
    """``seawall restore --json``: every set-aside file and whether it was put back."""

    schema: str = field(default="seawall.restore/1", init=False)
    session: str
    files: tuple[RestoredFile, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TickDone:
    """``seawall runner tick --json``: what the tick did, as ``ticks.jsonl`` records it."""

    schema: str = field(default="seawall.runner-tick/1", init=False)
    tick: TickReport


@dataclass(frozen=True, slots=True, kw_only=True)
class Queued:
    """``seawall runner enqueue --json``: the item queued."""

    schema: str = field(default="seawall.runner-enqueue/1", init=False)
    item: str
    plan: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerResumed:
    """``seawall runner resume --json``: the blocked reason is cleared."""

    schema: str = field(default="seawall.runner-resume/1", init=False)
    resumed: Literal[True] = True


@dataclass(frozen=True, slots=True, kw_only=True)
class FileWritten:
    """A settings file ``hooks install`` wrote (``changed``) or found up to date."""

    path: str
    changed: bool
    what: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HooksInstalled:
    """``seawall hooks install --json``: the files written, whether the lead's boundary
    is complete, and the prerequisites it still lacks (``--check`` writes nothing)."""

    schema: str = field(default="seawall.hooks-install/1", init=False)
    files: tuple[FileWritten, ...]
    complete: bool
    lines: tuple[str, ...]
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeCheck:
    """A wave's pre-dispatch scope check: what was done, the overlaps, and the tasks
    that wait for a later wave because their scopes overlap one in this wave."""

    action: str
    overlaps: tuple[Overlap, ...]
    later: tuple[str, ...]


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
    barriers: dict[str, str]  # by runner: what keeps its agents in scope while they run


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterSources:
    """Where the plan's tracker and each of its runners come from."""

    tracker: str
    runners: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanDocument:
    """``seawall plan --json``: the waves as the run will make them (each with its
    runners' live barriers), and the adapters."""

    schema: str = field(default="seawall.plan/1", init=False)
    session: str
    session_type: SessionType
    waves: tuple[PlannedWave, ...]
    adapters: AdapterSources


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoIssue:
    number: int
    title: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoDocument:
    """``seawall demo --json``: the demo repository, its session (``session_exit_code``
    is the session's own exit code; the command exits 0 when it finished, with or without
    carryovers), the carryover issues in ``issues_dir`` and the command that runs the
    demo again in the same folder."""

    schema: str = field(default="seawall.demo/1", init=False)
    repo: str
    session: str
    session_exit_code: int
    state_md: str
    report: str | None
    issues_dir: str
    issues: tuple[DemoIssue, ...]
    again: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveWatchTrip:
    """``seawall wave watch --json``: an agent's breaker tripped, as it happened;
    ``soft`` for a nudge to run the check (unverified-edits), which stops nothing."""

    schema: str = field(default="seawall.wave-watch/1", init=False)
    kind: Literal["trip"] = "trip"
    agent: str
    breaker: str
    soft: bool
    evidence: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveWatchFindings:
    """``seawall wave watch --json``, at its end: each agent's findings (the patterns the
    detectors saw, after the post-wave checks)."""

    schema: str = field(default="seawall.wave-watch/1", init=False)
    kind: Literal["findings"] = "findings"
    agent: str
    patterns: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class McpTool:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class McpResource:
    uri: str
    name: str
    description: str
    mime_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class McpDescription:
    """``seawall mcp --json``: what the server offers, printed instead of serving: its
    name and version, its instructions to the lead, its tools (with the JSON Schema of
    their arguments) and its resources."""

    schema: str = field(default="seawall.mcp/1", init=False)
    name: str
    version: str
    instructions: str
    tools: tuple[McpTool, ...]
    resources: tuple[McpResource, ...]
