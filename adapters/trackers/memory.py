"""An in-memory issue tracker: a public, recording fake for users' own tests.

It records every call, keeps issues, comments and labels in memory, and injects
faults on request, including "apply the write, then fail" (a write whose answer was
lost), so callers can test their deduplication and retry logic without a network.
``MemoryClaimsTracker`` is the same for a host that holds claims (as GitHub and GitLab
do), on an injectable clock.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from seawall.errors import TrackerError
from seawall.model import TrackerConfig
from seawall.tracker import Capability, Issue, IssueTracker, TrackerUnavailableError

__all__ = ["Fault", "MemoryClaimsTracker", "MemoryTracker", "Operation", "TrackerCall"]

Operation = Literal[
    "list_issues",
    "create_issue",
    "comment",
    "ensure_labels",
    "close_issue",
    "take_claim",
    "release_claim",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TrackerCall:
    """One recorded call: the operation and its arguments."""

    operation: Operation
    args: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """An injected failure. With ``apply=True`` a write takes effect before ``error``."""

    error: TrackerError
    apply: bool = False


class MemoryTracker(IssueTracker):
    """Keeps issues in memory, records calls in ``calls``, and fails on request.

    Use ``fail(operation, ...)`` to queue faults; each queued fault is used by one call.
    """

    name = "memory"

    def __init__(self, *, url_prefix: str = "memory://issues/") -> None:
        self._url_prefix = url_prefix
        self._lock = threading.Lock()
        self._issues: dict[int, Issue] = {}
        self._comments: dict[int, list[str]] = {}
        self._labels: list[str] = []
        self._faults: dict[str, deque[Fault]] = {}
        self.calls: list[TrackerCall] = []

    @classmethod
    def from_config(cls, config: TrackerConfig, *, root: Path) -> MemoryTracker:
        """A fresh, empty tracker (settings carry nothing for it)."""
        return cls()

    # -- test helpers ---------------------------------------------------------------

    def fail(
        self,
        operation: Operation,
        error: TrackerError | None = None,
        *,
        apply: bool = False,
        times: int = 1,
    ) -> None:
        """Make the next ``times`` calls of ``operation`` fail with ``error``.

        The default error is a ``TrackerUnavailableError`` with status 502. With
        ``apply=True`` a write is applied before the error is raised.
        """
        fault = Fault(
            error=error
            or TrackerUnavailableError(
                "injected 502 Bad Gateway", tracker=self.name, operation=operation, status=502
            ),
            apply=apply,
        )
        with self._lock:
            self._faults.setdefault(operation, deque()).extend([fault] * times)

    def count(self, operation: Operation) -> int:
        """How many calls of ``operation`` were made (failed ones included)."""
        return sum(1 for call in self.calls if call.operation == operation)

    @property
    def issues(self) -> tuple[Issue, ...]:
        """Every issue, open and closed, by number."""
        with self._lock:
            return tuple(self._issues[number] for number in sorted(self._issues))

    @property
    def labels(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._labels)

    def comments(self, number: int) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._comments.get(number, ()))

    # -- the port -------------------------------------------------------------------

    def list_issues(self, label: str) -> list[Issue]:
        with self._lock:
            self._record("list_issues", label=label)
            self._raise_fault("list_issues")
            return [
                issue
                for issue in self._issues.values()
                if issue.state == "open" and label in issue.labels
            ]

    def create_issue(self, *, title: str, body: str, labels: Sequence[str]) -> Issue:
        with self._lock:
            self._record("create_issue", title=title, body=body, labels=tuple(labels))
            fault = self._take_fault("create_issue")
            if fault and not fault.apply:
                raise fault.error
            number = max(self._issues, default=0) + 1
            issue = Issue(
                number=number,
                title=title,
                body=body,
                labels=tuple(labels),
                url=f"{self._url_prefix}{number}",
            )
            self._issues[number] = issue
            if fault:
                raise fault.error
            return issue

    def comment(self, number: int, body: str) -> None:
        with self._lock:
            self._record("comment", number=number, body=body)
            fault = self._take_fault("comment")
            if fault and not fault.apply:
                raise fault.error
            if number not in self._issues:
                raise TrackerError(
                    f"issue #{number} does not exist", tracker=self.name, operation="comment"
                )
            self._comments.setdefault(number, []).append(body)
            if fault:
                raise fault.error

    def close_issue(self, number: int) -> None:
        with self._lock:
            self._record("close_issue", number=number)
            fault = self._take_fault("close_issue")
            if fault and not fault.apply:
                raise fault.error
            if number not in self._issues:
                raise TrackerError(
                    f"issue #{number} does not exist", tracker=self.name, operation="close issue"
                )
            self._issues[number] = replace(self._issues[number], state="closed")
            if fault:
                raise fault.error

    def ensure_labels(self, labels: Sequence[str]) -> None:
        with self._lock:
            self._record("ensure_labels", labels=tuple(labels))
            fault = self._take_fault("ensure_labels")
            if fault and not fault.apply:
                raise fault.error
            self._labels.extend(label for label in labels if label not in self._labels)
            if fault:
                raise fault.error

    # -- internals ------------------------------------------------------------------

    def _record(self, operation: Operation, **args: object) -> None:
        self.calls.append(TrackerCall(operation=operation, args=MappingProxyType(args)))

    def _take_fault(self, operation: str) -> Fault | None:
        queue = self._faults.get(operation)
        return queue.popleft() if queue else None

    def _raise_fault(self, operation: str) -> None:
        fault = self._take_fault(operation)
        if fault:
            raise fault.error

    def __repr__(self) -> str:
        return f"MemoryTracker(issues={len(self._issues)}, calls={len(self.calls)})"


class MemoryClaimsTracker(MemoryTracker):
    """A ``MemoryTracker`` whose host holds claims: ``take_claim`` and ``release_claim``
    (see ``seawall.carryover.filer.ClaimLeases``), recorded and faultable like the rest.

    ``clock`` dates the claims (wall time; pass a fake one to expire claims without
    waiting). ``claims`` shows what the host holds: key -> (holder, expiry).
    """

    capabilities = frozenset({Capability.ISSUES, Capability.CLAIMS})

    def __init__(
        self, *, url_prefix: str = "memory://issues/", clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__(url_prefix=url_prefix)
        self._clock = clock
        self._claims: dict[str, tuple[str, float]] = {}

    @property
    def claims(self) -> Mapping[str, tuple[str, float]]:
        with self._lock:
            return MappingProxyType(dict(self._claims))

    def claim(self, key: str) -> bool:
        return self.take_claim(key, holder="memory", ttl=90.0) <= 0

    def take_claim(self, key: str, *, holder: str, ttl: float) -> float:
        with self._lock:
            self._record("take_claim", key=key, holder=holder, ttl=ttl)
            fault = self._take_fault("take_claim")
            if fault and not fault.apply:
                raise fault.error
            held = self._claims.get(key)
            left = held[1] - self._clock() if held is not None else 0.0
            if held is not None and held[0] != holder and left > 0:
                taken = left
            else:
                self._claims[key] = (holder, self._clock() + ttl)
                taken = 0.0
            if fault:
                raise fault.error
            return taken

    def release_claim(self, key: str, *, holder: str) -> None:
        with self._lock:
            self._record("release_claim", key=key, holder=holder)
            fault = self._take_fault("release_claim")
            if fault and not fault.apply:
                raise fault.error
            held = self._claims.get(key)
            if held is not None and (held[0] == holder or held[1] <= self._clock()):
                del self._claims[key]
            if fault:
                raise fault.error
