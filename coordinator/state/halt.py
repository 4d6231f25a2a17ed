"""Why a session halted when no breaker tripped: the reason, and the data each reason has.

Four things halt a session besides the wave breaker, and each is a :class:`HaltReason`.
A :class:`Halt` always says what happened (``detail``), in which wave, and the one next
step; the fields after ``next`` belong to one reason each, and a halt that fills a
field of another reason (or leaves out one of its own) is refused, when it is made and
when a ledger holding it is read. The JSON of a halt is flat (``reason``, ``detail``,
``wave``, ``next``, then the reason's own fields), as ``state.json``, ``status --json``
and the lead's documents have always held it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

__all__ = ["Halt", "HaltReason", "HaltedAgent"]


class HaltReason(StrEnum):
    """What halted the session (the wave breaker's trips are its own record)."""

    AGENT_START = "agent-start"  # an agent program could not start: agents, stderr
    CHECKS_FAIL_AT_BASE = "checks-fail-at-base"  # checks_policy block, and the base fails
    RATE_LIMITED = "rate-limited"  # a provider's limit past max_wait: provider, resets_at
    SESSION_TIME = "session-time"  # budgets.session_minutes ran out: budget, elapsed_s, limit_s


@dataclass(frozen=True, slots=True, kw_only=True)
class HaltedAgent:
    """An agent that could not start, as a halt on agent start names it."""

    task: str
    reason: str = ""
    exit_code: int | None = None
    stderr: str = ""


# the reason-specific fields: which reason each belongs to, and which a reason must fill
_OWNER: Mapping[str, HaltReason] = MappingProxyType(
    {
        "agents": HaltReason.AGENT_START,
        "stderr": HaltReason.AGENT_START,
        "budget": HaltReason.SESSION_TIME,
        "elapsed_s": HaltReason.SESSION_TIME,
        "limit_s": HaltReason.SESSION_TIME,
        "provider": HaltReason.RATE_LIMITED,
        "resets_at": HaltReason.RATE_LIMITED,
    }
)
_REQUIRED: Mapping[HaltReason, tuple[str, ...]] = MappingProxyType(
    {
        HaltReason.AGENT_START: ("agents",),
        HaltReason.SESSION_TIME: ("budget", "elapsed_s", "limit_s"),
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Halt:
    """Why the session halted, and the one next step (``next``; None: the usual
    ``seawall resume`` once the cause is gone).

    ``agents`` (every agent that could not start) and ``stderr`` (the first one's
    stderr tail) belong to :attr:`HaltReason.AGENT_START`; ``budget`` (the budget that
    ran out), ``elapsed_s`` and ``limit_s`` to :attr:`HaltReason.SESSION_TIME`;
    ``provider`` and ``resets_at`` (the limit's reset) to :attr:`HaltReason.RATE_LIMITED`. Any
    other combination raises ``ValueError``.
    """

    reason: HaltReason
    detail: str
    wave: int = 0
    next: str | None = None
    agents: tuple[HaltedAgent, ...] = ()
    stderr: str | None = None
    budget: str | None = None
    elapsed_s: float | None = None
    limit_s: float | None = None
    provider: str | None = None
    resets_at: float | None = None  # epoch seconds; None when the provider did not say

    def __post_init__(self) -> None:
        for name, owner in _OWNER.items():
            if owner is not self.reason and getattr(self, name) not in (None, ()):
                raise ValueError(f"a halt for {self.reason} has no {name} (one for {owner} has)")
        for name in _REQUIRED.get(self.reason, ()):
            if getattr(self, name) in (None, ()):
                raise ValueError(f"a halt for {self.reason} needs {name}")
