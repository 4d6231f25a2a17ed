"""What one failed session run printed, reduced to its failure signature.

A broken machine fails every item the same way (an expired token, a CLI that no longer
launches, a full disk), while items that fail for their own reasons fail differently.
The runner records, with each failed attempt, the error line its session printed last
and the signature of its error lines, so the breaker can say whether a chain of
failures is one failure repeated. Lines are taken from the end of the run's output;
seawall's own prefixes (``seawall:``, ``W1 task-id:``) are dropped, since they name the
item and differ from one item to the next while the failure is the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from seawall.breakers.signature import error_signature, signature_digest

__all__ = ["RunFailure", "read_failure", "read_resume_after", "resume_after", "run_failure"]

_TAIL_BYTES = 16_384
_ERROR_LINES = 8
_SHOWN = 200
_RESUME_AFTER = re.compile(r"`seawall resume` after (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC")
_PREFIX = re.compile(r"^(?:seawall:\s*)?(?:(?:error|warning):\s*)?(?:W\d+ [\w.-]+:\s*)?")
_ERRORISH = re.compile(
    r"\b(?:errors?|fail(?:ed|s|ure)?|fatal|cannot|can't|could not|couldn't|denied|refused|"
    r"not found|no such|exception|traceback|timed out|halted|unable|invalid|expired|"
    r"unauthori[sz]ed|no space|killed)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFailure:
    """The last error line a run printed and the signature of its error lines."""

    line: str
    signature: str


def run_failure(output: str) -> RunFailure | None:
    """The failure in a run's ``output`` (its end is what counts); None when it printed
    nothing that reads as an error."""
    raw = (line.strip() for line in output.splitlines())
    marked = (_PREFIX.sub("", line) for line in raw if _ERRORISH.search(line))
    errors = [line for line in marked if line][-_ERROR_LINES:]
    if not errors:
        return None
    text = "\n".join(errors)
    if not error_signature(text):
        return None
    flat = " ".join(errors[-1].split())
    shown = flat if len(flat) <= _SHOWN else flat[: _SHOWN - 1] + "…"
    return RunFailure(line=shown, signature=signature_digest(text))


def read_failure(log: Path, offset: int) -> RunFailure | None:
    """The failure in what was appended to ``log`` from byte ``offset`` on (its last
    16 KiB); None when the file cannot be read or shows no error."""
    output = _tail(log, offset)
    return None if output is None else run_failure(output)


def resume_after(output: str) -> float | None:
    """When a session halted by a provider's limit may be resumed (epoch seconds): the
    reset its halt named (``… Next: `seawall resume` after 2026-12-05 22:16:00 UTC``);
    None when the output names none."""
    found = _RESUME_AFTER.findall(output)
    if not found:
        return None
    return datetime.strptime(found[-1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()


def read_resume_after(log: Path, offset: int) -> float | None:
    """``resume_after`` of what was appended to ``log`` from byte ``offset`` on."""
    output = _tail(log, offset)
    return None if output is None else resume_after(output)


def _tail(log: Path, offset: int) -> str | None:
    try:
        with log.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(offset, size - _TAIL_BYTES))
            data = handle.read()
    except OSError:
        return None
    return data.decode("utf-8", "replace")
