"""Filing carryovers exactly once, under faults, slow writes and concurrent filers.

A ``CarryoverFiler`` lists the carryover label over all pages once per session and
keeps that index current as it creates issues. Creates are never retried blindly:

- after a create that failed or timed out (its answer lost: 5xx, timeout, dropped
  connection), the filer lists again with backoff over a bounded *settle window*, long
  enough for a create the host applies late and for listing lag, before any retry;
- concurrent filers of one fingerprint are serialised: by the repository's lock file
  (``lock_path``) for sessions on one machine, and by a claim the host itself holds
  (hosts with the ``claims`` capability) for sessions on different machines. A filer
  that finds the claim taken waits out the settle window for the claimant's issue.

``file`` never raises: every outcome is a ``CarryoverResult``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from seawall.carryover.model import Carryover, CarryoverResult, find_marker
from seawall.carryover.render import render_body, render_seen_again, render_title
from seawall.errors import ConfigurationError, TrackerError
from seawall.runtime.files import file_lock
from seawall.telemetry import CarryoverFiled, EventLog
from seawall.tracker import (
    Capability,
    Issue,
    IssueTracker,
    TrackerRateLimitError,
    TrackerUnavailableError,
)

__all__ = ["CarryoverFiler", "RetryPolicy", "file_carryover", "is_transient", "retrying"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Bounded retries with exponential backoff for transient tracker faults.

    ``attempts`` counts every try of one operation. A rate limit whose ``Retry-After``
    exceeds ``max_delay`` is not waited for: it becomes an error result at once, so a
    session never blocks on a tracker. ``settle`` is the window, in seconds of backoff,
    over which a failed create's fingerprint is looked for again before a retry (or a
    taken claim's issue is waited for); 0 lists again once. ``sleep`` is injectable, and
    the window is counted in the waits it asked for, so it is bounded with any clock.
    """

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    settle: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1 or min(self.base_delay, self.max_delay, self.settle) < 0:
            raise ConfigurationError("retry attempts must be >= 1 and delays >= 0")

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


def _maybe_applied(error: TrackerError) -> bool:
    """A lost answer (5xx, timeout, dropped connection) may hide an applied write."""
    return is_transient(error) and not isinstance(error, TrackerRateLimitError)


class CarryoverFiler:
    """Files carryovers for one session against one tracker; ``file`` never raises.

    Comments at most once per session on each duplicate. Thread-safe: filings are
    serialised in the process, and across processes on one machine when ``lock_path``
    names the repository's carryover lock file.
    """

    def __init__(
        self,
        tracker: IssueTracker,
        *,
        session: str,
        label: str = "carryover",
        retry: RetryPolicy | None = None,
        events: EventLog | None = None,
        lock_path: Path | None = None,
    ) -> None:
        self.tracker = tracker
        self.session = session
        self.label = label
        self.retry = retry or RetryPolicy()
        self.events = events
        self.lock_path = lock_path
        self._lock = threading.RLock()  # re-entered by closing under serialised()
        self._index: dict[str, Issue] | None = None
        self._labels_ready: set[str] = set()
        self._noted: set[int] = set()

    def known(self) -> Mapping[str, Issue]:
        """The open carryover issues by fingerprint (lists them on first use; may raise)."""
        with self._lock:
            return dict(self._issues())

    def index(self) -> Mapping[str, Issue]:
        """The open carryover issues by fingerprint; call it inside ``serialised()``."""
        return self._issues()

    def drop(self, issue: Issue) -> None:
        """Forget ``issue`` (it was closed); call it inside ``serialised()``."""
        if self._index is not None:
            self._index = {fp: i for fp, i in self._index.items() if i.number != issue.number}

    def forget(self) -> None:
        """Drop the cached index, so the next filing lists the label again."""
        with self._lock:
            self._index = None

    @contextlib.contextmanager
    def serialised(self) -> Iterator[None]:
        """Hold this filer's lock and the repository's lock file (when it has one)."""
        with self._lock, contextlib.ExitStack() as stack:
            if self.lock_path is not None:
                stack.enter_context(file_lock(self.lock_path, what="carryover filing"))
            yield

    def file(self, carryover: Carryover) -> CarryoverResult:
        """File ``carryover`` unless its fingerprint is already open; never raises."""
        fp = carryover.fingerprint
        try:
            with self.serialised():
                if self.lock_path is not None:
                    self._index = None  # another process may have filed meanwhile
                result = self._file(carryover, fp)
        except TrackerError as exc:
            result = CarryoverResult(created=False, skipped="error", error=str(exc), fingerprint=fp)
        except Exception as exc:  # noqa: BLE001 - the contract: filing never raises
            result = CarryoverResult(
                created=False,
                skipped="error",
                error=f"{self.tracker.name}: file carryover failed: "
                f"unexpected {type(exc).__name__}: {exc}",
                fingerprint=fp,
            )
        self._emit(carryover, result)
        return result

    def _file(self, carryover: Carryover, fp: str) -> CarryoverResult:
        existing = self._issues().get(fp)
        if existing is not None:
            return self._duplicate(existing, carryover, fp)
        if not self._claim(fp):
            # another filer holds the claim: wait for its issue rather than race it
            found = self._settle(fp, self.retry.base_delay, None)
            if found is not None:
                return self._duplicate(found, carryover, fp)
            # the claimant never filed within the window (it died): file it ourselves
        labels = carryover.labels(self.label)
        missing = [label for label in labels if label not in self._labels_ready]
        if missing:
            self.retrying(lambda: self.tracker.ensure_labels(missing))
            self._labels_ready.update(missing)
        issue = self._create(carryover, fp, labels)
        self._issues()[fp] = issue
        self._noted.add(issue.number)  # no "seen again" note on our own issue
        return CarryoverResult(created=True, number=issue.number, url=issue.url, fingerprint=fp)

    def _claim(self, fp: str) -> bool:
        if Capability.CLAIMS not in self.tracker.capabilities:
            return True
        return self.retrying(lambda: self.tracker.claim(fp))

    def _duplicate(self, issue: Issue, carryover: Carryover, fp: str) -> CarryoverResult:
        error = None
        if issue.number not in self._noted:
            self._noted.add(issue.number)  # at most once, even when the comment fails
            try:
                self.tracker.comment(issue.number, render_seen_again(carryover))
            except TrackerError as exc:
                error = f"noting the duplicate failed: {exc}"
        return CarryoverResult(
            created=False,
            number=issue.number,
            url=issue.url,
            skipped="duplicate",
            error=error,
            fingerprint=fp,
        )

    def _create(self, carryover: Carryover, fp: str, labels: Sequence[str]) -> Issue:
        title, body = render_title(carryover), render_body(carryover)
        attempt = 0
        while True:
            try:
                return self.tracker.create_issue(title=title, body=body, labels=labels)
            except TrackerError as exc:
                delay = self.retry.delay(exc, attempt)
                if not _maybe_applied(exc):
                    if delay is None:
                        raise
                    self.retry.sleep(delay)
                else:
                    first = delay if delay is not None else self.retry.base_delay
                    found = self._settle(fp, first, exc)
                    if found is not None:
                        return found  # the write was applied; its answer was lost
                    if delay is None:
                        raise
            attempt += 1

    def _settle(self, fp: str, first: float, create_error: TrackerError | None) -> Issue | None:
        """List again with backoff over the settle window until ``fp`` shows up."""
        for wait in self.retry.waits(first):
            self.retry.sleep(wait)
            try:
                self._index = self._list()
            except TrackerError as exc:
                if create_error is None:
                    raise
                raise TrackerError(
                    f"{create_error}; listing again to look for a lost write failed too: {exc}",
                    tracker=self.tracker.name,
                    operation="create issue",
                    status=create_error.status,
                ) from exc
            found = self._index.get(fp)
            if found is not None:
                return found
        return None

    def _issues(self) -> dict[str, Issue]:
        if self._index is None:
            self._index = self._list()
        return self._index

    def _list(self) -> dict[str, Issue]:
        index: dict[str, Issue] = {}
        listed = self.retrying(lambda: self.tracker.list_issues(self.label))
        for issue in sorted(listed, key=_num):
            fp = find_marker(issue.body)
            if fp is not None:
                index.setdefault(fp, issue)  # the oldest issue wins
        return index

    def retrying(self, operation: Callable[[], _T]) -> _T:
        """Run a read or an idempotent write with bounded retries of transient faults."""
        return retrying(self.retry, operation)

    def _emit(self, carryover: Carryover, result: CarryoverResult) -> None:
        if self.events is None:
            return
        outcome = "created" if result.created else result.skipped
        self.events.append(
            CarryoverFiled(
                task=carryover.task_id,
                kind=carryover.kind.value,
                wave=carryover.wave,
                fingerprint=result.fingerprint,
                outcome=outcome,
                number=result.number,
                url=result.url,
                tracker=self.tracker.name,
                error=result.error,
            )
        )


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


def _num(issue: Issue) -> int:
    return issue.number


def file_carryover(target: IssueTracker | CarryoverFiler, carryover: Carryover) -> CarryoverResult:
    """File one carryover; never raises.

    Pass the session's ``CarryoverFiler`` so the label is listed once per session; a bare
    tracker gets a one-shot filer (one list pass for this call).
    """
    if isinstance(target, CarryoverFiler):
        return target.file(carryover)
    return CarryoverFiler(target, session=carryover.session).file(carryover)
