"""The per-agent breaker's small internal records and helpers (not public API)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import PurePath

from coordinator.breakers.signature import output_digest
from coordinator.scope.enforce import ErrorClass

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


class Pending:
    """A call waiting for its result (internal, serializable)."""

    __slots__ = ("command", "key", "paths", "poll", "shown")

    def __init__(
        self, key: str, shown: str, command: str | None, paths: tuple[str, ...], poll: bool
    ) -> None:
        self.key = key
        self.shown = shown
        self.command = command
        self.paths = paths
        self.poll = poll


class Repeat:
    """The loop breaker's memory of one call key: streak and last result."""

    __slots__ = ("digest", "streak", "text")

    def __init__(self, streak: int, text: str | None, digest: str | None) -> None:
        self.streak = streak
        self.text = text  # the last result, digested only when a repeat differs from it
        self.digest = digest

    def result_digest(self) -> str | None:
        if self.digest is None and self.text is not None:
            self.digest = output_digest(self.text)
        return self.digest

    def same_result(self, text: str) -> bool:
        """Whether ``text`` equals the last result (timings aside); remembers ``text``."""
        if text == self.text:
            return True
        same = self.result_digest() == output_digest(text)
        self.text, self.digest = text, None
        return same


def normal_path(path: str) -> str:
    return os.path.normpath(path)


def command_id(command: str) -> str:
    return " ".join(command.split())


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


def is_blocked_note(path: str) -> bool:
    parts = PurePath(path).parts
    return bool(parts) and parts[-1] == "BLOCKED.md" and ".seawall" in parts
