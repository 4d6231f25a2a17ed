"""Isolation and enforcement resolution: every row and override of the graduated
isolation table (agent count × session type) and of the enforcement table."""

from __future__ import annotations

import itertools

import pytest

from seawall.errors import ConfigurationError
from seawall.isolation import (
    EnforcementResolution,
    IsolationResolution,
    explain_enforcement,
    explain_isolation,
    resolve_enforcement,
    resolve_isolation,
)
from seawall.model import CollisionRisk, Enforcement, Isolation, SessionType

TYPES = ["housekeeping", "feature", "deep"]

# The agent-count table (Worktree Isolation 1), with config auto, low risk, fresh base.
TABLE = [
    (1, "housekeeping", "none"),
    (1, "feature", "none"),
    (1, "deep", "none"),
    (2, "housekeeping", "none"),
    (2, "feature", "none"),
    (2, "deep", "none"),
    (3, "housekeeping", "none"),
    (4, "housekeeping", "none"),
    (3, "feature", "worktree"),
    (4, "feature", "worktree"),
    (3, "deep", "worktree"),
    (4, "deep", "worktree"),
    (5, "housekeeping", "worktree"),
    (5, "feature", "worktree"),
    (5, "deep", "worktree"),
    (12, "housekeeping", "worktree"),
    (40, "deep", "worktree"),
]


@pytest.mark.parametrize(("count", "session_type", "expected"), TABLE)
def test_agent_count_table(count: int, session_type: str, expected: str) -> None:
    result = resolve_isolation(agent_count=count, session_type=session_type)
    assert result == expected
    assert isinstance(result, Isolation)


@pytest.mark.parametrize(("count", "session_type", "_"), TABLE)
@pytest.mark.parametrize("configured", ["worktree", "none"])
def test_explicit_config_overrides_every_row(
    count: int, session_type: str, _: str, configured: str
) -> None:
    assert (
        resolve_isolation(agent_count=count, session_type=session_type, config_isolation=configured)
        == configured
    )


@pytest.mark.parametrize(
    ("count", "session_type"), [(c, t) for c in (1, 2, 3, 4, 5) for t in TYPES]
)
def test_high_collision_risk_forces_worktree(count: int, session_type: str) -> None:
    assert (
        resolve_isolation(agent_count=count, session_type=session_type, collision_risk="high")
        is Isolation.WORKTREE
    )


@pytest.mark.parametrize("risk", ["low", "medium"])
def test_low_and_medium_risk_follow_the_table(risk: str) -> None:
    assert resolve_isolation(agent_count=2, session_type="deep", collision_risk=risk) == "none"
    assert resolve_isolation(agent_count=3, session_type="deep", collision_risk=risk) == "worktree"


def test_explicit_none_beats_high_collision_risk() -> None:
    result = explain_isolation(
        agent_count=1, session_type="feature", collision_risk="high", config_isolation="none"
    )
    assert result.value is Isolation.NONE
    assert "explicit" in result.reason


@pytest.mark.parametrize(
    ("count", "session_type", "risk", "configured"),
    list(itertools.product([1, 3, 5], TYPES, ["low", "high"], ["auto", "worktree", "none"])),
)
def test_stale_base_always_runs_in_place(
    count: int, session_type: str, risk: str, configured: str
) -> None:
    result = explain_isolation(
        agent_count=count,
        session_type=session_type,
        collision_risk=risk,
        config_isolation=configured,
        base_is_stale=True,
    )
    assert result.value is Isolation.NONE
    assert "stale" in result.reason


def test_stale_base_reason_names_what_it_overrides() -> None:
    explicit = explain_isolation(
        agent_count=2, session_type="deep", config_isolation="worktree", base_is_stale=True
    )
    assert "overrides explicit isolation = worktree" in explicit.reason
    risky = explain_isolation(
        agent_count=2, session_type="deep", collision_risk="high", base_is_stale=True
    )
    assert "overrides collision risk high" in risky.reason
    table = explain_isolation(agent_count=5, session_type="deep", base_is_stale=True)
    assert "overrides" not in table.reason


def test_enum_inputs_are_accepted() -> None:
    assert (
        resolve_isolation(
            agent_count=3,
            session_type=SessionType.FEATURE,
            collision_risk=CollisionRisk.LOW,
            config_isolation=Isolation.AUTO,
        )
        is Isolation.WORKTREE
    )


def test_explanations_are_pairs_with_reasons() -> None:
    result = explain_isolation(agent_count=3, session_type="housekeeping")
    assert isinstance(result, IsolationResolution)
    value, reason = result
    assert value is Isolation.NONE
    assert "3 agents" in reason and "housekeeping" in reason
    with pytest.raises(AttributeError):
        result.value = Isolation.WORKTREE  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agent_count": 0}, "agent_count must be an integer >= 1"),
        ({"agent_count": -3}, "agent_count must be an integer >= 1"),
        ({"agent_count": True}, "agent_count must be an integer >= 1"),
        ({"agent_count": 2.0}, "agent_count must be an integer >= 1"),
        ({"agent_count": "3"}, "agent_count must be an integer >= 1"),
        ({"session_type": "big"}, "'housekeeping', 'feature', 'deep'"),
        ({"session_type": "Feature"}, "'housekeeping', 'feature', 'deep'"),
        ({"session_type": None}, "session_type must be one of"),
        ({"collision_risk": "extreme"}, "'low', 'medium', 'high'"),
        ({"config_isolation": "worktre"}, "'auto', 'worktree', 'none'"),
        ({"config_isolation": 1}, "isolation must be one of"),
        ({"base_is_stale": "yes"}, "base_is_stale must be True or False"),
    ],
)
def test_invalid_isolation_inputs(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"agent_count": 2, "session_type": "feature", **kwargs}
    with pytest.raises(ConfigurationError, match=message):
        resolve_isolation(**arguments)  # type: ignore[arg-type]


# The whole enforcement matrix (Worktree Isolation 2).
MATRIX = [
    ("worktree", "off", "off"),
    ("worktree", "warn", "warn"),
    ("worktree", "strict", "strict"),
    ("none", "off", "off"),
    ("none", "warn", "strict"),
    ("none", "strict", "strict"),
]


@pytest.mark.parametrize(("isolation", "configured", "expected"), MATRIX)
def test_enforcement_matrix(isolation: str, configured: str, expected: str) -> None:
    result = resolve_enforcement(isolation=isolation, config_enforcement=configured)
    assert result == expected
    assert isinstance(result, Enforcement)
    explained = explain_enforcement(
        isolation=Isolation(isolation), config_enforcement=Enforcement(configured)
    )
    assert isinstance(explained, EnforcementResolution)
    assert explained.value == expected
    assert explained.reason


def test_enforcement_default_is_warn_promoted_in_place() -> None:
    assert resolve_enforcement(isolation="none") is Enforcement.STRICT
    assert resolve_enforcement(isolation="worktree") is Enforcement.WARN
    assert "promoted" in explain_enforcement(isolation="none").reason


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"isolation": "auto"}, "resolved isolation must be one of 'worktree', 'none'"),
        ({"isolation": "shared"}, "resolved isolation must be one of 'worktree', 'none'"),
        ({"isolation": None}, "resolved isolation must be one of"),
        ({"config_enforcement": "hard"}, "'off', 'warn', 'strict'"),
        ({"config_enforcement": False}, "enforcement must be one of"),
    ],
)
def test_invalid_enforcement_inputs(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"isolation": "none", **kwargs}
    with pytest.raises(ConfigurationError, match=message):
        resolve_enforcement(**arguments)  # type: ignore[arg-type]


def test_stale_base_then_enforcement_is_strict() -> None:
    isolation = resolve_isolation(
        agent_count=5, session_type="deep", config_isolation="worktree", base_is_stale=True
    )
    assert resolve_enforcement(isolation=isolation, config_enforcement="warn") == "strict"
