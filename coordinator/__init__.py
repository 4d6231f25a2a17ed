"""seawall: run a coding session as waves of coding agents.

The public namespace. Everything a lead agent or a user script needs is importable from
here; submodules hold the details. Names load on first use, so importing ``coordinator``
(as every ``seawall hook`` call does) stays cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from coordinator.carryover import Carryover as Carryover
    from coordinator.carryover import CarryoverFiler as CarryoverFiler
    from coordinator.carryover import CarryoverKind as CarryoverKind
    from coordinator.carryover import CarryoverResult as CarryoverResult
    from coordinator.carryover import file_carryover as file_carryover
    from coordinator.errors import ConfigurationError as ConfigurationError
    from coordinator.errors import DirtyWorkingTreeError as DirtyWorkingTreeError
    from coordinator.errors import GitError as GitError
    from coordinator.errors import MissingExtraError as MissingExtraError
    from coordinator.errors import PlanError as PlanError
    from coordinator.errors import RunnerError as RunnerError
    from coordinator.errors import SeawallError as SeawallError
    from coordinator.errors import SessionLockedError as SessionLockedError
    from coordinator.errors import StateError as StateError
    from coordinator.errors import TrackerError as TrackerError
    from coordinator.events import Event as Event
    from coordinator.events import Final as Final
    from coordinator.events import Message as Message
    from coordinator.events import ToolCall as ToolCall
    from coordinator.events import ToolResult as ToolResult
    from coordinator.events import Turn as Turn
    from coordinator.events import Usage as Usage
    from coordinator.exitcodes import ExitCode as ExitCode
    from coordinator.isolation import explain_enforcement as explain_enforcement
    from coordinator.isolation import explain_isolation as explain_isolation
    from coordinator.isolation import resolve_enforcement as resolve_enforcement
    from coordinator.isolation import resolve_isolation as resolve_isolation
    from coordinator.lead.types import AgentAssignment as AgentAssignment
    from coordinator.lead.types import AgentReview as AgentReview
    from coordinator.lead.types import PreparedWave as PreparedWave
    from coordinator.lead.types import WaveReport as WaveReport
    from coordinator.model import BreakerLimits as BreakerLimits
    from coordinator.model import Budgets as Budgets
    from coordinator.model import ChecksPolicy as ChecksPolicy
    from coordinator.model import CollisionRisk as CollisionRisk
    from coordinator.model import Enforcement as Enforcement
    from coordinator.model import Isolation as Isolation
    from coordinator.model import Plan as Plan
    from coordinator.model import RunnerSpec as RunnerSpec
    from coordinator.model import SessionConfig as SessionConfig
    from coordinator.model import SessionType as SessionType
    from coordinator.model import Status as Status
    from coordinator.model import StatusReport as StatusReport
    from coordinator.model import Task as Task
    from coordinator.model import TaskKind as TaskKind
    from coordinator.model import TrackerConfig as TrackerConfig
    from coordinator.model import Wave as Wave
    from coordinator.model import WaveBreakerConfig as WaveBreakerConfig
    from coordinator.plan import load_plan as load_plan
    from coordinator.plan import parse_plan as parse_plan
    from coordinator.plan import plan_waves as plan_waves
    from coordinator.progress import Progress as Progress
    from coordinator.prompting import render_agent_prompt as render_agent_prompt
    from coordinator.registry import AdapterError as AdapterError
    from coordinator.runner import AgentRequest as AgentRequest
    from coordinator.runner import AgentResult as AgentResult
    from coordinator.runner import AgentRunner as AgentRunner
    from coordinator.runner import RunnerProbe as RunnerProbe
    from coordinator.runner import StopSignal as StopSignal
    from coordinator.runner import runner_options as runner_options
    from coordinator.session.engine import Session as Session
    from coordinator.session.engine import SessionResult as SessionResult
    from coordinator.status import parse_status as parse_status
    from coordinator.tracker import Capability as Capability
    from coordinator.tracker import Issue as Issue
    from coordinator.tracker import IssueTracker as IssueTracker
    from coordinator.tracker import PullRequest as PullRequest
    from coordinator.tracker import TrackerRateLimitError as TrackerRateLimitError
    from coordinator.tracker import TrackerUnavailableError as TrackerUnavailableError
    from coordinator.tracker import open_tracker as open_tracker
    from coordinator.tracker import tracker_options as tracker_options

# The one list of the public names, by the module that defines each; ``__all__``,
# ``__getattr__`` and ``__dir__`` are derived from it. The imports above say the same to
# type checkers (``name as name`` is mypy's explicit re-export), which cannot read a table
# and which a lazy namespace cannot give eager imports; a test checks the two agree.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "coordinator.carryover": (
        "Carryover",
        "CarryoverFiler",
        "CarryoverKind",
        "CarryoverResult",
        "file_carryover",
    ),
    "coordinator.errors": (
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
    ),
    "coordinator.events": (
        "Event",
        "Final",
        "Message",
        "ToolCall",
        "ToolResult",
        "Turn",
        "Usage",
    ),
    "coordinator.exitcodes": ("ExitCode",),
    "coordinator.isolation": (
        "explain_enforcement",
        "explain_isolation",
        "resolve_enforcement",
        "resolve_isolation",
    ),
    "coordinator.lead.types": (
        "AgentAssignment",
        "AgentReview",
        "PreparedWave",
        "WaveReport",
    ),
    "coordinator.model": (
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
    ),
    "coordinator.plan": (
        "load_plan",
        "parse_plan",
        "plan_waves",
    ),
    "coordinator.progress": ("Progress",),
    "coordinator.prompting": ("render_agent_prompt",),
    "coordinator.registry": ("AdapterError",),
    "coordinator.runner": (
        "AgentRequest",
        "AgentResult",
        "AgentRunner",
        "RunnerProbe",
        "StopSignal",
        "runner_options",
    ),
    "coordinator.session.engine": (
        "Session",
        "SessionResult",
    ),
    "coordinator.status": ("parse_status",),
    "coordinator.tracker": (
        "Capability",
        "Issue",
        "IssueTracker",
        "PullRequest",
        "TrackerRateLimitError",
        "TrackerUnavailableError",
        "open_tracker",
        "tracker_options",
    ),
}

_MODULE_OF: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'coordinator' has no attribute {name!r}")
    import importlib  # here, not at import: a hook call never needs it

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
