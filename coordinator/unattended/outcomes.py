"""The one outcome contract: what an attempt's outcome means to the runner.

The runner (which item to take next), the breaker (what counts as a failure) and intake
(which items are finished) all read this module and nothing else, so they cannot
disagree about a row of ``attempted.jsonl``.

The counting rules of the runner-level breaker:

- every RETRYABLE outcome except ``died`` and ``rate-limited`` is a failure and counts;
- PARKED outcomes (``needs-input``, ``awaiting-answer``, ``verification-failed``) did
  their work and wait for a person: they end a failure chain, except a
  ``verification-failed`` whose publish gate is environmental (``remote``, ``push``,
  ``pr-create``), which describes the machine and counts;
- ``blocked-*`` rows never ran: they neither count nor end a chain, and they do not move
  the cooldown clock;
- ``died`` and ``rate-limited`` are skipped: neither counts nor ends a chain;
- SUCCESS outcomes end a chain;
- ``running`` is the row written before a run; it says nothing yet and is skipped;
- an outcome this module does not know counts as a failure: halting is always safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType

from seawall.exitcodes import ExitCode

__all__ = [
    "BLOCKED_PREFIX",
    "ENVIRONMENTAL_PUBLISH_GATES",
    "EXIT_CODE_OUTCOMES",
    "PARKED_OUTCOMES",
    "RETRYABLE_OUTCOMES",
    "SKIPPED_OUTCOMES",
    "SUCCESS_OUTCOMES",
    "ChainEffect",
    "Outcome",
    "chain_effect",
    "is_blocked",
    "is_finished",
    "is_parked",
    "outcome_for_exit_code",
]

BLOCKED_PREFIX = "blocked-"


class Outcome(StrEnum):
    """Outcomes the runner writes. ``blocked-*`` rows use their own suffixes."""

    RUNNING = "running"  # written before the run; replaced by the row written after it
    DONE = "done"
    NO_TESTS_NEEDED = "no-tests-needed"
    PARTIAL = "partial"  # did work and filed carryover for the rest
    FAILED = "failed"
    SPIRAL = "spiral"
    TIMED_OUT = "timed-out"
    DIED = "died"  # a run the supervisor lost, e.g. across a reboot
    RATE_LIMITED = "rate-limited"
    NEEDS_INPUT = "needs-input"
    AWAITING_ANSWER = "awaiting-answer"
    VERIFICATION_FAILED = "verification-failed"
    BLOCKED_BREAKER = "blocked-breaker"  # the runner breaker refused the tick
    BLOCKED_RATE_LIMIT = "blocked-rate-limit"  # the rate-limit backoff refused the tick


class ChainEffect(StrEnum):
    """What one run does to a chain of consecutive failures, read newest first."""

    COUNTS = "counts"  # a failure: the chain grows by one
    ENDS = "ends"  # a success or a parked run: the chain stops here
    SKIPPED = "skipped"  # says nothing: the walk goes on to the next older run


SUCCESS_OUTCOMES: frozenset[str] = frozenset(
    {Outcome.DONE, Outcome.NO_TESTS_NEEDED, Outcome.PARTIAL}
)
RETRYABLE_OUTCOMES: frozenset[str] = frozenset(
    {Outcome.FAILED, Outcome.SPIRAL, Outcome.TIMED_OUT, Outcome.DIED, Outcome.RATE_LIMITED}
)
PARKED_OUTCOMES: frozenset[str] = frozenset(
    {Outcome.NEEDS_INPUT, Outcome.AWAITING_ANSWER, Outcome.VERIFICATION_FAILED}
)
SKIPPED_OUTCOMES: frozenset[str] = frozenset({Outcome.DIED, Outcome.RATE_LIMITED, Outcome.RUNNING})
# A publish refusal at one of these steps describes the machine, not the task: every
# next item meets it at the same step, so it counts as a failure.
ENVIRONMENTAL_PUBLISH_GATES: frozenset[str] = frozenset({"remote", "push", "pr-create"})

# Exit codes of ``python -m seawall run PLAN`` and what the runner records for them.
# Any other code (1 included), a crash or an executable that cannot start is ``failed``;
# a wall-clock timeout is ``timed-out``.
EXIT_CODE_OUTCOMES: Mapping[int, Outcome] = MappingProxyType(
    {
        ExitCode.OK: Outcome.DONE,
        ExitCode.CARRYOVER: Outcome.PARTIAL,  # success with carryover: it did work
        ExitCode.HALTED: Outcome.NEEDS_INPUT,  # the session's own breaker halted: parked
        ExitCode.NOTHING_SUCCEEDED: Outcome.FAILED,
        ExitCode.RATE_LIMITED: Outcome.RATE_LIMITED,
        # the work was done and a person must look at the checks: parked
        ExitCode.CHECKS_FAILED: Outcome.VERIFICATION_FAILED,
        # the agent program does not start: the machine's failure, every next item
        # meets it, so it counts (this is what the runner-level breaker is for)
        ExitCode.AGENT_START: Outcome.FAILED,
    }
)


def outcome_for_exit_code(code: int) -> Outcome:
    """Map a session's exit code to an outcome; unknown codes are ``failed``."""
    return EXIT_CODE_OUTCOMES.get(code, Outcome.FAILED)


def is_blocked(outcome: str) -> bool:
    """True for ``blocked-*`` rows: the tick refused the item, it never ran."""
    return outcome.startswith(BLOCKED_PREFIX)


def is_parked(outcome: str) -> bool:
    """True when the run did its work and waits for a person."""
    return outcome in PARKED_OUTCOMES


def is_finished(outcome: str) -> bool:
    """True when an item whose newest run ended so is done: it is never taken again."""
    return outcome in SUCCESS_OUTCOMES


def chain_effect(outcome: str, publish_gate: str | None = None) -> ChainEffect:
    """Classify one run's final outcome by the counting rules of this module."""
    if is_blocked(outcome) or outcome in SKIPPED_OUTCOMES:
        return ChainEffect.SKIPPED
    if outcome in SUCCESS_OUTCOMES:
        return ChainEffect.ENDS
    if outcome in PARKED_OUTCOMES:
        environmental = (
            outcome == Outcome.VERIFICATION_FAILED and publish_gate in ENVIRONMENTAL_PUBLISH_GATES
        )
        return ChainEffect.COUNTS if environmental else ChainEffect.ENDS
    return ChainEffect.COUNTS
