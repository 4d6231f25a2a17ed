"""Four of the five stagnation detectors over one agent's events (git write is in ``gitwrite``).

Each detector belongs to exactly one agent: two agents reading or editing one file is
coordination, never stagnation, so nothing here is shared across agents. Each keeps its
own memory and applies its own rules in its ``observe_*`` methods: a live (mechanical)
detector returns its finding from them the moment it fires; a post-wave (coordinator)
detector returns its findings from ``finish``. A call comes with its turn key
(``seawall.breakers.keys.turn_key``) and its facts (``BackgroundWatch.judge``), derived
once by ``AgentStagnation`` for every detector.
"""

from __future__ import annotations

from collections.abc import Mapping

from seawall.breakers.commands import command_key
from seawall.breakers.keys import PAGINATION_ARGS, canonical_json
from seawall.breakers.memory import FailureCounts, Repeat, Seen
from seawall.breakers.polls import CallFacts, is_status_query
from seawall.codec import JsonView
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
    """A failure of the call itself (a cancelled sibling and a call a person refused
    are not one)."""
    if result.cancelled or result.refused:
        return False
    return result.is_error or (result.exit_code is not None and result.exit_code != 0)


def _pages(arguments: JsonView) -> str:
    """The pagination arguments of a read, as canonical JSON (``{}`` for none)."""
    if PAGINATION_ARGS.isdisjoint(arguments):
        return "{}"
    return canonical_json({n: v for n, v in arguments.items() if n in PAGINATION_ARGS})


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PaginationDetector:
    """Pagination spiral: 3+ reads of one path differing only in pagination arguments,
    with no edit between them, and no edit of that path afterwards (a sequential read
    that ends in an edit of the file is preparation, not a spiral). A read that failed
    read nothing and does not count. Post-wave: its findings come from ``finish``.

    Its memory: each read until its result; per (path, turn key) since the last edit,
    the distinct pagination arguments read (a streak); the streaks that reached the
    threshold (candidates)."""

    __slots__ = ("_agent", "_candidates", "_pending", "_streaks", "_threshold")

    def __init__(self, *, agent: str, threshold: int = 3) -> None:
        self._agent = agent
        self._threshold = threshold
        self._streaks: dict[tuple[str, str], set[str]] = {}
        self._candidates: dict[tuple[str, str], set[str]] = {}
        self._pending: dict[str, tuple[tuple[str, str], str]] = {}

    def human_turn(self) -> None:
        """A person spoke: the reads after it answer them, not the reads before."""
        self._streaks.clear()

    def observe_call(self, call: ToolCall, key: str, facts: CallFacts) -> None:
        """An edit ends every streak and clears the candidates of the paths it edits; a
        read waits for its result."""
        if call.name in EDIT_TOOLS:
            self._streaks.clear()
            if self._candidates:
                edited = set(facts.paths)
                for candidate in [c for c in self._candidates if c[0] in edited]:
                    del self._candidates[candidate]
        elif facts.read is not None:
            self._pending[call.call_id] = ((facts.read, key), _pages(call.arguments))

    def observe_result(self, result: ToolResult) -> None:
        """A read that ran and passed extends the streak of its path and key."""
        read = self._pending.pop(result.call_id, None)
        if read is None or result.cancelled or failed(result):
            return
        streak_id, pages = read
        streak = self._streaks.setdefault(streak_id, set())
        streak.add(pages)
        if len(streak) >= self._threshold:
            self._candidates[streak_id] = streak

    def finish(self) -> list[Finding]:
        return [self._finding(path, key, pages) for (path, key), pages in self._candidates.items()]

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
    Post-wave: its findings come from ``finish``.

    Its memory: the current run of one key (how many calls, and the last result while
    the run has had one), each counted call's key until its result, and the longest run
    that reached the threshold per key.
    """

    __slots__ = ("_agent", "_best", "_key", "_last", "_pending", "_run", "_threshold")

    def __init__(self, *, agent: str, threshold: int = 3) -> None:
        self._agent = agent
        self._threshold = threshold
        self._key = ""
        self._run = 0
        self._last: Repeat | Seen | None = None
        self._pending: dict[str, str] = {}
        self._best: dict[str, int] = {}

    def observe_call(self, call: ToolCall, key: str, facts: CallFacts) -> None:
        """A call that is no wait extends the run of its turn key ``key``, or starts one."""
        if facts.wait:
            return
        if key == self._key:
            self._run += 1
        else:
            self._key, self._run, self._last = key, 1, None
        self._pending[call.call_id] = key
        if self._run >= self._threshold and self._run > self._best.get(key, 0):
            self._best[key] = self._run

    def human_turn(self) -> None:
        """A person spoke: the run ends here (runs that reached the threshold stay)."""
        self._key, self._run, self._last = "", 0, None

    def observe_result(self, result: ToolResult) -> None:
        """A call of the current run answered: one that never ran (cancelled) repeats
        nothing; a repeat that saw a new answer was a wait, and the run starts again."""
        key = self._pending.pop(result.call_id, None)
        if key is None or key != self._key:
            return
        if result.cancelled:
            self._shorten_best(key)
            self._run -= 1
            return
        ok = not failed(result)
        if self._last is None:
            self._last = (result.text, ok)
            return
        last = self._last = Repeat.of(self._last)
        if not last.same_result(result.text, ok=ok):
            self._shorten_best(key)
            self._run = 1

    def _shorten_best(self, key: str) -> None:
        """The current run loses its last call: so does the best run of ``key`` when the
        current run is the one that set it."""
        if self._best.get(key) != self._run:
            return
        best = self._best[key] - 1
        if best >= self._threshold:
            self._best[key] = best
        else:
            del self._best[key]

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
            for key, run in self._best.items()
        ]


class ErrorEchoDetector:
    """Error echo: the same error 3 times with the same fix attempted (live). Waits
    (a status query answering "not yet", a poll of a background job) echo nothing."""

    __slots__ = ("_agent", "_counts", "_fired", "_pending", "_threshold")

    def __init__(self, *, agent: str, threshold: int = 3) -> None:
        self._agent = agent
        self._threshold = threshold
        self._pending: dict[str, tuple[ToolCall, str]] = {}
        self._counts: dict[str, FailureCounts] = {}
        self._fired: list[Finding] = []

    def observe_call(self, call: ToolCall, key: str, facts: CallFacts | None = None) -> None:
        """Keep ``call`` and its turn key ``key`` until its result (not a wait's)."""
        if facts is not None and facts.wait:
            return
        self._pending[call.call_id] = (call, key)

    def observe_result(self, result: ToolResult) -> Finding | None:
        """The finding when this failure's error reached the threshold for its fix."""
        pending = self._pending.pop(result.call_id, None)
        if pending is None or not failed(result) or _status_answer(pending[0]):
            return None
        fix = _fix_key(*pending)
        count = self._counts.setdefault(fix, FailureCounts()).add(result.text, result.exit_code)
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


def _status_answer(call: ToolCall) -> bool:
    """A status query (``gh pr checks``): its non-zero exit is an answer, not an error."""
    if call.name not in SHELL_TOOLS:
        return False
    command = shell_command(call)
    return command is not None and is_status_query(command)


def _fix_key(call: ToolCall, key: str) -> str:
    """What "the same fix" means: for an edit, the file and the text it tries to
    replace (a changed replacement is a trivial variant); for a command, the command
    as ``command_key`` reads it (blank space, quoting and flag order do not make
    another attempt); otherwise the turn key ``key``."""
    if call.name in EDIT_TOOLS:
        old = _old_strings(call.arguments)
        return f"{call.name}:{','.join(edited_paths(call))}:{' '.join(old.split())}"
    if call.name in SHELL_TOOLS:
        return f"{call.name}:{command_key(shell_command(call) or '')}"
    return key


def _old_strings(arguments: JsonView) -> str:
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
