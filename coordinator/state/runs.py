"""What came of one agent's run, as the dispatcher measured it and the ledger keeps it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from seawall.breakers.trip import Trip
from seawall.events import ProviderLimit
from seawall.model import RunCounts
from seawall.stagnation.finding import Finding

__all__ = ["AgentRun"]


@dataclass(slots=True, kw_only=True)
class AgentRun:
    """What came of one agent's run, before review. Serialisable into the ledger."""

    task_id: str
    final_text: str = ""
    is_error: bool = False
    exit_code: int | None = None
    truncated: bool = False  # stopped, timed out, or never finished
    stop_reason: str = ""
    runner_error: str = ""
    saw_errors: bool = False
    last_error: str = ""
    counts: RunCounts = field(default_factory=RunCounts)
    trip: Trip | None = None
    soft_trips: tuple[Trip, ...] = ()  # self-service trips: the agent was nudged, not stopped
    checkpoint: str | None = None
    wip: str | None = None
    touched: tuple[str, ...] = ()
    findings: list[Finding] = field(default_factory=list)
    transcript: str = ""
    checkpoint_error: str = ""  # the agent's files could not be recorded (they stay on disk)
    denials: tuple[str, ...] = ()  # calls the agent CLI's own permission layer refused
    failed_edits: int = 0  # edit calls whose result was an error, not a guard denial
    last_failed_edit: str = ""
    writes: int = 0  # edit calls that succeeded
    guard_denials: int = 0  # calls seawall's guard refused (out of scope, a blocked command)
    last_guard_denial: str = ""
    start_failure: str = ""  # why the agent never started (or died before its first event)
    stderr_tail: str = ""
    watch_problem: str = ""  # why the workspace of an agent that names no edits went unwatched
    limit: ProviderLimit | None = None  # the provider's limit that paused the agent
    # files the agent's shell commands named as writes (in place: how seawall sees an
    # agent write outside its scope without an edit tool; workspace-relative)
    shell_writes: tuple[str, ...] = ()
    conversation: str = ""  # the conversation the agent CLI named (to continue it later)
    continued: str = ""  # the conversation this run continued ("" for a fresh start)
    # why the conversation the run was to continue could not be, and it started afresh
    not_continued: str = ""

    def for_ledger(self) -> AgentRun:
        """This run as the ledger keeps it: the final text's last 8,000 characters."""
        return replace(self, final_text=self.final_text[-8000:])
