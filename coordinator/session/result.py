"""How a session ended: the result ``Session.run`` returns and the exit code it maps to."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from seawall.breakers.wave import WaveBreakerState
from seawall.exitcodes import ExitCode
from seawall.model import Status
from seawall.state.ledger import Halt, HaltReason, SessionPhase, SessionState

__all__ = ["HALT_CODES", "SessionResult", "rate_limited"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionResult:
    """How a session ended (or paused). ``exit_code`` is what ``seawall run`` returns.

    ``breaker`` is the wave breaker's state (armed, with no counts, before the first
    wave was fed to it); ``halt`` why the session halted when no breaker tripped."""

    session: str
    phase: SessionPhase
    waves: int
    done: tuple[str, ...]
    abandoned: tuple[str, ...]
    state_md: Path
    breaker: WaveBreakerState = field(default_factory=WaveBreakerState)
    rate_limited: bool = False
    halt: Halt | None = None
    report: Path | None = None  # the session's HTML report, once written
    merged: int = 0  # agents whose work was merged, over all waves
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
        return ExitCode.RATE_LIMITED if self.rate_limited else ExitCode.NOTHING_SUCCEEDED


HALT_CODES: Mapping[HaltReason, ExitCode] = MappingProxyType(
    {
        HaltReason.AGENT_START: ExitCode.AGENT_START,
        HaltReason.CHECKS_FAIL_AT_BASE: ExitCode.CHECKS_FAILED,
        HaltReason.RATE_LIMITED: ExitCode.RATE_LIMITED,
        HaltReason.SESSION_TIME: ExitCode.HALTED,
    }
)
"""The exit code of a session halted for each reason (a tripped wave breaker: 3)."""


_RATE_LIMIT = re.compile(
    r"rate.?limit|\b429\b|too many requests|overloaded|usage limit", re.IGNORECASE
)


def rate_limited(state: SessionState) -> bool:
    """Whether every failed agent of the last wave failed on a provider rate limit."""
    wave = state.current_wave
    if wave is None:
        return False
    failed = [a for a in wave.agents if a.status not in (Status.DONE, Status.NO_TESTS_NEEDED)]
    return bool(failed) and all(
        _RATE_LIMIT.search(f"{a.final_text}\n{a.error_signature}\n{a.reason}") for a in failed
    )
