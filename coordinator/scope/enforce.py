"""Turning a violation into a decision at the wave's enforcement level.

- ``strict`` denies, with a reason the agent sees;
- ``warn`` allows, tells the agent, and the caller records a ``scope_warning`` event;
- ``off`` allows silently.

Reasons start with ``seawall scope-denied:`` or ``seawall command-blocked:`` (the
Error Echo classes) and say how to carry on *within* the guard: they never suggest
turning it off, editing its settings, or another route to the same action.

When the guard itself cannot judge (no manifest for a named session, a corrupt one,
an agent missing from it, a command it cannot parse, unreadable hook input, its own
error) the outcome is the ``FAIL_MATRIX`` entry for that case: closed in strict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from seawall.model import Enforcement

__all__ = [
    "ALLOW",
    "FAIL_MATRIX",
    "Decision",
    "ErrorClass",
    "Failure",
    "Verdict",
    "decide",
    "decide_failure",
]


class Decision(StrEnum):
    ALLOW = "allow"
    WARN = "warn"  # allowed, and the agent is told
    DENY = "deny"


class ErrorClass(StrEnum):
    """The Error Echo classes a denial belongs to."""

    SCOPE_DENIED = "scope-denied"
    COMMAND_BLOCKED = "command-blocked"


class Failure(StrEnum):
    """Cases where the guard cannot judge a call normally."""

    NO_SESSION = "no-session"  # not a seawall agent: no session named, no live manifest
    MANIFEST_MISSING = "manifest-missing"  # a session is named but has no manifest
    MANIFEST_CORRUPT = "manifest-corrupt"  # unreadable, invalid, or of another session
    UNKNOWN_AGENT = "unknown-agent"  # the task is not in the wave's manifest
    UNPARSEABLE_COMMAND = "unparseable-command"  # the command line cannot be parsed
    UNKNOWN_PROGRAM = "unknown-program"  # what a command runs cannot be seen
    UNKNOWN_WRITE = "unknown-write"  # a write whose target is not known before it runs
    BAD_INPUT = "bad-input"  # the hook's stdin is not the documented JSON
    INTERNAL_ERROR = "internal-error"  # the guard failed


_CLOSED = MappingProxyType(
    {
        Enforcement.STRICT: Decision.DENY,
        Enforcement.WARN: Decision.WARN,
        Enforcement.OFF: Decision.ALLOW,
    }
)
_OPEN = MappingProxyType({level: Decision.ALLOW for level in Enforcement})

FAIL_MATRIX: Mapping[Failure, Mapping[Enforcement, Decision]] = MappingProxyType(
    {
        Failure.NO_SESSION: _OPEN,  # nothing to enforce (the command gate still applies)
        Failure.MANIFEST_MISSING: _CLOSED,
        Failure.MANIFEST_CORRUPT: _CLOSED,
        Failure.UNKNOWN_AGENT: _CLOSED,
        Failure.UNPARSEABLE_COMMAND: _CLOSED,
        Failure.UNKNOWN_PROGRAM: _CLOSED,
        Failure.UNKNOWN_WRITE: _CLOSED,
        Failure.BAD_INPUT: _CLOSED,
        Failure.INTERNAL_ERROR: _CLOSED,
    }
)

_HINTS = {
    ErrorClass.SCOPE_DENIED: (
        "Change only files inside your scope. If the task cannot be finished without this "
        "file, stop and report it in your STATUS line (partial, with REMAINING naming the file)."
    ),
    ErrorClass.COMMAND_BLOCKED: (
        "Do the task without this command. If it cannot be done without it, stop and report "
        "that in your STATUS line (partial, with REMAINING)."
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The decision on one tool call and the message the agent sees (empty on a plain allow)."""

    decision: Decision
    message: str = ""
    error_class: ErrorClass | None = None
    failure: Failure | None = None
    problem: str = ""

    @property
    def allowed(self) -> bool:
        return self.decision is not Decision.DENY


ALLOW = Verdict(decision=Decision.ALLOW)


def decide(
    enforcement: Enforcement,
    *,
    error_class: ErrorClass,
    problem: str,
    failure: Failure | None = None,
) -> Verdict:
    """The verdict on a violation ``problem`` at ``enforcement``."""
    decision = (FAIL_MATRIX[failure] if failure is not None else _CLOSED)[enforcement]
    if decision is Decision.ALLOW:
        return Verdict(decision=decision, error_class=error_class, failure=failure, problem=problem)
    if decision is Decision.DENY:
        message = f"seawall {error_class}: {problem}. {_HINTS[error_class]}"
    else:
        message = (
            f"seawall {error_class} (warning): {problem}. The call is allowed, and recorded "
            f"for the coordinator's review of this wave. {_HINTS[error_class]}"
        )
    return Verdict(
        decision=decision,
        message=message,
        error_class=error_class,
        failure=failure,
        problem=problem,
    )


def decide_failure(
    failure: Failure, enforcement: Enforcement, detail: str, *, error_class: ErrorClass
) -> Verdict:
    """The verdict when the guard cannot judge normally (see ``FAIL_MATRIX``)."""
    return decide(enforcement, error_class=error_class, problem=detail, failure=failure)
