"""A ``STATUS: done`` that left no trace, checked against what the agent's stream showed.

An agent that reports done while its workspace holds no change and no commit has either
done a task that changes nothing or believed work happened that did not: a patch the
CLI rejected, a write the permission layer refused, a call seawall's guard denied.
The report is not taken at its word:

- with evidence of failed work (failed edits, calls the agent CLI refused, calls the
  guard denied) it is ``failed``: the agent could not do the work, and the evidence is
  the reason, carried into the fix task and the carryover;
- with no evidence of failure it stays ``done`` (the work may have been there already,
  and when in doubt a productive agent is not failed), but the reason says what was
  seen and the console shows it;
- a task declared to change nothing (``may_change_nothing = true``, or of kind
  ``review`` or ``research``) keeps its ``done``, as does ``no-tests-needed``, which
  is the test writer's way of saying nothing needed changing.
"""

from __future__ import annotations

from dataclasses import dataclass

from seawall.model import Status, StatusReport, Task, TaskKind
from seawall.session.agent_watch import AgentRun
from seawall.state.refusals import Refusals

__all__ = ["WorkEvidence", "accepts_no_change", "check_unchanged_done", "verdict_note"]

_CHECKED = "reported done, but nothing changed"

_QUIET_KINDS = frozenset({TaskKind.REVIEW, TaskKind.RESEARCH})
_QUOTED = 200


def accepts_no_change(task: Task) -> bool:
    """Whether ``task`` may legitimately end done with nothing changed."""
    return task.may_change_nothing or task.kind in _QUIET_KINDS


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkEvidence:
    """What the stream showed of an agent's attempts to change its workspace."""

    writes: int = 0  # edit calls that succeeded
    failed_edits: int = 0  # edit calls that failed (refused by the CLI included)
    last_failed_edit: str = ""
    denials: tuple[str, ...] = ()  # calls the agent CLI lists as refused (its permission
    # layer's, and the guard's it was told of)
    guard_denials: int = 0  # calls seawall's guard (scope, command policy) refused
    last_guard_denial: str = ""

    @classmethod
    def of(cls, run: AgentRun) -> WorkEvidence:
        """The evidence ``run`` recorded from its stream."""
        return cls(
            writes=run.writes,
            failed_edits=run.failed_edits,
            last_failed_edit=run.last_failed_edit,
            denials=run.denials,
            guard_denials=run.guard_denials,
            last_guard_denial=run.last_guard_denial,
        )

    def problems(self) -> list[str]:
        """Each kind of failed work, counted, with the last one quoted."""
        found: list[str] = []
        if self.guard_denials:
            found.append(
                f"seawall's guard denied {self.guard_denials} call(s) "
                f"({_quote(self.last_guard_denial)})"
            )
        refusals = self.refusals
        refused = refusals.by_cli  # the CLI lists the guard's refusals among its own
        failed = self.failed_edits - refused  # a refused edit fails as well
        if failed > 0:
            found.append(f"{failed} edit(s) failed ({_quote(self.last_failed_edit)})")
        if refused > 0:
            _, theirs, exact = refusals.split()
            shown = ", ".join(_quote(d) for d in theirs[:3])
            more = f" (+{len(theirs) - 3} more)" if len(theirs) > 3 else ""
            among = "" if exact else "among "
            found.append(f"the agent CLI refused {refused} call(s): {among}{shown}{more}")
        return found

    @property
    def refusals(self) -> Refusals:
        """The refused calls, told apart by who refused them."""
        return Refusals(
            listed=self.denials, by_seawall=self.guard_denials, last_answer=self.last_guard_denial
        )


def check_unchanged_done(
    report: StatusReport, evidence: WorkEvidence, *, changed: bool, may_change_nothing: bool
) -> StatusReport:
    """``report`` as the module's rules judge it; unchanged unless it is a reported
    ``done`` with no change and no commit (``changed`` False)."""
    if report.status is not Status.DONE or report.inferred or changed or may_change_nothing:
        return report
    problems = evidence.problems()
    if problems:
        why = f"{_CHECKED} and " + "; ".join(problems)
        return StatusReport(status=Status.FAILED, summary=why, inferred=True, reason=why)
    seen = f"{evidence.writes} edit(s) succeeded" if evidence.writes else "no edit was seen"
    why = f"{_CHECKED} and no commit was made; {seen} and no failure: accepted"
    return StatusReport(
        status=report.status, summary=report.summary, remaining=report.remaining, reason=why
    )


def verdict_note(status: str, reason: str) -> str | None:
    """The console line of a done these rules overturned (``"FAILED: reported done,
    but ..."``), None for any other verdict."""
    return f"{status.upper()}: {reason}" if reason.startswith(_CHECKED) else None


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTED else flat[: _QUOTED - 1] + "…"
