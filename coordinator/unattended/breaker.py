"""The runner-level breaker and the rate-limit backoff, both read from the ledger.

There is no counter: the number of consecutive failed attempts is recomputed from the
rows of ``attempted.jsonl`` in a trailing window on every tick, by the counting rules of
``outcomes``. The breaker is half-open rather than latched: once the cooldown has run
out since the newest attempt that actually ran, one probe goes through; a success ends
the chain and closes it, a failure becomes the newest attempt and re-opens it for
another cooldown. ``blocked-*`` rows do not move that clock.

Every failure of the chain counts, the same or not: a machine that fails each item
differently is still failing. The failure signatures of the chain's runs (see
``failure``) are compared to say which it is: one failure repeated (the machine: an
expired token, a CLI that no longer launches) or failures of their own, and the reason
an open breaker gives names the repeated failure's error line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from seawall.unattended.ledger import AttemptRow, Run, group_runs
from seawall.unattended.outcomes import ChainEffect, Outcome, chain_effect, is_blocked
from seawall.unattended.paths import format_ts

__all__ = [
    "BreakerState",
    "BreakerStatus",
    "RateLimitStatus",
    "breaker_reason",
    "consecutive_failures",
    "evaluate_breaker",
    "evaluate_rate_limit",
    "failure_chain",
]


class BreakerState(StrEnum):
    DISABLED = "disabled"  # the limit is 0
    CLOSED = "closed"
    OPEN = "open"  # refuses new work until the cooldown has run out
    HALF_OPEN = "half-open"  # the cooldown ran out: the next tick is one probe


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakerStatus:
    """The breaker as the ledger shows it at one moment."""

    state: BreakerState
    consecutive_failures: int
    limit: int
    opened_by: Run | None = None  # the newest failed run of the chain
    clock_ts: float | None = None  # the newest row that ran; the cooldown counts from it
    next_probe_at: float | None = None  # when an open breaker lets one probe through
    same_failure: str | None = None  # the signature every counted run failed with, if one
    distinct_failures: int = 0  # distinct signatures among the counted runs (unknown: 0)

    @property
    def allows_work(self) -> bool:
        """True when a tick may take an item (a half-open breaker allows one probe)."""
        return self.state is not BreakerState.OPEN


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimitStatus:
    """The rate-limit backoff: doubles per consecutive rate-limited run."""

    consecutive: int
    backoff_sec: float = 0.0
    wait_until: float | None = None

    def waiting(self, now: float) -> bool:
        return self.wait_until is not None and now < self.wait_until


def consecutive_failures(runs: Sequence[Run]) -> tuple[int, Run | None]:
    """Count failed runs from the newest back to the first run that ends the chain.

    Returns the count and the newest counted run (the one that last grew the chain).
    """
    chain = failure_chain(runs)
    return len(chain), chain[0] if chain else None


def failure_chain(runs: Sequence[Run]) -> list[Run]:
    """The failed runs of the current chain, newest first."""
    chain: list[Run] = []
    for run in reversed(runs):
        effect = chain_effect(run.outcome, run.publish_gate)
        if effect is ChainEffect.ENDS:
            break
        if effect is ChainEffect.COUNTS:
            chain.append(run)
    return chain


def _signatures(chain: Sequence[Run]) -> tuple[str | None, int]:
    """(the signature all of ``chain`` shares or None, how many distinct ones it has);
    a run without a signature makes the chain's sameness unknown (None, 0)."""
    found = [run.last_row.signature for run in chain]
    if not found or any(signature is None for signature in found):
        return None, 0
    distinct = set(found)
    return (found[0] if len(distinct) == 1 else None), len(distinct)


def evaluate_breaker(
    rows: Sequence[AttemptRow], *, now: float, limit: int, cooldown_sec: float
) -> BreakerStatus:
    """The breaker's state from the rows of the trailing window (oldest first)."""
    chain = failure_chain(group_runs(rows))
    count, newest_failure = len(chain), chain[0] if chain else None
    same, distinct = _signatures(chain)
    if limit <= 0 or count < limit:
        return BreakerStatus(
            state=BreakerState.DISABLED if limit <= 0 else BreakerState.CLOSED,
            consecutive_failures=count,
            limit=max(limit, 0),
            same_failure=same,
            distinct_failures=distinct,
        )
    clock = max((row.ts for row in rows if not is_blocked(row.outcome)), default=None)
    next_probe = (clock if clock is not None else now) + cooldown_sec
    return BreakerStatus(
        state=BreakerState.HALF_OPEN if now >= next_probe else BreakerState.OPEN,
        consecutive_failures=count,
        limit=limit,
        opened_by=newest_failure,
        clock_ts=clock,
        next_probe_at=next_probe,
        same_failure=same,
        distinct_failures=distinct,
    )


def evaluate_rate_limit(
    rows: Sequence[AttemptRow], *, base_sec: float, max_sec: float
) -> RateLimitStatus:
    """Consecutive rate-limited runs (newest first) and how long to wait after the last.

    ``blocked-*``, ``running`` and ``died`` runs are skipped; any other outcome ends
    the streak. The wait lasts until the reset the newest run's session named
    (``resume_after``); when it named none, ``base_sec * 2 ** (n - 1)``, at most
    ``max_sec``.
    """
    count = 0
    newest: Run | None = None
    for run in reversed(group_runs(rows)):
        if is_blocked(run.outcome) or run.outcome in (Outcome.RUNNING, Outcome.DIED):
            continue
        if run.outcome != Outcome.RATE_LIMITED:
            break
        count += 1
        newest = newest or run
    if newest is None:
        return RateLimitStatus(consecutive=0)
    reset = newest.last_row.resume_after
    if reset is not None:
        backoff = max(0.0, reset - newest.last_ts)
        return RateLimitStatus(consecutive=count, backoff_sec=backoff, wait_until=reset)
    backoff = min(base_sec * 2 ** (count - 1), max_sec)
    return RateLimitStatus(
        consecutive=count, backoff_sec=backoff, wait_until=newest.last_ts + backoff
    )


def breaker_reason(breaker: BreakerStatus, *, window_sec: float) -> str:
    """The ``blocked_reason`` and log text of an open breaker: cause and override."""
    run = breaker.opened_by
    cause = "an unknown outcome"
    if run is not None:
        row = run.last_row
        extra = ", ".join(
            part
            for part in (
                f"task {run.task}",
                f"publish gate {row.publish_gate}" if row.publish_gate else "",
                row.detail or "",
            )
            if part
        )
        cause = f"outcome {run.outcome!r} of item {run.item} ({extra})"
    probe = format_ts(breaker.next_probe_at) if breaker.next_probe_at is not None else "?"
    days = window_sec / 86_400
    return (
        f"breaker open: {breaker.consecutive_failures} consecutive failed attempts "
        f"(limit {breaker.limit}, window {days:g} days){_sameness(breaker)}; opened by {cause}; "
        f"no new work until one probe at {probe}. Override: `seawall runner resume` "
        f"lets the next tick run once; SEAWALL_RUNNER_BREAKER_LIMIT=0 disables the breaker"
    )


def _sameness(breaker: BreakerStatus) -> str:
    """ ", the same failure each time (signature …)" or ", N different failures"."""
    if breaker.same_failure is not None:
        return f", the same failure each time (signature {breaker.same_failure})"
    if breaker.distinct_failures:
        return f", {breaker.distinct_failures} different failures"
    return ""
