"""Bounded retries of transient tracker faults: the policy, and reads retried by it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from seawall.errors import ConfigurationError, TrackerError
from seawall.tracker import TrackerRateLimitError, TrackerUnavailableError

__all__ = ["RetryPolicy", "is_transient", "retrying"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Bounded retries with exponential backoff for transient tracker faults.

    ``attempts`` counts every try of one operation. A rate limit whose ``Retry-After``
    exceeds ``max_delay`` is not waited for: it becomes an error result at once, so a
    session never blocks on a tracker. ``settle`` is the window, in seconds of backoff,
    over which a failed create's fingerprint is looked for again before a retry; 0
    lists again once. ``claim_ttl`` is how long a claim on the host stays valid (by
    default ``2 * settle + 30``: a create, its settle window and a margin fit in half of
    it); a filer waits at most ``attempts`` leases for another session's claim.
    ``sleep`` and ``clock`` (monotonic) are injectable; windows and waits are counted in
    the waits asked for, so they are bounded with any clock.
    """

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    settle: float = 30.0
    claim_ttl: float | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1 or min(self.base_delay, self.max_delay, self.settle) < 0:
            raise ConfigurationError("retry attempts must be >= 1 and delays >= 0")
        if self.claim_ttl is not None and self.claim_ttl <= 2 * self.settle:
            raise ConfigurationError(
                f"claim_ttl ({self.claim_ttl:g}s) must exceed twice the settle window "
                f"({self.settle:g}s): a holder's create and its settle window fit in half"
            )

    @property
    def lease(self) -> float:
        """Seconds a claim on the host stays valid."""
        return self.claim_ttl if self.claim_ttl is not None else 2 * self.settle + 30.0

    def delay(self, error: TrackerError, attempt: int) -> float | None:
        """Seconds to wait before try ``attempt + 1``, or None when not to retry."""
        if attempt + 1 >= self.attempts:
            return None
        if isinstance(error, TrackerRateLimitError):
            if error.retry_after is not None:
                return error.retry_after if error.retry_after <= self.max_delay else None
        elif not is_transient(error):
            return None
        return min(self.max_delay, self.base_delay * 2.0**attempt)

    def waits(self, first: float) -> Iterator[float]:
        """The waits of one settle window: ``first``, then doubling, summing to ``settle``."""
        waited, wait = 0.0, first
        while True:
            yield wait
            waited += wait
            if waited >= self.settle:
                return
            wait = min(self.max_delay, max(wait, 0.05) * 2.0, self.settle - waited)


def is_transient(error: TrackerError) -> bool:
    """A fault a later try may not meet: 5xx, timeout, dropped connection, rate limit."""
    if isinstance(error, TrackerUnavailableError | TrackerRateLimitError):
        return True
    return error.status is not None and (error.status >= 500 or error.status == 429)


def retrying(policy: RetryPolicy, operation: Callable[[], _T]) -> _T:
    """Run a read or an idempotent write, retrying transient faults as ``policy`` says."""
    attempt = 0
    while True:
        try:
            return operation()
        except TrackerError as exc:
            delay = policy.delay(exc, attempt)
            if delay is None:
                raise
            policy.sleep(delay)
        attempt += 1
