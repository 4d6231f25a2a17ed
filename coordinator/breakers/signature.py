"""Error signatures: the same failure, told apart from a different one.

A build or test run prints noise that changes on every run (timestamps, durations,
temporary paths, object ids, line numbers). ``error_signature`` strips that noise so
"the same error again" compares equal and "a different error" does not. The wave
breaker's identical-failure trigger depends on it: a build failing differently three
times is iteration, failing identically twice is a stall.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import NewType

__all__ = [
    "FailurePrint",
    "drop_noisy_lines",
    "error_signature",
    "failure_print",
    "output_digest",
    "same_failure",
    "signature_digest",
]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_TIMESTAMP = re.compile(
    r"(?=\d)(?:\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b)",
    re.IGNORECASE,
)
_DURATION = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b"
    r"|\b(?:took|elapsed|duration|finished in|completed in|time:)\b",
    re.IGNORECASE,
)
_DURATION_TOKEN = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|mins?|minutes?)\b", re.IGNORECASE
)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# what makes a line noise; every one starts with a digit, a letter of the keywords, or
# (a URL) holds "://": the lookahead and the "://" test only skip places it cannot start
_NOISE = re.compile(rf"(?=[\dtedfc])(?:{_DURATION.pattern})", re.IGNORECASE)
_NOISE_OR_URL = re.compile(rf"{_URL.pattern}|{_DURATION.pattern}", re.IGNORECASE)
_DURATION_ONLY = re.compile(f"(?=\\d)(?:{_DURATION_TOKEN.pattern})", re.IGNORECASE)
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_HEX = re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b")
# a path: a blank-delimited word with a slash in it, up to punctuation (linear time)
_PATH = re.compile(r"(?<![^\s(\"'=\[{<,])[^\s/\\(\"'=\[\]{}<>,]*?[\\/][^\s,;:'\"()\[\]{}<>]*")
_DIGITS = re.compile(r"\d+")


_SIGNATURE_CHARS = 2048  # head and tail kept of a longer output; the middle is noise
_OUTPUT_CHARS = 16384
_SHORT_OUTPUT = 64


def error_signature(text: str) -> str:
    """Normalize an error text into a signature that survives run-to-run noise.

    Strips ANSI colour and timestamps, drops every line that carries a duration or a
    URL, lowercases, masks UUIDs, hex ids, paths and digit runs, and collapses blank
    space. Two failures with equal signatures are "the same error". Of a very long
    output only the first and last 2 KiB count.
    """
    if len(text) > 2 * _SIGNATURE_CHARS:
        text = text[:_SIGNATURE_CHARS] + "\n" + text[-_SIGNATURE_CHARS:]
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if ":" in text:  # every timestamp has one
        text = _TIMESTAMP.sub("", text)
    text = drop_noisy_lines(text).lower()
    if "-" in text:  # every UUID has one
        text = _UUID.sub("<uuid>", text)
    text = _HEX.sub("<hex>", text)
    if "/" in text or "\\" in text:  # every path has one
        text = _PATH.sub("<path>", text)
    text = _DIGITS.sub("<n>", text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def drop_noisy_lines(text: str) -> str:
    """``text`` without the lines that carry a duration or a URL, each with its newline.

    A line goes from its start to the end of the line its first noise ends on: a
    duration whose number ends one line and unit starts the next (``5\\nms``) takes
    both lines."""
    noise = _NOISE_OR_URL if "://" in text else _NOISE
    found = noise.search(text)
    if found is None:
        return text
    parts: list[str] = []
    kept = 0
    while found is not None:
        parts.append(text[kept : text.rfind("\n", 0, found.start()) + 1])
        end = text.find("\n", found.end())
        kept = len(text) if end < 0 else end + 1
        found = noise.search(text, kept)
    parts.append(text[kept:])
    return "".join(parts)


@lru_cache(maxsize=256)
def signature_digest(text: str) -> str:
    """A short stable digest of ``error_signature(text)``, for state files and records."""
    return hashlib.sha256(error_signature(text).encode("utf-8")).hexdigest()[:16]


FailurePrint = NewType("FailurePrint", frozenset[str])
"""The normalized lines of one failure's output, each as a short digest."""

_PRINT_LINES = 64  # distinct lines kept of one failure (head first): bounded state
_NEAR_SHARE = 0.8  # of the larger print's lines that must be shared to be "the same"


@lru_cache(maxsize=256)
def failure_print(text: str) -> FailurePrint:
    """The lines of ``error_signature(text)`` as a set of short digests (at most 64)."""
    lines: set[str] = set()
    for line in error_signature(text).splitlines():
        lines.add(hashlib.blake2b(line.encode("utf-8"), digest_size=5).hexdigest())
        if len(lines) >= _PRINT_LINES:
            break
    return FailurePrint(frozenset(lines))


def same_failure(first: FailurePrint, second: FailurePrint) -> bool:
    """Whether two failures are the same error: equal signatures, or one with at most
    one line the other lacks (an added warning), or 80 % of the larger one's lines
    shared. A wholly different error shares almost nothing and stays different."""
    if first == second:
        return True
    shared = len(first & second)
    if not shared:
        return False
    larger = max(len(first), len(second))
    if larger - shared <= 1 and min(len(first), len(second)) == shared:
        return True
    return shared >= _NEAR_SHARE * larger


def output_digest(text: str) -> str:
    """A digest of a tool's output that ignores colour and durations only.

    Lighter than ``error_signature``: "20% done" and "40% done" differ (the output
    changed), "5 passed in 0.31s" and "5 passed in 0.29s" do not. A clock time is
    content: polling ``date`` or a job's progress sees a new answer each time (a wait,
    not a loop). Outputs over 16 KiB are compared as they are (a difference then
    counts as a change: a wait, never a loop).
    """
    if len(text) > _OUTPUT_CHARS:
        return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    text = _DURATION_ONLY.sub("", text)
    if len(text) < _SHORT_OUTPUT:
        return "=" + text  # short enough to keep as it is
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()
