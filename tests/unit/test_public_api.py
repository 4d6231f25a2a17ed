"""The public namespace of ``seawall``: a test that fails when ``__all__`` drifts."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import seawall

EXPECTED = {
    "AgentRequest", "AgentResult", "AgentRunner", "BreakerLimits", "Budgets", "Carryover",
    "CarryoverFiler", "CarryoverKind", "CarryoverResult", "ChecksPolicy", "CollisionRisk",
    "ConfigurationError", "Conversation", "DirtyWorkingTreeError", "Enforcement", "Event",
    "ExitCode", "Final", "HumanTurn",
    "GitError", "Isolation", "Issue", "IssueTracker", "Message", "MissingExtraError", "Plan",
    "PlanError", "RunnerError", "RunnerProbe", "RunnerSpec", "SeawallError", "Session",
    "SessionConfig",
    "SessionLockedError", "SessionResult", "SessionType", "StateError", "Status",
    "StatusReport", "StopSignal", "Task", "TaskKind", "ToolCall", "ToolResult",
    "TrackerConfig", "TrackerError", "Turn", "Usage", "Wave", "WaveBreakerConfig",
    "explain_enforcement", "explain_isolation", "file_carryover", "load_plan", "open_tracker",
    "parse_plan", "parse_status", "plan_waves", "render_agent_prompt", "resolve_enforcement",
    "resolve_isolation", "AdapterError", "Capability", "PullRequest", "TrackerRateLimitError",
    "TrackerUnavailableError", "tracker_options", "runner_options",
    "AgentAssignment", "AgentReview", "PreparedWave", "Progress", "WaveReport",
}  # fmt: skip


def test_all_is_exactly_the_public_api() -> None:
    assert set(seawall.__all__) == EXPECTED
    assert seawall.__all__ == sorted(seawall.__all__)
    assert sorted(dir(seawall)) == sorted(EXPECTED)


def test_type_checkers_see_the_same_names_from_the_same_modules() -> None:
    """The imports for type checkers (``if TYPE_CHECKING:``) re-export exactly the
    runtime table, each name from the module the table says, as ``name as name``."""
    tree = ast.parse(Path(seawall.__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    static: dict[str, str] = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("seawall"):
            for alias in node.names:
                assert alias.asname == alias.name, f"{alias.name}: import it as itself"
                static[alias.name] = str(node.module)
    runtime = {name: module for module, names in seawall._EXPORTS.items() for name in names}
    assert static == runtime


def test_every_name_resolves_to_a_public_object() -> None:
    for name in seawall.__all__:
        value = getattr(seawall, name)
        if name == "Event":  # a type alias (a union of the event classes)
            assert all(t.__module__ == "seawall.events" for t in value.__args__)
            continue
        module = getattr(value, "__module__", "") or ""
        assert module.startswith("seawall"), (name, module)
        assert not name.startswith("_")


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        seawall.nothing_here  # noqa: B018
    except AttributeError as exc:
        assert "nothing_here" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_documented_signatures() -> None:
    from seawall import (
        load_plan,
        parse_status,
        plan_waves,
        resolve_enforcement,
        resolve_isolation,
    )

    assert list(inspect.signature(resolve_isolation).parameters) == [
        "agent_count", "session_type", "collision_risk", "config_isolation", "base_is_stale",
    ]  # fmt: skip
    assert list(inspect.signature(resolve_enforcement).parameters) == [
        "isolation",
        "config_enforcement",
    ]
    assert "path" in inspect.signature(load_plan).parameters
    assert "plan" in inspect.signature(plan_waves).parameters
    assert "text" in inspect.signature(parse_status).parameters


def test_import_is_light() -> None:
    code = "import sys, seawall; print('networkx' in sys.modules, 'pygit2' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
