"""The unattended runner: a queue of sessions run one per tick from a timer.

For machines that run seawall for weeks from cron, a systemd timer or launchd. The
runner-level breaker refuses new work after consecutive failed attempts read from the
ledger, half-opens after a cooldown, and every file the runner writes stays bounded.
See ``docs/unattended.md``.
"""

from __future__ import annotations

from seawall.unattended.breaker import (
    BreakerState,
    BreakerStatus,
    RateLimitStatus,
    consecutive_failures,
    evaluate_breaker,
    evaluate_rate_limit,
)
from seawall.unattended.config import RunnerSettings, load_settings, resolve_runner_dir
from seawall.unattended.executor import (
    ExecutionRequest,
    ExecutionResult,
    Executor,
    SubprocessExecutor,
)
from seawall.unattended.ledger import AttemptRow, ItemHistory, Ledger, Run, group_runs
from seawall.unattended.logs import RunnerLog, TickLog, truncate_log
from seawall.unattended.outcomes import ChainEffect, Outcome, chain_effect
from seawall.unattended.paths import RunnerPaths
from seawall.unattended.queue import (
    IntakeIssue,
    IssueLister,
    Queue,
    QueueFile,
    QueueItem,
    tracker_lister,
)
from seawall.unattended.report import TickAction, TickReport
from seawall.unattended.status_view import RunnerStatus, render_status, runner_status
from seawall.unattended.tick import run_tick

__all__ = [
    "AttemptRow",
    "BreakerState",
    "BreakerStatus",
    "ChainEffect",
    "ExecutionRequest",
    "ExecutionResult",
    "Executor",
    "IntakeIssue",
    "IssueLister",
    "ItemHistory",
    "Ledger",
    "Outcome",
    "Queue",
    "QueueFile",
    "QueueItem",
    "RateLimitStatus",
    "Run",
    "RunnerLog",
    "RunnerPaths",
    "RunnerSettings",
    "RunnerStatus",
    "SubprocessExecutor",
    "TickAction",
    "TickLog",
    "TickReport",
    "chain_effect",
    "consecutive_failures",
    "evaluate_breaker",
    "evaluate_rate_limit",
    "group_runs",
    "load_settings",
    "render_status",
    "resolve_runner_dir",
    "run_tick",
    "runner_status",
    "tracker_lister",
    "truncate_log",
]
