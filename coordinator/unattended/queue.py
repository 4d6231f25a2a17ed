"""``queue.json``: the items the runner works through, and why it is blocked.

Items are plan files (``seawall runner enqueue PLAN``) or tracker issues with a label,
brought in by intake through an injected lister, so intake is testable without a
tracker. What happened to an item is never stored here: the ledger says it. The queue
holds only the items, ``blocked_reason`` (shown by ``seawall runner status``) and the
one-shot ``override`` that ``seawall runner resume`` grants.

Every change is a read-modify-write under ``queue.lock`` with an atomic replace, so an
``enqueue`` during a long tick is safe.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from seawall.codec import decode, encode_text
from seawall.errors import ConfigurationError, StateError
from seawall.runtime.files import atomic_write_text, file_lock
from seawall.unattended.ledger import ItemHistory
from seawall.unattended.outcomes import is_finished, is_parked

__all__ = [
    "QUEUE_SCHEMA",
    "IntakeIssue",
    "IssueLister",
    "ItemSource",
    "Queue",
    "QueueFile",
    "QueueItem",
    "issue_plan_text",
    "next_item",
    "tracker_lister",
]

QUEUE_SCHEMA = 1


class ItemSource(StrEnum):
    PLAN = "plan"  # a plan file someone enqueued
    ISSUE = "issue"  # a tracker issue brought in by intake


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueItem:
    """One unit of work: one session over one plan file."""

    id: str
    plan: str  # absolute path of the plan file the session runs
    source: ItemSource = ItemSource.PLAN
    issue: str | None = None  # the tracker issue id, for intake items
    title: str = ""
    enqueued_at: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Queue:
    """The content of ``queue.json``."""

    items: tuple[QueueItem, ...] = ()
    blocked_reason: str | None = None
    override: bool = False  # one tick may run although the breaker is open
    next_seq: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class IntakeIssue:
    """An issue a lister found under the intake label."""

    id: str
    title: str
    body: str = ""
    labels: tuple[str, ...] = field(default=())


IssueLister = Callable[[], Iterable[IntakeIssue]]


class QueueFile:
    """Loads and changes ``queue.json`` under its lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name("queue.lock")

    def load(self) -> Queue:
        """The queue; an absent file is an empty queue, a corrupt one a ``StateError``."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Queue()
        try:
            written = decode(text, _QueueFile)
            if written.schema != QUEUE_SCHEMA:
                raise ValueError(f"unknown schema {written.schema!r}, expected {QUEUE_SCHEMA}")
        except ValueError as exc:  # msgspec's DecodeError and ValidationError too
            raise StateError(
                f"{self.path} is not a valid runner queue ({exc}); fix or remove it"
            ) from exc
        return written.queue()

    def update(self, change: Callable[[Queue], Queue]) -> Queue:
        """Apply ``change`` to the current queue under the lock and write the result."""
        with file_lock(self.lock_path, what="the runner queue"):
            queue = change(self.load())
            atomic_write_text(self.path, encode_text(_QueueFile.of(queue)) + "\n")
            return queue

    def enqueue_plan(self, plan: Path, *, now: float) -> QueueItem:
        """Add a plan file; it must exist and be TOML. The id is ``<stem>-<seq>``."""
        resolved = plan.expanduser().resolve()
        try:
            tomllib.loads(resolved.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigurationError(f"{plan}: no such plan file") from exc
        except (IsADirectoryError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"{plan}: not a TOML plan file: {exc}") from exc
        added: list[QueueItem] = []

        def change(queue: Queue) -> Queue:
            item = QueueItem(
                id=f"{_slug(resolved.stem)}-{queue.next_seq}",
                plan=str(resolved),
                title=resolved.name,
                enqueued_at=now,
            )
            added.append(item)
            return replace(queue, items=(*queue.items, item), next_seq=queue.next_seq + 1)

        self.update(change)
        return added[0]

    def resume(self) -> Queue:
        """Clear ``blocked_reason`` and grant a one-shot override: the next tick runs.

        The override is consumed by the next tick that takes an item; if that run fails
        the breaker opens again at once (no silent bypass).
        """
        return self.update(lambda q: replace(q, blocked_reason=None, override=True))

    def remove(self, item_id: str) -> None:
        """Drop an item (a finished one) from the queue."""
        self.update(lambda q: replace(q, items=tuple(i for i in q.items if i.id != item_id)))

    def intake(
        self,
        lister: IssueLister,
        *,
        histories: Mapping[str, ItemHistory],
        plans_dir: Path,
        now: float,
        agent: str | None = None,
    ) -> tuple[QueueItem, ...]:
        """Queue every listed issue not yet queued and never finished or parked before.

        Each issue becomes a plan file in ``plans_dir`` with one task: its title and
        body. Returns the items added.
        """
        issues = list(lister())
        added: list[QueueItem] = []

        def change(queue: Queue) -> Queue:
            queued = {item.id for item in queue.items}
            for issue in issues:
                item_id = f"issue-{_slug(issue.id)}"
                history = histories.get(item_id)
                if item_id in queued or (history is not None and history.outcome is not None):
                    continue  # queued, or it ran before: the ledger remembers it
                plan = plans_dir / f"{item_id}.toml"
                atomic_write_text(plan, issue_plan_text(issue, task_id=item_id, agent=agent))
                item = QueueItem(
                    id=item_id,
                    plan=str(plan.resolve()),
                    source=ItemSource.ISSUE,
                    issue=issue.id,
                    title=issue.title,
                    enqueued_at=now,
                )
                added.append(item)
                queued.add(item_id)
            return replace(queue, items=(*queue.items, *added))

        if issues:
            self.update(change)
        return tuple(added)


def issue_plan_text(issue: IntakeIssue, *, task_id: str, agent: str | None = None) -> str:
    """A plan file of one task whose prompt is the issue's title and body."""
    prompt = f"{issue.title}\n\n{issue.body}".strip()
    session = f"agent = {_toml_string(agent)}\n" if agent else ""
    return (
        f"# Generated from issue {issue.id} by seawall runner intake.\n"
        f"[session]\n{session}\n"
        f"[[task]]\nid = {_toml_string(task_id)}\nprompt = {_toml_string(prompt)}\n"
    )


def tracker_lister(
    *, kind: str, label: str, root: Path, repository: str | None = None
) -> IssueLister:
    """A lister over a tracker's open issues carrying ``label`` (built on each call).

    The tracker is resolved by name like carryover's (built-ins and entry points) and
    closed after each listing. Its failures are ``TrackerError``; a tick logs them and
    goes on with the queue it has.
    """

    def lister() -> list[IntakeIssue]:
        from seawall.model import TrackerConfig
        from seawall.tracker import open_tracker

        config = TrackerConfig(kind=kind, repository=repository, label=label)
        with open_tracker(config, root=root) as tracker:
            return [
                IntakeIssue(
                    id=str(issue.number), title=issue.title, body=issue.body, labels=issue.labels
                )
                for issue in tracker.list_issues(label)
            ]

    return lister


def _toml_string(value: str) -> str:
    # JSON string escapes are a subset of TOML basic-string escapes; DEL must be escaped.
    return json.dumps(value).replace("\x7f", "\\u007f")


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")
    return slug or "item"


@dataclass(frozen=True, slots=True, kw_only=True)
class _QueueFile:
    """``queue.json`` as written: the schema number, then the queue (``next_seq``
    defaults to the one after the items)."""

    schema: int
    blocked_reason: str | None = None
    override: bool = False
    next_seq: int | None = None
    items: tuple[QueueItem, ...] = ()

    @classmethod
    def of(cls, queue: Queue) -> _QueueFile:
        return cls(
            schema=QUEUE_SCHEMA,
            blocked_reason=queue.blocked_reason,
            override=queue.override,
            next_seq=queue.next_seq,
            items=queue.items,
        )

    def queue(self) -> Queue:
        next_seq = len(self.items) + 1 if self.next_seq is None else self.next_seq
        return Queue(
            items=self.items,
            blocked_reason=self.blocked_reason,
            override=self.override,
            next_seq=next_seq,
        )


def next_item(
    queue: Queue, histories: Mapping[str, ItemHistory], *, max_attempts: int
) -> QueueItem | None:
    """The item to take: never-run items first, in queue order, then the least recent.

    Finished and parked items are not taken; nor is an item that failed
    ``max_attempts`` times (0: no limit), which stays in the queue as given up.
    """
    candidates: list[tuple[float, int, QueueItem]] = []
    for index, item in enumerate(queue.items):
        history = histories.get(item.id)
        if history is not None and not _takeable(history, max_attempts):
            continue
        last = history.last_ts if history and history.last_ts is not None else float("-inf")
        candidates.append((last, index, item))
    return min(candidates, key=lambda c: (c[0], c[1]))[2] if candidates else None


def _takeable(history: ItemHistory, max_attempts: int) -> bool:
    outcome = history.outcome
    if outcome is not None and (is_finished(outcome) or is_parked(outcome)):
        return False
    return max_attempts <= 0 or history.failures < max_attempts
