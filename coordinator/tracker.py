"""The ``IssueTracker`` port: where carryover issues are listed, created and commented.

Adapters live in ``adapters/trackers`` (local files, in-memory, GitHub, GitLab) or in
third-party packages registered under the ``seawall.trackers`` entry-point group. The
conformance kit in ``coordinator.testing.trackers`` checks an adapter against this port.

The port is synchronous: both SDKs are, and a local tracker is file I/O. An async
caller runs ``file_carryover`` in a worker thread (``anyio.to_thread.run_sync``).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from coordinator.errors import ConfigurationError, TrackerError
from coordinator.model import TrackerConfig

__all__ = [
    "Issue",
    "IssueTracker",
    "TrackerRateLimitError",
    "TrackerUnavailableError",
    "open_tracker",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Issue:
    """One issue as a tracker reports it. ``state`` is ``"open"`` or ``"closed"``."""

    number: int
    title: str
    body: str
    labels: tuple[str, ...]
    url: str
    state: str = "open"


class TrackerUnavailableError(TrackerError):
    """A transient failure: a 5xx answer, a timeout or a dropped connection.

    A retry may succeed. For a write, the change may have been applied even though the
    answer was lost, so a write is never retried without first reading the state again.
    """


class TrackerRateLimitError(TrackerError):
    """The tracker refused the request for a rate limit (403 with limit headers, or 429).

    ``retry_after`` is the wait in seconds the tracker asked for, when it said one. The
    request was not applied.
    """

    retry_after: float | None

    def __init__(
        self,
        message: str,
        *,
        tracker: str,
        operation: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, tracker=tracker, operation=operation, status=status)
        self.retry_after = retry_after


class IssueTracker(abc.ABC):
    """Where carryover issues go.

    Duties of an adapter:

    - ``list_issues(label)``: every *open* issue carrying ``label``, over all pages, in
      any order. Bodies are returned verbatim: the carryover marker is matched in them.
    - ``create_issue(title=, body=, labels=)``: create one open issue and return it. Never
      retry the write blindly (a retried POST makes duplicates); the caller decides.
    - ``comment(number, body)``: add a comment to an existing issue; a missing issue is a
      ``TrackerError``.
    - ``ensure_labels(labels)``: make sure each label exists, creating the missing ones;
      calling it again is harmless.
    - ``close()``: release connections. The tracker is also a context manager.

    Every failure is raised as ``TrackerError`` (or its subclasses
    ``TrackerUnavailableError`` for transient faults and ``TrackerRateLimitError`` for
    rate limits) naming the tracker and the operation; SDK exception types never
    escape. Tokens never appear in messages, reprs or files.
    """

    #: The tracker's name in messages and errors ("github", "local", ...).
    name: str = "tracker"

    @abc.abstractmethod
    def list_issues(self, label: str) -> list[Issue]:
        """Return every open issue carrying ``label``, reading all pages."""

    @abc.abstractmethod
    def create_issue(self, *, title: str, body: str, labels: Sequence[str]) -> Issue:
        """Create one open issue with these labels and return it (one write, no retry)."""

    @abc.abstractmethod
    def comment(self, number: int, body: str) -> None:
        """Add a comment to issue ``number``; a missing issue raises ``TrackerError``."""

    @abc.abstractmethod
    def ensure_labels(self, labels: Sequence[str]) -> None:
        """Create those of ``labels`` that do not exist yet; existing ones are left alone."""

    def close(self) -> None:
        """Release connections and files. The default holds none."""
        return None

    @classmethod
    def from_config(cls, config: TrackerConfig, *, root: Path) -> IssueTracker:
        """Build the tracker from settings, for the CLI and plan files.

        ``root`` is the repository root. Adapters that can be configured by settings
        override this; the default refuses with a clear message.
        """
        raise ConfigurationError(
            f"tracker {cls.__name__} cannot be built from settings; pass an instance"
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_tracker(config: TrackerConfig, *, root: Path) -> IssueTracker:
    """Resolve ``config.kind`` by name (built-ins and entry points) and build the tracker."""
    from coordinator.registry import TRACKER_GROUP, resolve

    target = resolve(TRACKER_GROUP, config.kind)
    if not (isinstance(target, type) and issubclass(target, IssueTracker)):
        raise ConfigurationError(
            f"tracker {config.kind!r} does not resolve to an IssueTracker class: {target!r}"
        )
    return target.from_config(config, root=root)
