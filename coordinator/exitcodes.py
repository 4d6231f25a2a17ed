"""The exit codes of ``seawall run`` and ``seawall resume``: defined here and nowhere else.

The CLI returns them, ``SessionResult.exit_code`` computes them, the unattended runner
maps them to outcomes, and the docs and ``run --help`` list them from :data:`MEANINGS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from types import MappingProxyType

__all__ = ["MEANINGS", "ExitCode", "describe"]


class ExitCode(IntEnum):
    OK = 0  # every task finished and every merged wave passed its checks
    ERROR = 1  # an error of the caller or the environment; the message says what to change
    HALTED = 3  # the wave breaker halted the session
    CARRYOVER = 4  # finished, with carryover issues for what is left
    NOTHING_SUCCEEDED = 5  # finished, and nothing succeeded
    RATE_LIMITED = 6  # every failure was a provider rate limit
    CHECKS_FAILED = 7  # a wave merged with failing checks, or the base fails them
    AGENT_START = 8  # an agent program could not start or died before its first event


MEANINGS: Mapping[ExitCode, str] = MappingProxyType(
    {
        ExitCode.OK: "every task finished and every merged wave passed its checks",
        ExitCode.ERROR: "an error of the caller or the environment (the message says what "
        "to change)",
        ExitCode.HALTED: "the wave breaker halted the session: fix the cause, then "
        "`seawall resume` (or `seawall kill`)",
        ExitCode.CARRYOVER: "finished, with carryover issues for what is left",
        ExitCode.NOTHING_SUCCEEDED: "finished, and nothing succeeded",
        ExitCode.RATE_LIMITED: "nothing succeeded and every failure was a provider rate limit",
        ExitCode.CHECKS_FAILED: "the checks failed: a wave merged with failing checks "
        '(checks_policy "warn" or "baseline"), or the base fails them and the session '
        'halted ("block")',
        ExitCode.AGENT_START: "an agent program could not start or died before its first "
        "event: the session halted; fix the program, then `seawall resume`",
    }
)


def describe() -> str:
    """The exit codes in one sentence, for ``--help``."""
    return "Exit codes: " + "; ".join(f"{int(code)} {text}" for code, text in MEANINGS.items())
