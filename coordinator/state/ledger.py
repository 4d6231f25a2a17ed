"""The session ledger: what ``state.json`` holds, as typed records.

The ledger is the single source of truth of a session. It is written atomically after
every step that changes it, so a coordinator killed at any point can be resumed from it.
Unknown keys from newer writers are kept in ``extra`` and written back unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "SCHEMA_VERSION",
    "AgentRecord",
    "IssueRef",
    "SessionPhase",
    "SessionState",
    "TaskRecord",
    "WavePhase",
    "WaveRecord",
]

SCHEMA_VERSION = 1


class SessionPhase(StrEnum):
    RUNNING = "running"
    HALTED = "halted"  # the wave breaker tripped; `seawall resume` continues
    DONE = "done"
    KILLED = "killed"  # `seawall kill`: the session will not continue


class WavePhase(StrEnum):
    PLANNED = "planned"
    PREPARED = "prepared"  # workspaces created, prompts rendered
    DISPATCHED = "dispatched"  # agents running (or handed to a lead agent)
    REVIEWED = "reviewed"  # statuses known, spirals judged, recovery decided
    MERGED = "merged"  # the target branch holds the wave's merge
    DONE = "done"  # workspaces cleaned, carryovers filed


@dataclass(slots=True, kw_only=True)
class IssueRef:
    number: int
    url: str = ""
    existing: bool = False

    def suffix(self) -> str:
        return f"→ {'existing' if self.existing else 'issue'} #{self.number}"


@dataclass(slots=True, kw_only=True)
class AgentRecord:
    """One agent of one wave: how it ran and what came of it."""

    task: str
    status: str | None = None
    summary: str = ""
    remaining: str = ""
    inferred: bool = False
    reason: str = ""
    spiral: dict[str, Any] | None = None
    issue: IssueRef | None = None
    merged: bool = False
    workspace: str = ""
    branch: str | None = None
    checkpoint: str | None = None
    wip: str | None = None
    turns: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0
    cost_estimated: bool = False  # priced from token usage: the agent CLI gave no total
    input_tokens: int = 0
    output_tokens: int = 0
    elapsed_s: float = 0.0
    exit_code: int | None = None
    trip: dict[str, Any] | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    scope_violations: list[str] = field(default_factory=list)
    error_signature: str = ""
    final_text: str = ""
    transcript: str = ""
    last_tool: str = ""
    run: dict[str, Any] | None = None  # the raw outcome of the run, kept for review/resume
    recovery: str = ""  # what the recovery protocol did: carry-forward, fix, rescope, ...
    touched: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class WaveRecord:
    number: int
    tasks: list[dict[str, Any]]  # the Task values dispatched, serialised
    isolation: str
    enforcement: str
    max_turns: int
    isolation_reason: str = ""
    enforcement_reason: str = ""
    base: str = ""
    phase: WavePhase = WavePhase.PLANNED
    fallback: str | None = None
    agents: list[AgentRecord] = field(default_factory=list)
    integration: str | None = None
    resolutions: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    checks: dict[str, Any] | None = None
    started_at: float = 0.0
    finished_at: float = 0.0
    target_after: str | None = None
    fix_tasks: list[str] = field(default_factory=list)
    # changes of a shared tree no agent may own: ref, files, left_in_place, restore command
    set_aside: dict[str, Any] | None = None
    lead: bool = False  # dispatched by a lead agent (step mode), which reviews it later
    onto: str | None = None  # the target branch's later tip the wave is merged onto

    @property
    def start(self) -> str:
        """The commit the wave's merge is built on and the target branch moves from."""
        return self.onto or self.base

    def agent(self, task: str) -> AgentRecord:
        for record in self.agents:
            if record.task == task:
                return record
        raise KeyError(task)


@dataclass(slots=True, kw_only=True)
class TaskRecord:
    """A task's life across waves: attempts, reworks, spirals and its carryover issue."""

    id: str
    attempts: int = 0
    rework: int = 0
    spirals: int = 0
    failures: int = 0
    status: str | None = None
    issue: IssueRef | None = None
    signatures: list[str] = field(default_factory=list)
    origin: dict[str, Any] | None = None  # the task as the plan first gave it
    abandoned: bool = False  # escalated with a carryover issue; not dispatched again


@dataclass(slots=True, kw_only=True)
class SessionState:
    session: str
    name: str
    repo: str
    target_branch: str
    start_commit: str
    plan_path: str = ""
    plan_text: str = ""
    runner: str | None = None
    tracker: str | None = None
    phase: SessionPhase = SessionPhase.RUNNING
    created_at: float = 0.0
    updated_at: float = 0.0
    pending: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, TaskRecord] = field(default_factory=dict)
    waves: list[WaveRecord] = field(default_factory=list)
    breaker: dict[str, Any] = field(default_factory=dict)
    halt: dict[str, Any] = field(default_factory=dict)  # a halt that is not a breaker trip
    cost_usd: float = 0.0
    running_s: float = 0.0  # seconds seawall ran the session, over all runs and resumes
    clock_start_s: float = 0.0  # running_s when the session_minutes allowance began
    extra: dict[str, Any] = field(default_factory=dict)

    def task(self, task_id: str) -> TaskRecord:
        record = self.tasks.get(task_id)
        if record is None:
            record = self.tasks[task_id] = TaskRecord(id=task_id)
        return record

    @property
    def current_wave(self) -> WaveRecord | None:
        return self.waves[-1] if self.waves else None

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        extra = data.pop("extra")
        data = {"schema": SCHEMA_VERSION, **data}
        data.update({k: v for k, v in extra.items() if k not in data})
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionState:
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in data.items() if k in names and k != "extra"}
        extra = {k: v for k, v in data.items() if k not in names and k != "schema"}
        known["phase"] = SessionPhase(known.get("phase", SessionPhase.RUNNING))
        known["tasks"] = {k: _task(v) for k, v in known.get("tasks", {}).items()}
        known["waves"] = [_wave(w) for w in known.get("waves", [])]
        return cls(**known, extra=extra)


def _issue(value: Any) -> IssueRef | None:
    if not isinstance(value, dict):
        return None
    return IssueRef(
        number=int(value["number"]),
        url=str(value.get("url", "")),
        existing=bool(value.get("existing", False)),
    )


def _pick(cls: type[Any], data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def _task(data: dict[str, Any]) -> TaskRecord:
    values = _pick(TaskRecord, data)
    values["issue"] = _issue(values.get("issue"))
    return TaskRecord(**values)


def _agent(data: dict[str, Any]) -> AgentRecord:
    values = _pick(AgentRecord, data)
    values["issue"] = _issue(values.get("issue"))
    return AgentRecord(**values)


def _wave(data: dict[str, Any]) -> WaveRecord:
    values = _pick(WaveRecord, data)
    values["phase"] = WavePhase(values.get("phase", WavePhase.PLANNED))
    values["agents"] = [_agent(a) for a in values.get("agents", [])]
    return WaveRecord(**values)
