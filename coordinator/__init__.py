"""seawall: run a coding session as waves of coding agents.

The public namespace. Everything a lead agent or a user script needs is importable from
here; submodules hold the details. Names load on first use, so importing ``coordinator``
(as every ``seawall hook`` call does) stays cheap.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from coordinator.carryover import (
        Carryover,
        CarryoverFiler,
        CarryoverKind,
        CarryoverResult,
        file_carryover,
    )
    from coordinator.errors import (
        ConfigurationError,
        DirtyWorkingTreeError,
        GitError,
        MissingExtraError,
        PlanError,
        RunnerError,
        SeawallError,
        SessionLockedError,
        StateError,
        TrackerError,
    )
    from coordinator.events import Event, Final, Message, ToolCall, ToolResult, Turn, Usage
    from coordinator.exitcodes import ExitCode
    from coordinator.isolation import (
        explain_enforcement,
        explain_isolation,
        resolve_enforcement,
        resolve_isolation,
    )
    from coordinator.model import (
        BreakerLimits,
        Budgets,
        ChecksPolicy,
        CollisionRisk,
        Enforcement,
        Isolation,
        Plan,
        RunnerSpec,
        SessionConfig,
        SessionType,
        Status,
        StatusReport,
        Task,
        TaskKind,
        TrackerConfig,
        Wave,
        WaveBreakerConfig,
    )
    from coordinator.plan import load_plan, parse_plan, plan_waves
    from coordinator.prompting import render_agent_prompt
    from coordinator.registry import AdapterError
    from coordinator.runner import (
        AgentRequest,
        AgentResult,
        AgentRunner,
        RunnerProbe,
        StopSignal,
        runner_options,
    )
    from coordinator.session.engine import Session, SessionResult
    from coordinator.status import parse_status
    from coordinator.tracker import (
        Capability,
        Issue,
        IssueTracker,
        PullRequest,
        TrackerRateLimitError,
        TrackerUnavailableError,
        open_tracker,
        tracker_options,
    )

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        ["Carryover", "CarryoverFiler", "CarryoverKind", "CarryoverResult", "file_carryover"],
        "coordinator.carryover",
    ),
    **dict.fromkeys(
        [
            "ConfigurationError",
            "DirtyWorkingTreeError",
            "GitError",
            "MissingExtraError",
            "PlanError",
            "RunnerError",
            "SeawallError",
            "SessionLockedError",
            "StateError",
            "TrackerError",
        ],
        "coordinator.errors",
    ),
    **dict.fromkeys(
        ["Event", "Final", "Message", "ToolCall", "ToolResult", "Turn", "Usage"],
        "coordinator.events",
    ),
    "ExitCode": "coordinator.exitcodes",
    **dict.fromkeys(
        ["explain_enforcement", "explain_isolation", "resolve_enforcement", "resolve_isolation"],
        "coordinator.isolation",
    ),
    **dict.fromkeys(
        [
            "BreakerLimits",
            "Budgets",
            "ChecksPolicy",
            "CollisionRisk",
            "Enforcement",
            "Isolation",
            "Plan",
            "RunnerSpec",
            "SessionConfig",
            "SessionType",
            "Status",
            "StatusReport",
            "Task",
            "TaskKind",
            "TrackerConfig",
            "Wave",
            "WaveBreakerConfig",
        ],
        "coordinator.model",
    ),
    **dict.fromkeys(["load_plan", "parse_plan", "plan_waves"], "coordinator.plan"),
    "render_agent_prompt": "coordinator.prompting",
    **dict.fromkeys(
        [
            "AgentRequest",
            "AgentResult",
            "AgentRunner",
            "RunnerProbe",
            "StopSignal",
            "runner_options",
        ],
        "coordinator.runner",
    ),
    **dict.fromkeys(["Session", "SessionResult"], "coordinator.session.engine"),
    "parse_status": "coordinator.status",
    **dict.fromkeys(
        [
            "Capability",
            "Issue",
            "IssueTracker",
            "PullRequest",
            "TrackerRateLimitError",
            "TrackerUnavailableError",
            "open_tracker",
            "tracker_options",
        ],
        "coordinator.tracker",
    ),
    "AdapterError": "coordinator.registry",
}

__all__ = [
    "AdapterError",
    "AgentRequest",
    "AgentResult",
    "AgentRunner",
    "BreakerLimits",
    "Budgets",
    "Capability",
    "Carryover",
    "CarryoverFiler",
    "CarryoverKind",
    "CarryoverResult",
    "ChecksPolicy",
    "CollisionRisk",
    "ConfigurationError",
    "DirtyWorkingTreeError",
    "Enforcement",
    "Event",
    "ExitCode",
    "Final",
    "GitError",
    "Isolation",
    "Issue",
    "IssueTracker",
    "Message",
    "MissingExtraError",
    "Plan",
    "PlanError",
    "PullRequest",
    "RunnerError",
    "RunnerProbe",
    "RunnerSpec",
    "SeawallError",
    "Session",
    "SessionConfig",
    "SessionLockedError",
    "SessionResult",
    "SessionType",
    "StateError",
    "Status",
    "StatusReport",
    "StopSignal",
    "Task",
    "TaskKind",
    "ToolCall",
    "ToolResult",
    "TrackerConfig",
    "TrackerError",
    "TrackerRateLimitError",
    "TrackerUnavailableError",
    "Turn",
    "Usage",
    "Wave",
    "WaveBreakerConfig",
    "explain_enforcement",
    "explain_isolation",
    "file_carryover",
    "load_plan",
    "open_tracker",
    "parse_plan",
    "parse_status",
    "plan_waves",
    "render_agent_prompt",
    "resolve_enforcement",
    "resolve_isolation",
    "runner_options",
    "tracker_options",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'coordinator' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
