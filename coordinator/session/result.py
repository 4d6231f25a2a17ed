"""How a session ended: the result ``Session.run`` returns and the exit code it maps to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from seawall.breakers.wave import WaveBreakerState
from seawall.exitcodes import ExitCode
from seawall.state.ledger import Halt, HaltReason, SessionPhase

__all__ = ["HALT_CODES", "SessionResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionResult:
    """How a session ended (or paused). ``exit_code`` is what ``seawall run`` returns.

    ``breaker`` is the wave breaker's state (armed, with no counts, before the first
    wave was fed to it); ``halt`` why the session halted when no breaker tripped (a
    provider's limit past ``max_wait`` among them: exit 6, see ``seawall.session.limits``)."""

    session: str
    phase: SessionPhase
    waves: int
    done: tuple[str, ...]
    abandoned: tuple[str, ...]
    state_md: Path
    breaker: WaveBreakerState = field(default_factory=WaveBreakerState)
    halt: Halt | None = None
    report: Path | None = None  # the session's HTML report, once written
    merged: int = 0  # agents whose work was merged, over all waves
    unmerged: tuple[str, ...] = ()  # tasks reviewed in a wave that halted before its merge
    checks_failed: tuple[int, ...] = ()  # waves that merged with failing checks

    @property
    def exit_code(self) -> int:
        """What ``seawall run`` returns; the codes and their meanings are
        :class:`seawall.exitcodes.ExitCode`."""
        if self.phase is SessionPhase.HALTED:
            return ExitCode.HALTED if self.halt is None else HALT_CODES[self.halt.reason]
        if self.checks_failed:
            return ExitCode.CHECKS_FAILED
        if not self.abandoned:
            return ExitCode.OK
        if self.done:
            return ExitCode.CARRYOVER
        return ExitCode.NOTHING_SUCCEEDED


HALT_CODES: Mapping[HaltReason, ExitCode] = MappingProxyType(
    {
        HaltReason.AGENT_START: ExitCode.AGENT_START,
        HaltReason.CHECKS_FAIL_AT_BASE: ExitCode.CHECKS_FAILED,
        HaltReason.RATE_LIMITED: ExitCode.RATE_LIMITED,
        HaltReason.SESSION_TIME: ExitCode.HALTED,
    }
)
"""The exit code of a session halted for each reason (a tripped wave breaker: 3)."""
