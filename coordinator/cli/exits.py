"""The exit codes of ``seawall``: one table, rendered into ``--help``, README and docs.

Every number a command returns for a session comes from here; the README and
``docs/sessions.md`` hold the table as :func:`markdown_table` renders it, and a test
checks that they agree.
"""

from __future__ import annotations

__all__ = [
    "ALL_DONE",
    "CARRYOVERS",
    "ERROR",
    "EXIT_CODES",
    "HALTED",
    "INTERRUPTED",
    "NOTHING_SUCCEEDED",
    "RATE_LIMITED",
    "USAGE",
    "ExitCode",
    "help_epilog",
    "markdown_table",
]


class ExitCode:
    """One exit code and what it means (a plain class: the CLI imports this at start-up)."""

    __slots__ = ("code", "meaning")

    def __init__(self, code: int, meaning: str) -> None:
        self.code = code
        self.meaning = meaning


ALL_DONE = 0
ERROR = 1
USAGE = 2
HALTED = 3
CARRYOVERS = 4
NOTHING_SUCCEEDED = 5
RATE_LIMITED = 6
INTERRUPTED = 130

EXIT_CODES: tuple[ExitCode, ...] = (
    ExitCode(ALL_DONE, "every task finished (or the plan was already finished)"),
    ExitCode(ERROR, "an error of the caller or the environment: the message says what to change"),
    ExitCode(USAGE, "a command line seawall does not understand"),
    ExitCode(HALTED, "the wave breaker halted the session: fix the cause, then `seawall resume`"),
    ExitCode(CARRYOVERS, "finished, with carryover issues for what is left"),
    ExitCode(NOTHING_SUCCEEDED, "finished, and nothing succeeded"),
    ExitCode(RATE_LIMITED, "halted by a provider rate limit: `seawall resume` once it resets"),
    ExitCode(INTERRUPTED, "interrupted (Ctrl-C): the session is recorded, `seawall resume` it"),
)


def markdown_table() -> str:
    """The table as it appears in README.md and docs/sessions.md."""
    rows = ["| code | meaning |", "| --- | --- |"]
    rows += [f"| {entry.code} | {entry.meaning} |" for entry in EXIT_CODES]
    return "\n".join(rows)


def help_epilog() -> str:
    """The table as ``seawall run --help`` and ``seawall resume --help`` end."""
    width = max(len(str(entry.code)) for entry in EXIT_CODES)
    lines = ["exit codes:"]
    lines += [f"  {entry.code:>{width}}  {entry.meaning}" for entry in EXIT_CODES]
    return "\n".join(lines)
