"""The exit codes of ``seawall``: defined here and nowhere else.

The CLI returns them, ``SessionResult.exit_code`` computes them, the unattended runner
maps them to outcomes, ``--help`` ends with :func:`help_epilog`, and README.md and
docs/sessions.md hold the table :func:`markdown_table` renders (a test checks they agree).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from types import MappingProxyType

__all__ = ["MEANINGS", "ExitCode", "describe", "help_epilog", "markdown_table"]


class ExitCode(IntEnum):
    OK = 0  # every task finished and every merged wave passed its checks
    ERROR = 1  # an error of the caller or the environment; the message says what to change
    USAGE = 2  # a command line seawall does not understand
    HALTED = 3  # the wave breaker (or the session's time budget) halted the session
    CARRYOVER = 4  # finished, with carryover issues for what is left
    NOTHING_SUCCEEDED = 5  # finished, and nothing succeeded
    RATE_LIMITED = 6  # a provider's limit paused agents: halted until its reset
    CHECKS_FAILED = 7  # a wave merged with failing checks, or the base fails them
    AGENT_START = 8  # an agent could not start: its program, or the Ray cluster it runs on
    INTERRUPTED = 130  # Ctrl-C: the session is recorded and resumable


MEANINGS: Mapping[ExitCode, str] = MappingProxyType(
    {
        ExitCode.OK: "every task finished and every merged wave passed its checks",
        ExitCode.ERROR: "an error of the caller or the environment (the message says what "
        "to change)",
        ExitCode.USAGE: "a command line seawall does not understand (the usage says why)",
        ExitCode.HALTED: "the wave breaker halted the session: fix the cause, then "
        "`seawall resume` (or `seawall kill`); or it ran its `budgets.session_minutes`: "
        "`seawall resume` grants as many again",
        ExitCode.CARRYOVER: "finished, with carryover issues for what is left",
        ExitCode.NOTHING_SUCCEEDED: "finished, and nothing succeeded",
        ExitCode.RATE_LIMITED: "a provider's usage or rate limit paused agents and the session "
        'halted (on_limit "halt", or the reset lies past max_wait): the halt names the '
        "provider and the reset time; `seawall resume` after it runs them again",
        ExitCode.CHECKS_FAILED: "the checks failed: a wave merged with failing checks "
        '(checks_policy "warn" or "baseline"), or the base fails them and the session '
        'halted ("block")',
        ExitCode.AGENT_START: "an agent program could not start or died before its first "
        "event, or the Ray cluster it runs on could not be reached (the message names the "
        "address and the cause): the session halted; fix the program or the cluster, then "
        "`seawall resume`",
        ExitCode.INTERRUPTED: "interrupted (Ctrl-C): the session is recorded; the command "
        "printed with it (`seawall resume ...`) continues it",
    }
)


def describe() -> str:
    """The exit codes in one sentence, for ``--help``."""
    return "Exit codes: " + "; ".join(f"{int(code)} {text}" for code, text in MEANINGS.items())


def markdown_table() -> str:
    """The table as README.md and docs/sessions.md hold it, in the order of the codes."""
    rows = ["| code | meaning |", "| --- | --- |"]
    rows += [f"| {int(code)} | {MEANINGS[code]} |" for code in sorted(MEANINGS)]
    return "\n".join(rows)


def help_epilog() -> str:
    """The table as ``seawall --help``, ``run --help`` and ``resume --help`` end."""
    width = max(len(str(int(code))) for code in MEANINGS)
    lines = ["exit codes:"]
    lines += [f"  {int(code):>{width}}  {MEANINGS[code]}" for code in sorted(MEANINGS)]
    return "\n".join(lines)
