"""What the per-agent breaker remembers of an agent's calls: repeats, failure counts,
guard denials and stop notes (shared with the stagnation detectors and the agent watch;
not re-exported from ``seawall.breakers``)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from seawall.breakers.signature import FailurePrint, failure_print, output_digest, same_failure
from seawall.scope.enforce import ErrorClass

EVIDENCE_CHARS = 160


KEY_CHARS = 200  # longer call keys are kept as a digest (bounded memory and state file)


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()


def compact_key(key: str) -> str:
    """A call key as the loop breaker stores it: short keys verbatim, long ones digested."""
    return key if len(key) <= KEY_CHARS else "#" + digest(key)


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…"


Pending = tuple[str, str, str | None, tuple[str, ...], bool]
"""A call waiting for its result: ``(key, tool, command, paths, poll)``: its call key,
what is shown of it, its shell command, the paths it edits, whether it is a poll."""


Seen = tuple[str, bool]
"""The loop breaker's memory of a call key seen once: its result and whether it passed
(a ``Repeat`` is made of it when the key comes again)."""


class Repeat:
    """The loop breaker's memory of one call key: streak and last result.

    Two successful results are the same when their outputs are equal (durations
    aside); two failures when they are the same error (``same_failure``), so one
    added warning line does not make an identical failure look new. Digests are
    computed only when a repeat has to be compared (or saved).
    """

    __slots__ = ("digest", "failed", "failure", "streak", "text")

    def __init__(
        self,
        streak: int,
        text: str | None,
        digest: str | None,
        failure: FailurePrint | None,
        failed: bool,
    ) -> None:
        """``Repeat(1, text, None, None, not ok)`` is a call key seen once, with its result."""
        self.streak = streak
        self.text = text  # the last result, digested only when a repeat differs from it
        self.digest = digest
        self.failure = failure  # the last result's failure print, once computed
        self.failed = failed

    @classmethod
    def of(cls, memory: Repeat | Seen) -> Repeat:
        """The ``Repeat`` of a memory (a key seen once becomes one with a streak of 1)."""
        if isinstance(memory, tuple):
            return cls(1, memory[0], None, None, not memory[1])
        return memory

    def result_digest(self) -> str | None:
        if self.digest is None and self.text is not None and not self.failed:
            self.digest = output_digest(self.text)
        return self.digest

    def failure_print(self) -> FailurePrint | None:
        if self.failure is None and self.failed and self.text is not None:
            self.failure = failure_print(self.text)
        return self.failure

    def same_result(self, text: str, *, ok: bool = True) -> bool:
        """Whether ``text`` equals the last result; remembers ``text``."""
        if not ok:
            before = self.failure_print() if self.failed else None
            printed: FailurePrint | None = None  # of ``text``, kept when computed
            if before is None:
                same = False
            elif text == self.text:
                same, printed = True, before
            else:
                printed = failure_print(text)
                same = same_failure(before, printed)
            self.text, self.digest, self.failure, self.failed = text, None, printed, True
            return same
        if self.failed:  # it failed before and passes now: a new answer
            self.text, self.digest, self.failure, self.failed = text, None, None, False
            return False
        if text == self.text:
            return True
        digest = output_digest(text)
        same = self.result_digest() == digest
        self.text, self.digest = text, digest
        return same


class FailureCounts:
    """How often one command failed with each distinct error (bounded, serializable)."""

    __slots__ = ("clusters",)

    LIMIT = 8  # distinct errors remembered per command; the oldest is forgotten first

    def __init__(self, clusters: list[tuple[FailurePrint, int]] | None = None) -> None:
        self.clusters: list[tuple[FailurePrint, int]] = clusters or []

    def add(self, text: str, exit_code: int | None = None) -> int:
        """Count one failure; returns how many times this same error has been seen."""
        printed = failure_print(text, exit_code)
        for index, (seen, count) in enumerate(self.clusters):
            if same_failure(seen, printed):
                self.clusters[index] = (seen, count + 1)
                return count + 1
        self.clusters.append((printed, 1))  # (the first print of an error stays its own)
        if len(self.clusters) > self.LIMIT:
            del self.clusters[0]
        return 1

    def seen(self, text: str, exit_code: int | None = None) -> bool:
        """Whether this same error was counted before (nothing is counted)."""
        printed = failure_print(text, exit_code)
        return any(same_failure(seen, printed) for seen, _ in self.clusters)


def failed_otherwise(
    failures: dict[str, FailureCounts], key: str, text: str, exit_code: int | None
) -> bool:
    """Whether the command of ``key`` failed otherwise than every time before (a check
    whose failure set changed is progress: the agent is working through it)."""
    counts = failures.get(key)
    return counts is None or not counts.seen(text, exit_code)


def normal_path(path: str) -> str:
    """``os.path.normpath(path)``, told without it for a path that is already normal
    (no empty, ``.`` or ``..`` part, no trailing slash): most paths an agent edits."""
    if path and "//" not in path and "/." not in path and path[0] != "." and path[-1] != "/":
        return path
    return os.path.normpath(path)


_EXIT_LINE = re.compile(r"(?:Exit code|Process exited with code)\s*:?\s*(-?\d+)\s*$")
_GUARD_DENIAL = re.compile("seawall (?:" + "|".join(re.escape(str(c)) for c in ErrorClass) + "): ")


def is_guard_denial(text: str) -> bool:
    """Whether a failed call's text is seawall's guard refusing it (``seawall
    scope-denied: ...``), as the agent CLI passes the hook's reason on."""
    return _GUARD_DENIAL.search(text[:2000]) is not None


def first_line(text: str) -> str:
    """The line of a failed call's output that says what went wrong: the first one, or,
    when that only gives the exit status (Claude Code's ``Exit code 2``), the first line
    after it, with the code kept (``ls: cannot access 'x': No such file (exit 2)``)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "(no output)"
    status = _EXIT_LINE.match(lines[0].strip())
    if status is None or len(lines) == 1:
        return lines[0]
    return f"{lines[1]} (exit {status.group(1)})"


def is_stop_note(path: str, stop_note: Path | None, cwd: Path | None) -> bool:
    """Whether ``path`` (relative to ``cwd``) is exactly the session's BLOCKED.md."""
    if stop_note is None:
        return False
    target = Path(path).expanduser()
    if not target.is_absolute():
        if cwd is None:
            return False
        target = cwd / target
    return os.path.realpath(target) == os.path.realpath(stop_note)
