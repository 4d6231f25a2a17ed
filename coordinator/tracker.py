"""The ``IssueTracker`` port: what a session needs from a host of issues and branches.

Issues (list by label over all pages, create, comment, close) are every adapter's duty.
A host may declare more ``capabilities``: ``claims`` (a claim the host itself holds, so
sessions on different machines filing the same carryover are serialised) and
``pull-requests`` (find and open a pull/merge request for a pushed branch).

Adapters live in ``adapters/trackers`` (local files, in-memory, GitHub, GitLab) or in
third-party packages registered under the ``seawall.trackers`` entry-point group. The
conformance kit in ``seawall.testing.trackers`` checks an adapter against this port.

The port is synchronous: both SDKs are, and a local tracker is file I/O. An async
caller runs ``file_carryover`` in a worker thread (``anyio.to_thread.run_sync``).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

from seawall.config.adapter_options import OptionTypes, check_options
from seawall.errors import ConfigurationError, TrackerError
from seawall.model import OptionValue, TrackerConfig

__all__ = [
    "Capability",
    "Issue",
    "IssueTracker",
    "PullRequest",
    "TrackerRateLimitError",
    "TrackerUnavailableError",
    "open_tracker",
    "tracker_options",
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


@dataclass(frozen=True, slots=True, kw_only=True)
class PullRequest:
    """A pull request (GitHub) or merge request (GitLab) as the host reports it."""

    number: int
    url: str
    head: str
    base: str
    title: str = ""
    state: str = "open"


class Capability(StrEnum):
    """What a host offers beyond issues."""

    ISSUES = "issues"  # list by label, create, comment, close: every adapter
    CLAIMS = "claims"  # claim(key): a claim the host holds, seen by every machine
    PULL_REQUESTS = "pull-requests"  # find_pull_request / open_pull_request


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
      calling it again is harmless (and sends no second create).
    - ``close_issue(number)``: close an issue; closing a closed issue is harmless, a
      missing issue is a ``TrackerError``. A closed issue is no longer listed.
    - ``close()``: release connections. The tracker is also a context manager.

    Every failure is raised as ``TrackerError`` (or its subclasses
    ``TrackerUnavailableError`` for transient faults and ``TrackerRateLimitError`` for
    rate limits) naming the tracker and the operation; SDK exception types never
    escape. A 5xx answer, a timeout and a dropped connection are
    ``TrackerUnavailableError``; a 401 or 404 is a plain ``TrackerError``. Tokens never
    appear in messages, reprs or files.

    Optional duties, declared in ``capabilities``:

    - ``claims``: claims held by the host for one filing attempt at a time, each valid
      for a lease: ``take_claim(key, holder=, ttl=)`` and ``release_claim(key,
      holder=)``, as ``seawall.carryover.filer.ClaimLeases`` states them (the filer
      releases a claim once its issue exists, so a fingerprint filed again after its
      issue was closed is claimed again). A tracker offering only the older
      ``claim(key)`` (taken once, never released) is still served through it.
    - ``pull-requests``: ``find_pull_request(head=, base=)`` returns the open request
      from branch ``head`` into ``base`` (or None); ``open_pull_request(...)`` opens one
      (one write, no retry, like a create).
    """

    #: The tracker's name in messages and errors ("github", "local", ...).
    name: str = "tracker"
    #: What this host offers; ``issues`` always.
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.ISSUES})

    @abc.abstractmethod
    def list_issues(self, label: str) -> list[Issue]:
        """Return every open issue carrying ``label``, reading all pages."""

    def issues_changed_since(self, label: str, since: datetime) -> list[Issue] | None:
        """Every issue carrying ``label``, open or closed, updated at or after ``since``
        (UTC), reading all pages; None when the host cannot ask by time.

        Optional: the carryover filer checks for a duplicate once more after it takes a
        claim, and a host that answers this in one small request spares it listing every
        open issue again (GitHub's ``since``, GitLab's ``updated_after``). The default
        says "cannot", and the filer lists everything."""
        return None

    @abc.abstractmethod
    def create_issue(self, *, title: str, body: str, labels: Sequence[str]) -> Issue:
        """Create one open issue with these labels and return it (one write, no retry)."""

    @abc.abstractmethod
    def comment(self, number: int, body: str) -> None:
        """Add a comment to issue ``number``; a missing issue raises ``TrackerError``."""

    @abc.abstractmethod
    def ensure_labels(self, labels: Sequence[str]) -> None:
        """Create those of ``labels`` that do not exist yet; existing ones are left alone."""

    @abc.abstractmethod
    def close_issue(self, number: int) -> None:
        """Close issue ``number`` (harmless when closed); a missing issue is an error."""

    def claim(self, key: str) -> bool:
        """Take the claim ``key`` on the host; False when another caller holds it.

        Only hosts with the ``claims`` capability hold claims; the default takes every
        claim (sessions on one machine are serialised by the repository's lock).
        """
        return True

    def find_pull_request(self, *, head: str, base: str) -> PullRequest | None:
        """The open pull request from ``head`` into ``base``, if there is one."""
        raise self._unsupported("find pull request")

    def open_pull_request(self, *, head: str, base: str, title: str, body: str) -> PullRequest:
        """Open a pull request from ``head`` into ``base`` (one write, never retried)."""
        raise self._unsupported("open pull request")

    def _unsupported(self, operation: str) -> TrackerError:
        return TrackerError(
            f"{type(self).__name__} does not offer pull requests "
            f"(capabilities: {', '.join(sorted(self.capabilities))})",
            tracker=self.name,
            operation=operation,
        )

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
    """Resolve ``config.kind`` by name (built-ins and entry points) and build the tracker.

    A failure to load or build it is a ``ConfigurationError`` naming the entry point and
    its package; nothing else escapes from a third party's constructor.
    """
    from seawall.registry import TRACKER_GROUP, build

    tracker = build(TRACKER_GROUP, config.kind, lambda cls: cls.from_config(config, root=root))
    assert isinstance(tracker, IssueTracker)  # build checked the class
    return tracker


def tracker_options(config: TrackerConfig, known: OptionTypes) -> dict[str, OptionValue]:
    """The ``[session.tracker.options]`` an adapter accepts, checked against ``known``.

    ``known`` maps each option to its type(s) (an int is accepted where a float is). An
    unknown key or a wrong type is a ``ConfigurationError`` naming the field
    ``session.tracker.options.KEY``, with the nearest known key suggested.
    """
    return check_options(
        config.options, known, field="session.tracker.options", owner=f"the {config.kind} tracker"
    )
