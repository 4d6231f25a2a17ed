"""The stagnation finding: one value per detected pattern, one ``events.jsonl`` record."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from seawall.model import Status
from seawall.telemetry import EventLog, StagnationDetected

__all__ = [
    "ErrorClass",
    "Finding",
    "FindingEvent",
    "Pattern",
    "Source",
    "Verdict",
    "classify_error",
    "write_finding",
]


class Pattern(StrEnum):
    """The five stagnation patterns."""

    PAGINATION_SPIRAL = "pagination-spiral"
    TURN_KEY_REPETITION = "turn-key-repetition"
    ERROR_ECHO = "error-echo"
    GIT_WRITE = "git-write"
    STATUS_PARTIAL = "status-partial"


class Source(StrEnum):
    """Who produced the record: the post-wave review, or the live (mechanical) watcher."""

    COORDINATOR = "coordinator"
    TAIL = "tail"


class ErrorClass(StrEnum):
    """Error echo's taxonomy of error classes; no other pattern carries one."""

    EDIT_FORMAT_FRICTION = "edit-format-friction"
    SCOPE_DENIED = "scope-denied"
    COMMAND_BLOCKED = "command-blocked"
    OTHER = "other"


class Verdict(StrEnum):
    """What the coordinator does with the agent (the detectors' decision table)."""

    STAGNANT = "stagnant"  # re-dispatch with line-range scope
    SPIRAL = "spiral"  # revert, narrow, re-dispatch
    FAILED = "failed"  # escalate with the error context
    SURFACE = "surface"  # git write: report at once, inspect the shared index
    PARTIAL = "partial"  # self-reported partial: carry the rest forward


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One detected stagnation pattern of one agent.

    ``status`` is the status the review should give the agent for it (None for a git
    write, which changes no status). A status-partial finding only corroborates the
    agent's final report: when that report arrives, the report wins.
    """

    agent: str
    pattern: Pattern
    source: Source
    verdict: Verdict
    occurrences: int
    evidence: str
    error_class: ErrorClass | None = None
    subject: str = ""  # the path, call key, command or status word it is about

    @property
    def status(self) -> Status | None:
        return _STATUS[self.verdict]

    def event(self, *, wave: int) -> FindingEvent:
        """This finding as its ``stagnation_detected`` record (without ts/session)."""
        return FindingEvent(
            wave=wave,
            agent=self.agent,
            pattern=self.pattern,
            source=self.source,
            occurrences=self.occurrences,
            evidence=self.evidence,
            error_class=(self.error_class or ErrorClass.OTHER)
            if self.pattern is Pattern.ERROR_ECHO
            else None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FindingEvent:
    """The fields of one ``stagnation_detected`` record: the finding as telemetry
    readers see it (no verdict or subject; an error class for error echo only)."""

    wave: int
    agent: str
    pattern: Pattern
    source: Source
    occurrences: int
    evidence: str
    error_class: ErrorClass | None = None  # not written when None


_STATUS: dict[Verdict, Status | None] = {
    Verdict.STAGNANT: Status.PARTIAL,
    Verdict.SPIRAL: Status.SPIRAL,
    Verdict.FAILED: Status.FAILED,
    Verdict.SURFACE: None,
    Verdict.PARTIAL: Status.PARTIAL,
}


def write_finding(log: EventLog, finding: Finding, *, wave: int) -> StagnationDetected:
    """Append ``finding`` to ``events.jsonl`` as one ``stagnation_detected`` record."""
    event = finding.event(wave=wave)
    return log.append(
        StagnationDetected(
            wave=event.wave,
            agent=event.agent,
            pattern=event.pattern.value,
            source=event.source.value,
            occurrences=event.occurrences,
            evidence=event.evidence,
            error_class=None if event.error_class is None else event.error_class.value,
        )
    )


_EDIT_FRICTION = re.compile(
    r"old_string not found|string to replace not found|not unique|found \d+ matches of the string"
    r"|whitespace|indentation (?:does not|doesn't) match|no match(?:es)? found for (?:the )?old",
    re.IGNORECASE,
)
_SCOPE = re.compile(
    r"scope[- ]violation|scope[- ]denied|outside (?:of )?(?:the |your |its )?"
    r"(?:wave |file[- ]|allowed )?scope|not in (?:the |your )?(?:wave |file[- ])?scope|file-scope",
    re.IGNORECASE,
)
_COMMAND = re.compile(
    r"command[- ]blocked|blocked command|command is blocked|command (?:is )?not allowed"
    r"|denied by (?:the )?command policy|command[- ]policy",
    re.IGNORECASE,
)


def classify_error(text: str, *, exit_code: int | None = None) -> ErrorClass:
    """The error class of a failed call's output (first matching class wins)."""
    if _EDIT_FRICTION.search(text):
        return ErrorClass.EDIT_FORMAT_FRICTION
    if _COMMAND.search(text):
        return ErrorClass.COMMAND_BLOCKED
    if _SCOPE.search(text) or (exit_code == 2 and "hook" in text.lower()):
        return ErrorClass.SCOPE_DENIED
    return ErrorClass.OTHER
