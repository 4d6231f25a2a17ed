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
    "failure_identifiers",
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
"""What identifies one failure, each part a short digest: the error's own identifiers
(``!``-prefixed, counted: a second identical one is another entry), its exit code
(``^``-prefixed), and its normalized lines (the whole-text fallback)."""

_PRINT_LINES = 64  # distinct lines kept of one failure (head first): bounded state
_PRINT_IDS = 64  # identifiers kept of one failure
_NEAR_SHARE = 0.8  # of the larger print's lines that must be shared to be "the same"

# where an error is: ``path:line[:col][:code]`` or ``path(line,col)``; a path has a
# file extension, so ``12:30:01`` and ``http://host:80`` are no locations
_LOCATION = re.compile(
    r"(?P<path>[\w.@+~-]*[\w@+~-]\.[A-Za-z][\w]{0,7})"
    r"(?::(?P<line>\d+)(?::(?P<col>\d+))?|\((?P<pline>\d+)(?:,(?P<pcol>\d+))?\))"
    r"(?::(?P<code>[A-Za-z_][\w-]*)\b)?(?P<rest>[^\n]*)"
)
# an error code: TS2322, E0308, F401, SC2086, CS0103, mypy's ``[arg-type]`` at the end
_CODE = re.compile(r"\b(?:[A-Z]{1,4}\d{3,5}|[A-Z]\d{4})\b|\[(?P<bracket>[a-z][a-z-]+)\]\s*$")
# a test that failed, by its id: pytest node ids, ``--- FAIL: TestX``, ExUnit's
# ``1) test name (Module)``, ``FAIL path`` (jest, vitest)
_TEST_ID = re.compile(
    r"(?P<node>[\w./-]+\.py::[\w\[\]:.-]+)"
    r"|^--- FAIL: (?P<go>\S+)"
    r"|^\s*\d+\) test (?P<ex>.+?) \((?P<exmod>[\w.]+)\)"
    r"|^\s*FAIL\s+(?P<js>\S+\.\w+)",
    re.MULTILINE,
)
# an exception by its type and message: ``ValueError: ...``, Elixir's ``** (KeyError) ...``
_EXCEPTION = re.compile(
    r"^\s*(?:\*\* \((?P<ex>[\w.]+)\)|(?P<py>(?:[\w]+\.)*[A-Z]\w*(?:Error|Exception)))"
    r":?\s*(?P<message>[^\n]*)",
    re.MULTILINE,
)
_EXIT_STATUS = re.compile(r"\A\s*(?:Exit code|Process exited with code)\s*:?\s*(-?\d+)\s*$", re.M)
# boilerplate a tool prints before its error, the same on every run: warnings and
# notices; a failure made only of them still compares by them
_WARNING_LINE = re.compile(
    r"^\s*(?:\S+\s+)?\[?(?:warn(?:ing)?\b|\w*warning:|level=warn|notice\b|note:|deprecat)",
    re.IGNORECASE,
)


def _identity_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=5).hexdigest()


def _message_words(text: str) -> str:
    """A message as an identity keeps its words: digits, paths and ids masked."""
    text = text.lower()
    text = _UUID.sub("<uuid>", text)
    text = _HEX.sub("<hex>", text)
    if "/" in text or "\\" in text:
        text = _PATH.sub("<path>", text)
    return " ".join(_DIGITS.sub("<n>", text).split())[:160]


def failure_identifiers(text: str) -> list[str]:
    """The error's own identifiers in ``text``, in order: each location of an error as
    ``file:code`` (its message when it has no code; its line only when it has
    neither: a line moved by an edit above it is the same error), failed test ids,
    exception types with their messages and compiler error codes. Warning lines are
    boilerplate and give none. Empty when the text names no identifier."""
    found: list[str] = []
    for line in text.splitlines():
        if not line or _WARNING_LINE.match(line) is not None:
            continue
        if ":" not in line and "(" not in line and "FAIL" not in line:
            continue
        location = _LOCATION.search(line)
        if location is not None:
            name = location["path"].rsplit("/", 1)[-1].lower()
            rest = location["rest"]
            code = location["code"]
            if code is None:
                coded = _CODE.search(rest)
                if coded is not None:
                    code = coded["bracket"] or coded.group(0)
            if code is not None:
                found.append(f"at:{name}:{code.lower()}")
            elif rest.strip(" :-"):
                found.append(f"at:{name}:{_message_words(rest)}")
            else:
                found.append(f"at:{name}:{location['line'] or location['pline']}")
            continue
        test = _TEST_ID.search(line)
        if test is not None:
            node = test["node"] or test["go"] or test["js"]
            found.append(f"test:{node or test['exmod'] + '.' + test['ex']}")
            continue
        exception = _EXCEPTION.match(line)
        if exception is not None:
            kind = exception["ex"] or exception["py"]
            found.append(f"raise:{kind}:{_message_words(exception['message'])}")
            continue
        coded = _CODE.search(line)
        if coded is not None and "error" in line.lower():
            found.append(f"code:{(coded['bracket'] or coded.group(0)).lower()}")
    return found


def _exit_status(text: str) -> int | None:
    status = _EXIT_STATUS.match(text[:64])
    return None if status is None else int(status.group(1))


@lru_cache(maxsize=256)
def failure_print(text: str, exit_code: int | None = None) -> FailurePrint:
    """What identifies a failure (see ``FailurePrint``): its identifiers, its exit
    code (``exit_code``, else Claude Code's ``Exit code N`` first line) and the lines
    of ``error_signature(text)`` without warnings, each as a short digest."""
    parts: set[str] = set()
    if exit_code is None:
        exit_code = _exit_status(text)
    if exit_code is not None:
        parts.add(f"^{exit_code}")
    if len(text) > 2 * _SIGNATURE_CHARS:
        scanned = text[:_SIGNATURE_CHARS] + "\n" + text[-_SIGNATURE_CHARS:]
    else:
        scanned = text
    if "\x1b" in scanned:
        scanned = _ANSI.sub("", scanned)
    seen: dict[str, int] = {}
    for identifier in failure_identifiers(scanned):
        count = seen[identifier] = seen.get(identifier, 0) + 1
        parts.add(f"!{_identity_digest(identifier)}#{count}")
        if len(seen) >= _PRINT_IDS:
            break
    lines = 0
    for line in error_signature(text).splitlines():
        if _WARNING_LINE.match(line) is not None:
            continue
        parts.add(_identity_digest(line))
        lines += 1
        if lines >= _PRINT_LINES:
            break
    if not lines:  # nothing but warnings: they are the failure
        for line in error_signature(text).splitlines()[:_PRINT_LINES]:
            parts.add(_identity_digest(line))
    return FailurePrint(frozenset(parts))


def same_failure(earlier: FailurePrint, later: FailurePrint) -> bool:
    """Whether ``later`` is the same failure as ``earlier``.

    By identity first: two different exit codes are two failures; when both name
    identifiers (file:code, test ids, exceptions, error codes), ``later`` is the same
    failure when none of ``earlier``'s went away and it adds at most one (another
    tool's finding beside it) or a fifth of its own: a failure set that lost an entry
    is progress. Only when either names none do the normalized lines decide, warnings
    left out: equal, or one has at most one line the other lacks, or 80 % of the
    larger one's lines shared."""
    if earlier == later:
        return True
    first_ids, first_exit, first_lines = _split(earlier)
    second_ids, second_exit, second_lines = _split(later)
    if first_exit and second_exit and first_exit != second_exit:
        return False
    if first_ids and second_ids:
        if not first_ids <= second_ids:
            return False
        added = len(second_ids) - len(first_ids)
        return added <= 1 or len(first_ids) >= _NEAR_SHARE * len(second_ids)
    first, second = first_lines, second_lines
    if first == second:
        return True
    shared = len(first & second)
    if not shared:
        return False
    larger = max(len(first), len(second))
    if larger - shared <= 1 and min(len(first), len(second)) == shared:
        return True
    return shared >= _NEAR_SHARE * larger


def _split(printed: FailurePrint) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """A print's identifiers, exit code and lines."""
    ids = frozenset(part for part in printed if part[0] == "!")
    status = frozenset(part for part in printed if part[0] == "^")
    return ids, status, printed - ids - status


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
