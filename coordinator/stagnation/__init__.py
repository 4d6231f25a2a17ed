"""Stagnation detection: five patterns per agent, one record each.

``AgentMonitor`` is what the session loop and the transcript tailer create per agent:
it feeds the agent's breaker and the detectors (pagination spiral, turn-key repetition,
error echo, git write into the shared tree, status-partial) and writes every ``Finding`` as one
``stagnation_detected`` record in ``events.jsonl``.
"""

from __future__ import annotations

from seawall.stagnation.detectors import (
    ErrorEchoDetector,
    PaginationDetector,
    StatusPartialDetector,
    TurnKeyDetector,
)
from seawall.stagnation.finding import (
    ErrorClass,
    Finding,
    Pattern,
    Source,
    Verdict,
    classify_error,
    write_finding,
)
from seawall.stagnation.gitwrite import GIT_WRITES, GitWriteDetector, git_write
from seawall.stagnation.monitor import AgentMonitor, FindingListener, MonitorStatistics
from seawall.stagnation.watch import AgentStagnation

__all__ = [
    "GIT_WRITES",
    "AgentMonitor",
    "AgentStagnation",
    "ErrorClass",
    "ErrorEchoDetector",
    "Finding",
    "FindingListener",
    "GitWriteDetector",
    "MonitorStatistics",
    "PaginationDetector",
    "Pattern",
    "Source",
    "StatusPartialDetector",
    "TurnKeyDetector",
    "Verdict",
    "classify_error",
    "git_write",
    "write_finding",
]
