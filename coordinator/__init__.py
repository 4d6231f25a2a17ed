"""seawall: run a coding session as waves of coding agents.

The public namespace. Everything a lead agent or a user script needs is importable from
here; submodules hold the details.
"""

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
from coordinator.isolation import (
    explain_enforcement,
    explain_isolation,
    resolve_enforcement,
    resolve_isolation,
)
from coordinator.model import (
    CollisionRisk,
    Enforcement,
    Isolation,
    Plan,
    SessionConfig,
    SessionType,
    Status,
    StatusReport,
    Task,
    TaskKind,
    Wave,
)
from coordinator.plan import load_plan, parse_plan, plan_waves
from coordinator.prompting import render_agent_prompt
from coordinator.status import parse_status

__all__ = [
    "CollisionRisk",
    "ConfigurationError",
    "DirtyWorkingTreeError",
    "Enforcement",
    "Event",
    "Final",
    "GitError",
    "Isolation",
    "Message",
    "MissingExtraError",
    "Plan",
    "PlanError",
    "RunnerError",
    "SeawallError",
    "SessionConfig",
    "SessionLockedError",
    "SessionType",
    "StateError",
    "Status",
    "StatusReport",
    "Task",
    "TaskKind",
    "ToolCall",
    "ToolResult",
    "TrackerError",
    "Turn",
    "Usage",
    "Wave",
    "explain_enforcement",
    "explain_isolation",
    "load_plan",
    "parse_plan",
    "parse_status",
    "plan_waves",
    "render_agent_prompt",
    "resolve_enforcement",
    "resolve_isolation",
]
