"""Filing carryovers exactly once, under faults, slow writes and concurrent filers.

A ``CarryoverFiler`` lists the carryover label over all pages and keeps that index
current as it creates issues. Creates are never retried blindly:

- after a create that failed or timed out (its answer lost: 5xx, timeout, dropped
  connection), the filer lists again with backoff over a bounded *settle window*, long
  enough for a create the host applies late and for listing lag, before any retry;
- concurrent filers of one fingerprint are serialised: by the repository's lock file
  (``lock_path``) for sessions on one machine, and by a claim the host holds (hosts
  with the ``claims`` capability) for sessions anywhere. A claim belongs to one filing
  attempt and is valid for a lease. Its holder lists again (nobody can file the
  fingerprint meanwhile), creates only while the lease is good, and releases the claim
  once the issue exists; another filer waits while the claim is valid, not longer.

``file`` never raises: every outcome is a ``CarryoverResult``.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from seawall.carryover.model import Carryover, CarryoverResult, find_marker
from seawall.carryover.render import render_body, render_seen_again, render_title
from seawall.carryover.retry import RetryPolicy, is_transient, retrying
from seawall.errors import TrackerError
from seawall.runtime.files import file_lock
from seawall.telemetry import CarryoverFiled, EventLog
from seawall.tracker import (
    Capability,
    Issue,
    IssueTracker,
    TrackerRateLimitError,
)

__all__ = [
    "CarryoverFiler",
    "ClaimLeases",
    "RetryPolicy",
    "file_carryover",
    "is_transient",
    "retrying",
]

_T = TypeVar("_T")


def _maybe_applied(error: TrackerError) -> bool:
    """A lost answer (5xx, timeout, dropped connection) may hide an applied write."""
    return is_transient(error) and not isinstance(error, TrackerRateLimitError)


@runtime_checkable
class ClaimLeases(Protocol):
    """What a host with the ``claims`` capability offers a filer: claims held for one
    filing attempt at a time, each valid for a lease.

    - ``take_claim(key, holder=, ttl=)``: in one atomic step on the host, make
      ``holder`` (a token of one filing attempt) the holder of the claim ``key`` for
      ``ttl`` seconds from now, unless another holder's claim on ``key`` is still
      valid. Returns 0.0 when ``holder`` holds it now (asking again renews it; an
      expired claim is taken over), else the seconds the other claim stays valid. Safe
      to ask again after a lost answer.
    - ``release_claim(key, holder=)``: remove ``holder``'s claim on ``key``, and any
      expired one it took over; called once by the holder, through the client that
      took the claim, while the claim is valid. Nothing of it is left on the host.

    Every failure is a ``TrackerError``, as for the port's other duties.
    """

    def take_claim(self, key: str, *, holder: str, ttl: float) -> float: ...

    def release_claim(self, key: str, *, holder: str) -> None: ...


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
        self._listed_at: datetime | None = None  # when the index was last read (UTC)
        self._stale = False  # another process may have filed since the index was read
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
                    self._stale = True  # another process may have filed meanwhile
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
        host = self._claims_host()
        if host is None:
            return self._file_unclaimed(carryover, fp)
        lease = _Lease(host, fp, self.retry, tracker=self.tracker.name)
        lease.take()
        try:
            # read again once the claim is ours: nobody else files ``fp`` until it ends
            existing = self._refreshed().get(fp)
            if existing is not None:
                result = self._duplicate(existing, carryover, fp)
            else:
                result = self._created(carryover, fp, before_each=lease.keep)
        finally:
            released = lease.release()
        return result if released is None else _with_error(result, released)

    def _file_unclaimed(self, carryover: Carryover, fp: str) -> CarryoverResult:
        """Hosts without leased claims: the index decides, and a bare ``claim`` (when
        the host offers one) serialises first filings across machines."""
        if Capability.CLAIMS in self.tracker.capabilities and not self.retrying(
            lambda: self.tracker.claim(fp)
        ):
            # another filer holds the claim: wait for its issue rather than race it
            found = self._settle(fp, self.retry.base_delay, None)
            if found is not None:
                return self._duplicate(found, carryover, fp)
            # the claimant never filed within the window (it died): file it ourselves
        return self._created(carryover, fp, before_each=lambda: None)

    def _created(
        self, carryover: Carryover, fp: str, *, before_each: Callable[[], None]
    ) -> CarryoverResult:
        labels = carryover.labels(self.label)
        missing = [label for label in labels if label not in self._labels_ready]
        if missing:
            self.retrying(lambda: self.tracker.ensure_labels(missing))
            self._labels_ready.update(missing)
        issue = self._create(carryover, fp, labels, before_each)
        self._issues()[fp] = issue
        self._noted.add(issue.number)  # no "seen again" note on our own issue
        return CarryoverResult(created=True, number=issue.number, url=issue.url, fingerprint=fp)

    def _claims_host(self) -> ClaimLeases | None:
        tracker = self.tracker
        if Capability.CLAIMS in tracker.capabilities and isinstance(tracker, ClaimLeases):
            return tracker
        return None

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

    def _create(
        self,
        carryover: Carryover,
        fp: str,
        labels: Sequence[str],
        before_each: Callable[[], None],
    ) -> Issue:
        title, body = render_title(carryover), render_body(carryover)
        attempt = 0
        while True:
            before_each()  # a claim's holder makes sure its lease covers this attempt
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
                index = self._refreshed()
            except TrackerError as exc:
                if create_error is None:
                    raise
                raise TrackerError(
                    f"{create_error}; listing again to look for a lost write failed too: {exc}",
                    tracker=self.tracker.name,
                    operation="create issue",
                    status=create_error.status,
                ) from exc
            found = index.get(fp)
            if found is not None:
                return found
        return None

    def _issues(self) -> dict[str, Issue]:
        if self._index is None:
            self._index = self._list()
        elif self._stale:
            self._refreshed()
        return self._index

    def _refreshed(self) -> dict[str, Issue]:
        """The index brought up to date with what changed on the host since it was read:
        one small request where the host can ask by time (``issues_changed_since``), a
        full listing else. The time asked from is half a lease before the last read, so
        clocks that agree within half a lease (as claims need) miss nothing."""
        self._stale = False
        index, listed_at = self._index, self._listed_at
        if index is None or listed_at is None:
            self._index = self._list()
            return self._index
        asked = datetime.now(UTC)
        since = listed_at - timedelta(seconds=self.retry.lease / 2)
        changed = self.retrying(lambda: self.tracker.issues_changed_since(self.label, since))
        if changed is None:
            self._index = self._list()
            return self._index
        for issue in sorted(changed, key=_num):
            fp = find_marker(issue.body)
            if fp is None:
                continue
            held = index.get(fp)
            if issue.state == "open" and (held is None or held.number >= issue.number):
                index[fp] = issue  # new, or the same one again: the oldest issue wins
            elif issue.state != "open" and held is not None and held.number == issue.number:
                del index[fp]  # closed since
        self._listed_at = asked
        return index

    def _list(self) -> dict[str, Issue]:
        index: dict[str, Issue] = {}
        self._listed_at = datetime.now(UTC)
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


class _Lease:
    """One filing attempt's claim on a fingerprint, held on the host for ``policy.lease``
    under a holder token of its own.

    ``until`` is when the claim ends on this filer's monotonic clock, measured from
    before the request that took it, so it never outlives the claim the host holds.
    """

    def __init__(self, host: ClaimLeases, key: str, policy: RetryPolicy, *, tracker: str):
        self.host, self.key, self.policy, self.tracker = host, key, policy, tracker
        self.holder = uuid.uuid4().hex
        self.until: float | None = None

    def take(self) -> None:
        """Hold the claim. While another holder's is valid, ask again with backoff, each
        wait no longer than that claim has left; at most ``attempts`` leases in all."""
        bound = self.policy.lease * self.policy.attempts
        waited, backoff = 0.0, max(self.policy.base_delay, 0.01)
        while (left := self._ask()) > 0:
            if waited >= bound:
                raise TrackerError(
                    f"another session has held the claim on {self.key} for {waited:.0f}s; "
                    "not filed here (that session files it)",
                    tracker=self.tracker,
                    operation="claim",
                )
            pause = min(backoff, left, bound - waited)
            self.policy.sleep(pause)
            waited += max(pause, 0.01)
            backoff = min(self.policy.max_delay, backoff * 2)

    def keep(self) -> None:
        """Before a create: renew the claim when less than half its lease is left.
        Losing it (it expired and another session took it) ends this filing."""
        if self.until is not None and self.until - self.policy.clock() >= self.policy.lease / 2:
            return
        if self._ask() > 0:
            self.until = None
            raise TrackerError(
                f"the claim on {self.key} expired and another session took it; "
                "not filed here (that session files it)",
                tracker=self.tracker,
                operation="claim",
            )

    def release(self) -> str | None:
        """Release the claim while it is valid (an expired one may be another's by now);
        None, or why releasing failed (the claim then expires on its own)."""
        valid = self.until is not None and self.policy.clock() < self.until
        self.until = None
        if not valid:
            return None
        try:
            self.host.release_claim(self.key, holder=self.holder)  # once: see ClaimLeases
        except TrackerError as exc:
            return f"releasing the claim failed: {exc}"
        return None

    def _ask(self) -> float:
        started = self.policy.clock()
        left = retrying(
            self.policy,
            lambda: self.host.take_claim(self.key, holder=self.holder, ttl=self.policy.lease),
        )
        if left <= 0:
            self.until = started + self.policy.lease
        return left


def _with_error(result: CarryoverResult, error: str) -> CarryoverResult:
    return replace(result, error=f"{result.error}; {error}" if result.error else error)


def _num(issue: Issue) -> int:
    return issue.number


def file_carryover(target: IssueTracker | CarryoverFiler, carryover: Carryover) -> CarryoverResult:
    """File one carryover; never raises.

    Pass the session's ``CarryoverFiler`` so duplicates are answered from its index; a
    bare tracker gets a one-shot filer for this call.
    """
    if isinstance(target, CarryoverFiler):
        return target.file(carryover)
    return CarryoverFiler(target, session=carryover.session).file(carryover)
