"""seawall: run a coding session as waves of coding agents.

The public namespace. Everything a lead agent or a user script needs is importable from
here; submodules hold the details. Names load on first use, so importing ``seawall``
(as every ``seawall hook`` call does) stays cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from seawall.carryover import Carryover as Carryover
    from seawall.carryover import CarryoverFiler as CarryoverFiler
    from seawall.carryover import CarryoverKind as CarryoverKind
    from seawall.carryover import CarryoverResult as CarryoverResult
    from seawall.carryover import file_carryover as file_carryover
    from seawall.errors import ConfigurationError as ConfigurationError
    from seawall.errors import DirtyWorkingTreeError as DirtyWorkingTreeError
    from seawall.errors import GitError as GitError
    from seawall.errors import MissingExtraError as MissingExtraError
    from seawall.errors import PlanError as PlanError
    from seawall.errors import RunnerError as RunnerError
    from seawall.errors import SeawallError as SeawallError
    from seawall.errors import SessionLockedError as SessionLockedError
    from seawall.errors import StateError as StateError
    from seawall.errors import TrackerError as TrackerError
    from seawall.events import Conversation as Conversation
    from seawall.events import Event as Event
    from seawall.events import Final as Final
    from seawall.events import HumanTurn as HumanTurn
    from seawall.events import Message as Message
    from seawall.events import ToolCall as ToolCall
    from seawall.events import ToolResult as ToolResult
    from seawall.events import Turn as Turn
    from seawall.events import Usage as Usage
    from seawall.exitcodes import ExitCode as ExitCode
    from seawall.isolation import explain_enforcement as explain_enforcement
    from seawall.isolation import explain_isolation as explain_isolation
    from seawall.isolation import resolve_enforcement as resolve_enforcement
    from seawall.isolation import resolve_isolation as resolve_isolation
    from seawall.model import BreakerLimits as BreakerLimits
    from seawall.model import Budgets as Budgets
    from seawall.model import ChecksPolicy as ChecksPolicy
    from seawall.model import CollisionRisk as CollisionRisk
    from seawall.model import Enforcement as Enforcement
    from seawall.model import Isolation as Isolation
    from seawall.model import Plan as Plan
    from seawall.model import RunnerSpec as RunnerSpec
    from seawall.model import SessionConfig as SessionConfig
    from seawall.model import SessionType as SessionType
    from seawall.model import Status as Status
    from seawall.model import StatusReport as StatusReport
    from seawall.model import Task as Task
    from seawall.model import TaskKind as TaskKind
    from seawall.model import TrackerConfig as TrackerConfig
    from seawall.model import Wave as Wave
    from seawall.model import WaveBreakerConfig as WaveBreakerConfig
    from seawall.plan import load_plan as load_plan
    from seawall.plan import parse_plan as parse_plan
    from seawall.plan import plan_waves as plan_waves
    from seawall.prompting import render_agent_prompt as render_agent_prompt
    from seawall.registry import AdapterError as AdapterError
    from seawall.report.progress import Progress as Progress
    from seawall.runner import AgentRequest as AgentRequest
    from seawall.runner import AgentResult as AgentResult
    from seawall.runner import AgentRunner as AgentRunner
    from seawall.runner import RunnerProbe as RunnerProbe
    from seawall.runner import StopSignal as StopSignal
    from seawall.runner import runner_options as runner_options
    from seawall.session.engine import Session as Session
    from seawall.session.engine import SessionResult as SessionResult
    from seawall.session.step_types import AgentAssignment as AgentAssignment
    from seawall.session.step_types import AgentReview as AgentReview
    from seawall.session.step_types import PreparedWave as PreparedWave
    from seawall.session.step_types import WaveReport as WaveReport
    from seawall.status_parsing import parse_status as parse_status
    from seawall.tracker import Capability as Capability
    from seawall.tracker import Issue as Issue
    from seawall.tracker import IssueTracker as IssueTracker
    from seawall.tracker import PullRequest as PullRequest
    from seawall.tracker import TrackerRateLimitError as TrackerRateLimitError
    from seawall.tracker import TrackerUnavailableError as TrackerUnavailableError
    from seawall.tracker import open_tracker as open_tracker
    from seawall.tracker import tracker_options as tracker_options

# The one list of the public names, by the module that defines each; ``__all__``,
# ``__getattr__`` and ``__dir__`` are derived from it. The imports above say the same to
# type checkers (``name as name`` is mypy's explicit re-export), which cannot read a table
# and which a lazy namespace cannot give eager imports; a test checks the two agree.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "seawall.carryover": (
        "Carryover",
        "CarryoverFiler",
        "CarryoverKind",
        "CarryoverResult",
        "file_carryover",
    ),
    "seawall.errors": (
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
    "seawall.events": (
        "Conversation",
        "Event",
        "Final",
        "HumanTurn",
        "Message",
        "ToolCall",
        "ToolResult",
        "Turn",
        "Usage",
    ),
    "seawall.exitcodes": ("ExitCode",),
    "seawall.isolation": (
        "explain_enforcement",
        "explain_isolation",
        "resolve_enforcement",
        "resolve_isolation",
    ),
    "seawall.session.step_types": (
        "AgentAssignment",
        "AgentReview",
        "PreparedWave",
        "WaveReport",
    ),
    "seawall.model": (
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
    "seawall.plan": (
        "load_plan",
        "parse_plan",
        "plan_waves",
    ),
    "seawall.report.progress": ("Progress",),
    "seawall.prompting": ("render_agent_prompt",),
    "seawall.registry": ("AdapterError",),
    "seawall.runner": (
        "AgentRequest",
        "AgentResult",
        "AgentRunner",
        "RunnerProbe",
        "StopSignal",
        "runner_options",
    ),
    "seawall.session.engine": (
        "Session",
        "SessionResult",
    ),
    "seawall.status_parsing": ("parse_status",),
    "seawall.tracker": (
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
        raise AttributeError(f"module 'seawall' has no attribute {name!r}")
    import importlib  # here, not at import: a hook call never needs it

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
