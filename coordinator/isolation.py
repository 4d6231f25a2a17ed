"""Per-wave isolation and scope enforcement, each resolved with its reason.

Isolation, first rule that applies wins:

1. ``base_is_stale=True`` -> ``none``. The dispatcher cannot base a new worktree on the
   current commit (the harness case: a lead agent's tool bases every worktree on the
   session-start commit). A worktree would hand the agent the old code, so the wave runs
   in place, and enforcement is promoted to ``strict`` instead. This beats an explicit
   ``isolation = "worktree"`` and ``collision_risk = "high"`` too: a worktree on a stale
   base is not isolation but wrong code, while in place with strict scope enforcement
   is still a hard barrier. (seawall's own dispatcher bases worktrees on the wave's
   pinned base commit, so it never passes ``True`` for its own worktrees.)
2. An explicit configured ``worktree`` or ``none`` wins over everything below.
3. ``collision_risk = "high"`` -> ``worktree``, even for one or two agents.
4. The agent-count table: <= 2 -> ``none``; 3-4 -> ``none`` for housekeeping,
   ``worktree`` for feature and deep; >= 5 -> ``worktree``.

Enforcement: in place (``none``) promotes ``warn`` to ``strict``
(agents share one tree, so their scopes are all that keeps them apart: the OS sandbox,
the hooks and the post-wave check hold them there) unless enforcement is explicitly ``off``;
a worktree keeps the configured value.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple, TypeVar

from seawall.errors import ConfigurationError
from seawall.model import CollisionRisk, Enforcement, Isolation, SessionType

__all__ = [
    "EnforcementResolution",
    "IsolationResolution",
    "explain_enforcement",
    "explain_isolation",
    "resolve_enforcement",
    "resolve_isolation",
]

_E = TypeVar("_E", bound=StrEnum)


class IsolationResolution(NamedTuple):
    """A resolved isolation (``worktree`` or ``none``) and why, as ``seawall plan`` shows it."""

    value: Isolation
    reason: str


class EnforcementResolution(NamedTuple):
    """A resolved enforcement (``off``, ``warn`` or ``strict``) and why."""

    value: Enforcement
    reason: str


def resolve_isolation(
    *,
    agent_count: int,
    session_type: str | SessionType,
    collision_risk: str | CollisionRisk = "low",
    config_isolation: str | Isolation = "auto",
    base_is_stale: bool = False,
) -> Isolation:
    """Return ``Isolation.WORKTREE`` or ``Isolation.NONE`` for a wave (see the module doc).

    Raises ``ConfigurationError`` naming the allowed values for an unknown or mistyped
    input, and for ``agent_count < 1``.
    """
    return explain_isolation(
        agent_count=agent_count,
        session_type=session_type,
        collision_risk=collision_risk,
        config_isolation=config_isolation,
        base_is_stale=base_is_stale,
    ).value


def explain_isolation(
    *,
    agent_count: int,
    session_type: str | SessionType,
    collision_risk: str | CollisionRisk = "low",
    config_isolation: str | Isolation = "auto",
    base_is_stale: bool = False,
) -> IsolationResolution:
    """Like ``resolve_isolation``, with the reason for the result."""
    count = _positive_int(agent_count, "agent_count")
    kind = _coerce(SessionType, session_type, "session_type")
    risk = _coerce(CollisionRisk, collision_risk, "collision_risk")
    configured = _coerce(Isolation, config_isolation, "isolation")
    stale = _bool(base_is_stale, "base_is_stale")
    if stale:
        return IsolationResolution(Isolation.NONE, _stale_reason(configured, risk))
    if configured is not Isolation.AUTO:
        return IsolationResolution(configured, f"isolation = {configured!s} set explicitly")
    if risk is CollisionRisk.HIGH:
        return IsolationResolution(
            Isolation.WORKTREE, f"collision risk high forces worktrees ({_agents(count)})"
        )
    return _from_table(count, kind)


def resolve_enforcement(
    *, isolation: str | Isolation, config_enforcement: str | Enforcement = "warn"
) -> Enforcement:
    """Return the enforcement a wave runs with, given its resolved isolation.

    ``isolation`` must already be resolved (``worktree`` or ``none``; ``auto`` is an error).
    """
    return explain_enforcement(isolation=isolation, config_enforcement=config_enforcement).value


def explain_enforcement(
    *, isolation: str | Isolation, config_enforcement: str | Enforcement = "warn"
) -> EnforcementResolution:
    """Like ``resolve_enforcement``, with the reason for the result."""
    resolved = _coerce(Isolation, isolation, "resolved isolation", exclude=(Isolation.AUTO,))
    configured = _coerce(Enforcement, config_enforcement, "enforcement")
    if resolved is Isolation.WORKTREE:
        return EnforcementResolution(
            configured, f"enforcement = {configured!s} as configured (worktrees isolate files)"
        )
    if configured is Enforcement.OFF:
        return EnforcementResolution(
            Enforcement.OFF, "enforcement = off set explicitly; in place without a scope barrier"
        )
    if configured is Enforcement.WARN:
        return EnforcementResolution(
            Enforcement.STRICT,
            "in place: warn promoted to strict (the scope is all that keeps agents apart)",
        )
    return EnforcementResolution(Enforcement.STRICT, "enforcement = strict as configured")


def _from_table(count: int, kind: SessionType) -> IsolationResolution:
    """The agent-count table of isolation."""
    agents = _agents(count)
    if count <= 2:
        return IsolationResolution(Isolation.NONE, f"{agents}: small waves run in place")
    if count <= 4 and kind is SessionType.HOUSEKEEPING:
        return IsolationResolution(Isolation.NONE, f"{agents} in a housekeeping session: in place")
    if count <= 4:
        return IsolationResolution(Isolation.WORKTREE, f"{agents} in a {kind!s} session: worktrees")
    return IsolationResolution(Isolation.WORKTREE, f"{agents}: 5 or more always use worktrees")


def _stale_reason(configured: Isolation, risk: CollisionRisk) -> str:
    reason = "in place: the base is stale (a new worktree would not hold the current commit)"
    overridden = []
    if configured is Isolation.WORKTREE:
        overridden.append("explicit isolation = worktree")
    if risk is CollisionRisk.HIGH and configured is Isolation.AUTO:
        overridden.append("collision risk high")
    if overridden:
        reason += "; overrides " + " and ".join(overridden)
    return reason + "; in place, warn enforcement is promoted to strict"


def _agents(count: int) -> str:
    return f"{count} agent" if count == 1 else f"{count} agents"


def _coerce(enum: type[_E], value: object, name: str, *, exclude: tuple[_E, ...] = ()) -> _E:
    """``value`` as a member of ``enum``, or a ConfigurationError naming the allowed values."""
    allowed = [member for member in enum if member not in exclude]
    if isinstance(value, str):
        for member in allowed:
            if value == member.value:
                return member
    names = ", ".join(repr(member.value) for member in allowed)
    raise ConfigurationError(f"{name} must be one of {names}; got {value!r}")


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{name} must be an integer >= 1; got {value!r}")
    return value


def _bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name} must be True or False; got {value!r}")
    return value
