"""Four of the five stagnation detectors over one agent's events (git write is in ``gitwrite``).

Each detector belongs to exactly one agent: two agents reading or editing one file is
coordination, never stagnation, so nothing here is shared across agents. ``observe``
returns a finding the moment a live (mechanical) pattern fires; ``finish`` returns the
post-wave (coordinator) findings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seawall.breakers._memory import FailureCounts, Repeat, Seen
from seawall.breakers.commands import command_key
from seawall.breakers.keys import turn_key
from seawall.events import (
    EDIT_TOOLS,
    SHELL_TOOLS,
    Message,
    ToolCall,
    ToolResult,
    edited_paths,
    shell_command,
)
from seawall.model import Status
from seawall.stagnation.finding import (
    Finding,
    Pattern,
    Source,
    Verdict,
    classify_error,
)
from seawall.status_parsing import parse_status

__all__ = [
    "ErrorEchoDetector",
    "PaginationDetector",
    "StatusPartialDetector",
    "TurnKeyDetector",
    "failed",
]


def failed(result: ToolResult) -> bool:
    """A failure of the call itself (a cancelled sibling is not one)."""
    if result.cancelled:
        return False
    return result.is_error or (result.exit_code is not None and result.exit_code != 0)


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PaginationDetector:
    """Pagination spiral: 3+ reads of one path differing only in pagination arguments,
    with no edit between them, and no edit of that path afterwards (a sequential read
    that ends in an edit of the file is preparation, not a spiral). A read that failed
    read nothing and does not count.

    Its memory; ``AgentStagnation`` feeds it, in one pass with the other detectors:
    ``pending`` holds each read until its result, ``streaks`` the distinct pagination
    argument sets per (path, read key without pagination) since the last edit, and
    ``candidates`` the streaks that reached the threshold."""

    __slots__ = ("_agent", "candidates", "pending", "streaks", "threshold")

    def __init__(self, *, agent: str, threshold: int = 3) -> None:
        self._agent = agent
        self.threshold = threshold
        self.streaks: dict[tuple[str, str], set[str]] = {}
        self.candidates: dict[tuple[str, str], set[str]] = {}
        self.pending: dict[str, tuple[tuple[str, str], str]] = {}

    def edited(self, paths: tuple[str, ...]) -> None:
        """An edit: it ends every streak, and clears the candidates of the paths it edits."""
        self.streaks.clear()
        if self.candidates:
            edited = set(paths)
            for candidate in [c for c in self.candidates if c[0] in edited]:
                del self.candidates[candidate]

    def finish(self) -> list[Finding]:
        return [self._finding(path, key, pages) for (path, key), pages in self.candidates.items()]

    def _finding(self, path: str, key: str, pages: set[str]) -> Finding:
        tool = key.split(":", 1)[0]
        shown = ", ".join(sorted(pages)[:6])
        return Finding(
            agent=self._agent,
            pattern=Pattern.PAGINATION_SPIRAL,
            source=Source.COORDINATOR,
            verdict=Verdict.STAGNANT,
            occurrences=len(pages),
            evidence=f"{tool} paged through {path} {len(pages)} times ({_short(shown)}) "
            "and never edited it",
            subject=path,
        )


class TurnKeyDetector:
    """Turn-key repetition: 3 identical consecutive turn keys (pagination stripped).

    A repeat whose result differs from the one before (durations aside; a clock time
    or a progress line is a new answer) saw something new: it is a wait and starts the
    count again. Polls and waits are exempt: asking a background task for its output,
    reading (through Read or the shell) a file a background command writes, sleeping.

    Its memory; ``AgentStagnation`` feeds it: the current run of one ``key`` (``run``
    calls, the last result in ``last``: as it came while the run has had one), each
    counted call's key until its result (``pending``), and the longest run that reached
    the threshold per key (``best``).
    """

    __slots__ = ("_agent", "best", "key", "last", "pending", "run", "threshold")

    def __init__(self, *, agent: str, threshold: int = 3) -> None:
        self._agent = agent
        self.threshold = threshold
        self.key = ""
        self.run = 0
        self.last: Repeat | Seen | None = None
        self.pending: dict[str, str] = {}
        self.best: dict[str, int] = {}

    def drop_best(self, key: str) -> None:
        """The run that reached the threshold for ``key`` was a wait: one call less."""
        best = self.best[key] - 1
        if best >= self.threshold:
            self.best[key] = best
        else:
            del self.best[key]

    def finish(self) -> list[Finding]:
        return [
            Finding(
                agent=self._agent,
                pattern=Pattern.TURN_KEY_REPETITION,
                source=Source.COORDINATOR,
                verdict=Verdict.SPIRAL,
                occurrences=run,
                evidence=f"the same call ran {run} times in a row with nothing else between: "
                f"{_short(key)}",
                subject=key,
            )
            for key, run in self.best.items()
        ]


class ErrorEchoDetector:
    """Error echo: the same error 3 times with the same fix attempted (live).

    ``AgentStagnation`` keeps each call (with its turn key) in ``pending`` until its
    result, and hands the failed ones to ``observe_result``."""

    __slots__ = ("_agent", "_counts", "_fired", "_threshold", "pending")

    def __init__(self, *, agent: str, threshold: int = 3) -> None:
        self._agent = agent
        self._threshold = threshold
        self.pending: dict[str, tuple[ToolCall, str | None]] = {}
        self._counts: dict[str, FailureCounts] = {}
        self._fired: list[Finding] = []

    def observe_result(self, result: ToolResult) -> Finding | None:
        """A failed result: the finding when its error reached the threshold."""
        pending = self.pending.pop(result.call_id, None)
        if pending is None or not failed(result):
            return None
        fix = _fix_key(*pending)
        count = self._counts.setdefault(fix, FailureCounts()).add(result.text)
        if count != self._threshold:
            return None
        finding = Finding(
            agent=self._agent,
            pattern=Pattern.ERROR_ECHO,
            source=Source.TAIL,
            verdict=Verdict.FAILED,
            occurrences=count,
            evidence=f"the same error {count} times for the same attempt "
            f"({_short(fix, 80)}): {_short(_first_line(result.text))}",
            error_class=classify_error(result.text, exit_code=result.exit_code),
            subject=fix,
        )
        self._fired.append(finding)
        return finding


def _fix_key(call: ToolCall, key: str | None) -> str:
    """What "the same fix" means: for an edit, the file and the text it tries to
    replace (a changed replacement is a trivial variant); for a command, the command
    as ``command_key`` reads it (blank space, quoting and flag order do not make
    another attempt); otherwise the turn key."""
    if call.name in EDIT_TOOLS:
        old = _old_strings(call.arguments)
        return f"{call.name}:{','.join(edited_paths(call))}:{' '.join(old.split())}"
    if call.name in SHELL_TOOLS:
        return f"{call.name}:{command_key(shell_command(call) or '')}"
    return key if key is not None else turn_key(call.name, call.arguments)


def _old_strings(arguments: Mapping[str, Any]) -> str:
    old = arguments.get("old_string")
    if isinstance(old, str):
        return old
    edits = arguments.get("edits")
    if isinstance(edits, list):
        return "\x1f".join(
            str(edit.get("old_string", "")) for edit in edits if isinstance(edit, Mapping)
        )
    return ""


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return "(no output)"


class StatusPartialDetector:
    """Status-partial: the agent's own ``STATUS: partial|failed`` seen live, once."""

    __slots__ = ("_agent", "finding", "status")

    def __init__(self, *, agent: str) -> None:
        self._agent = agent
        self.finding: Finding | None = None
        self.status: Status | None = None

    def observe_message(self, message: Message) -> Finding | None:
        text = message.text
        if "tatus" not in text and "TATUS" not in text:
            return None
        report = parse_status(text)
        if report.inferred:
            return None
        self.status = report.status
        if report.status not in (Status.PARTIAL, Status.FAILED) or self.finding is not None:
            return None
        self.finding = Finding(
            agent=self._agent,
            pattern=Pattern.STATUS_PARTIAL,
            source=Source.TAIL,
            verdict=Verdict.PARTIAL if report.status is Status.PARTIAL else Verdict.FAILED,
            occurrences=1,
            evidence=_short(f"STATUS: {report.status.value} — {report.summary}", 200),
            subject=report.status.value,
        )
        return self.finding
