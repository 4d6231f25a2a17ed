"""Review of one agent after its wave: status, live findings, spiral verdict, scope.

Precedence, strongest first: a tripped breaker (``blocked``); a spiral from the agent's
own history or a turn-key repetition (``spiral``); an error echo (``failed``); the
agent's STATUS line (a ``done`` that changed nothing is checked against the stream's
evidence, see ``seawall.session.evidence``); inference when there is none (with
the live status-partial record as a backstop for a report lost to a kill). A tail
record only corroborates a report that arrived: one failure is never counted twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from seawall.model import Status, StatusReport
from seawall.session.agent_watch import AgentRun
from seawall.session.evidence import WorkEvidence, check_unchanged_done
from seawall.session.limits import limit_reason
from seawall.stagnation.finding import Finding, Pattern
from seawall.state.ledger import AgentRecord, SpiralRecord
from seawall.status_parsing import parse_status

__all__ = ["apply_review"]


def judge_status(run: AgentRun, *, changed: bool, may_change_nothing: bool = False) -> StatusReport:
    """The agent's status from its final text (or inferred), before history is read."""
    if run.runner_error and not run.final_text:
        return StatusReport(
            status=Status.FAILED,
            summary=run.runner_error,
            inferred=True,
            reason="the runner failed: " + run.runner_error,
        )
    reported_errors: bool | None = None
    if run.is_error and not run.truncated:
        reported_errors = True
    report = parse_status(
        run.final_text,
        changed_files=changed,
        reported_errors=reported_errors,
        truncated=run.truncated,
    )
    if report.inferred:
        backstop = _live_status(run.findings)
        if backstop is not None:
            return StatusReport(
                status=backstop,
                summary=report.summary,
                inferred=True,
                reason=f"no final report; the live transcript record says STATUS: {backstop}",
            )
    report = check_unchanged_done(
        report, WorkEvidence.of(run), changed=changed, may_change_nothing=may_change_nothing
    )
    if run.truncated and report.status is Status.PARTIAL and not report.remaining:
        return StatusReport(
            status=Status.PARTIAL,
            summary=report.summary,
            remaining=f"the rest of the task (the agent was stopped: {run.stop_reason})",
            inferred=report.inferred,
            reason=report.reason,
        )
    if run.truncated and report.status.is_success and not report.inferred:
        return StatusReport(
            status=Status.PARTIAL,
            summary=report.summary,
            remaining="the agent was stopped before it could verify its work",
            inferred=True,
            reason=f"reported {report.status} but was stopped: {run.stop_reason}",
        )
    return report


def _live_status(findings: Sequence[Finding]) -> Status | None:
    """The status the last live status-partial record carries (partial or failed)."""
    for finding in reversed(findings):
        if finding.pattern is Pattern.STATUS_PARTIAL:
            return finding.status
    return None


def apply_review(
    record: AgentRecord,
    run: AgentRun,
    *,
    changed_paths: Sequence[str],
    spiral: SpiralRecord | None,
    may_change_nothing: bool = False,
) -> None:
    """Fill ``record`` with the verdict on ``run`` (``may_change_nothing``: the task may
    end done with nothing changed, see ``seawall.session.evidence``)."""
    report = judge_status(run, changed=bool(changed_paths), may_change_nothing=may_change_nothing)
    status, reason = report.status, report.reason
    patterns = {str(f.pattern): f for f in run.findings}
    if run.limit is not None and run.trip is None:
        status, reason = Status.PAUSED, limit_reason(run.limit)
    elif run.trip is not None:
        status = Status.BLOCKED
        reason = f"breaker {run.trip.kind.label} tripped: {run.trip.evidence}"
    elif spiral is not None:
        status, reason = Status.SPIRAL, f"spiral in its history: {spiral.summary}"
    elif "turn-key-repetition" in patterns:
        status = Status.SPIRAL
        reason = "turn-key repetition: the same call three times in a row"
        line = _evidence_line(patterns["turn-key-repetition"])
        spiral = SpiralRecord(summary=line, evidence=(line,))
    elif "error-echo" in patterns:
        status = Status.FAILED
        reason = f"error echo ({patterns['error-echo'].error_class or 'other'})"
    elif "pagination-spiral" in patterns and status.is_success and not changed_paths:
        status = Status.PARTIAL
        reason = "stagnant: paged through a file without editing it"
    record.status = status
    record.summary = report.summary
    record.remaining = report.remaining
    record.inferred = report.inferred
    record.reason = reason
    record.spiral = spiral
    record.findings = list(run.findings)
    record.trip = run.trip
    record.error_signature = run.last_error[-500:] if status is Status.FAILED else ""
    record.final_text = run.final_text[-4000:]


def _evidence_line(finding: Finding) -> str:
    return finding.evidence[:200]
