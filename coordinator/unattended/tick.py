"""One tick of the unattended runner: what ``seawall runner tick`` does.

A tick, in order:

1. keeps its files bounded (``runner.log``, ``ticks.jsonl``, ``attempted.jsonl``);
2. retires runs a lost tick left ``running`` as ``died``;
3. brings in tracker issues through the lister, when there is one;
4. checks the breaker: when open it refuses, records ``blocked_reason``, a
   ``blocked-breaker`` row for the item it refused and a ``breaker-open`` tick line,
   and logs the outcome that opened it and the override; half-open lets one probe by;
5. checks the rate-limit backoff;
6. takes the next item, writes its ``running`` row, runs it through the executor and
   writes the row with its outcome;
7. writes one line to ``ticks.jsonl``.

Only one tick works at a time (``tick.lock``); a tick that finds the lock held records a
``busy`` line and returns. Time comes from the injected clock.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from seawall.errors import SessionLockedError, TrackerError
from seawall.runtime.files import file_lock
from seawall.unattended.breaker import (
    BreakerState,
    BreakerStatus,
    breaker_reason,
    evaluate_breaker,
    evaluate_rate_limit,
)
from seawall.unattended.config import RunnerSettings
from seawall.unattended.executor import (
    ExecutionRequest,
    ExecutionResult,
    Executor,
    SubprocessExecutor,
)
from seawall.unattended.ledger import (
    AttemptRow,
    ItemHistory,
    Ledger,
    group_runs,
    item_histories,
)
from seawall.unattended.logs import RunnerLog, TickLog
from seawall.unattended.outcomes import Outcome, is_finished
from seawall.unattended.paths import RunnerPaths, format_ts
from seawall.unattended.queue import (
    IssueLister,
    Queue,
    QueueFile,
    QueueItem,
    next_item,
    tracker_lister,
)
from seawall.unattended.report import TickAction, TickReport

__all__ = ["run_tick"]

Clock = Callable[[], float]


def run_tick(
    runner_dir: Path,
    *,
    settings: RunnerSettings,
    executor: Executor | None = None,
    clock: Clock = time.time,
    lister: IssueLister | None = None,
) -> TickReport:
    """Run one tick in ``runner_dir`` and return what it did (see the module docstring).

    Without an executor, sessions run as subprocesses of ``settings.session_command``
    (default ``<python> -m coordinator run``). Without a lister, intake lists the
    ``intake_tracker`` when ``settings.intake_label`` is set.
    """
    paths = RunnerPaths(dir=runner_dir)
    started = clock()
    ticks = TickLog(paths.ticks)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(file_lock(paths.lock, blocking=False, what="the runner"))
        except SessionLockedError:
            report = TickReport(
                action=TickAction.BUSY,
                ts=started,
                duration_sec=clock() - started,
                consecutive_failures_before=None,
                detail="another tick is still running",
            )
            RunnerLog(paths.log, clock=clock).write("another tick is still running; skipped")
            ticks.append(report)
            return report
        tick = _Tick(
            paths,
            settings,
            executor or _default_executor(settings),
            clock,
            lister or _default_lister(settings),
        )
        report = tick.run(started)
        ticks.append(report)
        return report


class _Tick:
    """The steps of one tick, holding the tick lock."""

    def __init__(
        self,
        paths: RunnerPaths,
        settings: RunnerSettings,
        executor: Executor,
        clock: Clock,
        lister: IssueLister | None,
    ) -> None:
        self.paths = paths
        self.settings = settings
        self.executor = executor
        self.clock = clock
        self.lister = lister
        self.log = RunnerLog(paths.log, clock=clock)
        self.ledger = Ledger(paths.attempted)
        self.queue_file = QueueFile(paths.queue)

    def run(self, started: float) -> TickReport:
        self._housekeeping(started)
        self._retire_dead(started)
        rows = self.ledger.read().rows
        histories = item_histories(rows)
        self._intake(histories, started)
        queue = self.queue_file.load()
        window = self._window(rows, started)
        breaker = self._breaker(window, started)
        item = next_item(queue, histories, max_attempts=self.settings.max_attempts)
        if not breaker.allows_work and not queue.override:
            return self._refuse_breaker(item, breaker, queue, started)
        rate = evaluate_rate_limit(
            window,
            base_sec=self.settings.rate_limit_backoff_sec,
            max_sec=self.settings.rate_limit_backoff_max_sec,
        )
        if item is not None and rate.waiting(started):
            until = format_ts(rate.wait_until or started)
            detail = f"{rate.consecutive} consecutive rate limits; waiting until {until}"
            self._append_blocked(item, Outcome.BLOCKED_RATE_LIMIT, detail, started)
            self.log.write(f"rate-limited: {detail}; item {item.id} stays queued")
            return self._report(
                TickAction.RATE_LIMIT_WAIT, started, breaker, item=item.id, detail=detail
            )
        if item is None:
            if breaker.allows_work and breaker.state is not BreakerState.HALF_OPEN:
                self._clear_blocked_reason(queue)
            return self._report(TickAction.IDLE, started, breaker, detail="nothing to take")
        return self._run_item(item, breaker, queue, started)

    # -- steps ---------------------------------------------------------------------

    def _housekeeping(self, now: float) -> None:
        truncated = self.log.truncate(max_bytes=self.settings.log_max_bytes)
        if truncated is not None:
            self.log.write(
                f"runner.log truncated at {truncated.bytes_before} bytes; "
                f"the last {truncated.bytes_kept} bytes are in runner.log.1"
            )
        TickLog(self.paths.ticks).trim(
            max_bytes=self.settings.ticks_max_bytes, keep_lines=self.settings.ticks_keep
        )
        compaction = self.ledger.compact(now=now, max_bytes=self.settings.attempted_max_bytes)
        if compaction is not None:
            self.log.write(
                f"attempted.jsonl compacted: {compaction.rows_before} -> "
                f"{compaction.rows_after} rows; the full log is in attempted.jsonl.1"
            )

    def _retire_dead(self, now: float) -> None:
        """A ``running`` run with no outcome was lost (this tick holds the lock)."""
        for run in group_runs(self.ledger.read().rows):
            if run.outcome == Outcome.RUNNING:
                detail = "the tick running it ended without recording an outcome"
                self.ledger.append(
                    AttemptRow(
                        item=run.item, task=run.task, outcome=Outcome.DIED, ts=now, detail=detail
                    )
                )
                self.log.write(f"item {run.item}: run {run.task} {detail}; recorded as died")

    def _intake(self, histories: Mapping[str, ItemHistory], now: float) -> None:
        if self.lister is None:
            return
        try:
            added = self.queue_file.intake(
                self.lister,
                histories=histories,
                plans_dir=self.paths.plans,
                now=now,
                agent=self.settings.intake_agent,
            )
        except TrackerError as exc:
            # A tracker outage must not stop the queued work: log it, try next tick.
            self.log.write(f"intake skipped: {exc}")
            return
        for item in added:
            self.log.write(f"intake: queued issue {item.issue} as {item.id}")

    def _window(self, rows: Sequence[AttemptRow], now: float) -> tuple[AttemptRow, ...]:
        since = now - self.settings.attempt_window_sec
        return tuple(row for row in rows if row.ts >= since)

    def _breaker(self, window: Sequence[AttemptRow], now: float) -> BreakerStatus:
        return evaluate_breaker(
            window,
            now=now,
            limit=self.settings.breaker_limit,
            cooldown_sec=self.settings.breaker_cooldown_sec,
        )

    def _refuse_breaker(
        self, item: QueueItem | None, breaker: BreakerStatus, queue: Queue, now: float
    ) -> TickReport:
        reason = breaker_reason(breaker, window_sec=self.settings.attempt_window_sec)
        if queue.blocked_reason != reason:
            self.queue_file.update(lambda q: replace(q, blocked_reason=reason))
        if item is not None:
            self._append_blocked(item, Outcome.BLOCKED_BREAKER, "breaker open", now)
        self.log.write(reason)
        return self._report(
            TickAction.BREAKER_OPEN,
            now,
            breaker,
            breaker_after=breaker,
            item=item.id if item else None,
            detail=reason,
        )

    def _append_blocked(self, item: QueueItem, outcome: Outcome, detail: str, now: float) -> None:
        self.ledger.append(
            AttemptRow(item=item.id, task=_task_id(), outcome=outcome, ts=now, detail=detail)
        )

    def _run_item(
        self, item: QueueItem, breaker: BreakerStatus, queue: Queue, started: float
    ) -> TickReport:
        override = not breaker.allows_work and queue.override
        probe = breaker.state is BreakerState.HALF_OPEN
        if queue.override:
            self.queue_file.update(lambda q: replace(q, override=False))
        how = "override run" if override else "probe" if probe else "run"
        task = _task_id()
        self.log.write(f"{how}: item {item.id} ({item.plan}) as task {task}")
        begun = self.clock()
        self.ledger.append(AttemptRow(item=item.id, task=task, outcome=Outcome.RUNNING, ts=begun))
        result = self._execute(item, task)
        ended = self.clock()
        self.ledger.append(
            AttemptRow(
                item=item.id,
                task=task,
                outcome=result.outcome,
                ts=ended,
                publish_gate=result.publish_gate,
                exit_code=result.exit_code,
                duration_sec=round(ended - begun, 3),
                detail=result.detail,
                signature=result.signature,
                resume_after=result.resume_after,
            )
        )
        self.log.write(f"item {item.id}: {result.outcome} ({result.detail or 'no detail'})")
        if is_finished(result.outcome):
            self.queue_file.remove(item.id)
        after = self._breaker(self._window(self.ledger.read().rows, ended), ended)
        events = self._settle(after, self.queue_file.load(), was=breaker)
        return self._report(
            TickAction.RAN,
            started,
            breaker,
            breaker_after=after,
            item=item.id,
            task=task,
            outcome=str(result.outcome),
            probe=probe,
            override=override,
            events=events,
            detail=result.detail,
        )

    def _execute(self, item: QueueItem, task: str) -> ExecutionResult:
        request = ExecutionRequest(
            item=item,
            task_id=task,
            repo=self.settings.repo or Path.cwd(),
            log_path=self.paths.log,
            timeout_sec=self.settings.session_timeout_sec,
        )
        try:
            return self.executor(request)
        except BaseException as exc:
            # The ``running`` row stays; the next tick records the run as died.
            self.log.write(f"item {item.id}: the executor raised {exc!r}")
            raise

    def _settle(self, after: BreakerStatus, queue: Queue, *, was: BreakerStatus) -> tuple[str, ...]:
        """Bring ``blocked_reason`` in line with the breaker; name any transition."""
        if after.state is BreakerState.OPEN:
            reason = breaker_reason(after, window_sec=self.settings.attempt_window_sec)
            if queue.blocked_reason != reason:
                self.queue_file.update(lambda q: replace(q, blocked_reason=reason))
            self.log.write(reason)
            return ("breaker-open",)
        if after.state is BreakerState.HALF_OPEN:
            return ()
        self._clear_blocked_reason(queue)
        if was.state in (BreakerState.OPEN, BreakerState.HALF_OPEN):
            self.log.write("breaker closed: the chain of failed attempts has ended")
            return ("breaker-closed",)
        return ()

    def _clear_blocked_reason(self, queue: Queue) -> None:
        if queue.blocked_reason is not None:
            self.queue_file.update(lambda q: replace(q, blocked_reason=None))

    def _report(
        self,
        action: TickAction,
        started: float,
        before: BreakerStatus,
        *,
        breaker_after: BreakerStatus | None = None,
        **fields: Any,
    ) -> TickReport:
        after = breaker_after or before
        return TickReport(
            action=action,
            ts=started,
            duration_sec=self.clock() - started,
            consecutive_failures_before=before.consecutive_failures,
            breaker=after.state,
            **fields,
        )


def _default_executor(settings: RunnerSettings) -> Executor:
    if settings.session_command:
        return SubprocessExecutor(command=settings.session_command)
    return SubprocessExecutor()


def _default_lister(settings: RunnerSettings) -> IssueLister | None:
    if settings.intake_label is None:
        return None
    return tracker_lister(
        kind=settings.intake_tracker,
        label=settings.intake_label,
        root=settings.repo or Path.cwd(),
        repository=settings.intake_repository,
    )


def _task_id() -> str:
    return uuid.uuid4().hex[:16]
