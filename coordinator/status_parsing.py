"""Read an agent's status from its final output (the status detection protocol).

A STATUS line counts only where the agent reports it, never where it quotes it:

- it starts a line: after at most three spaces and an optional list bullet (``- ``,
  ``* ``, ``+ ``), plain or bold (``**STATUS: done** — x``, ``**STATUS:** done — x``);
  a ``>`` quote, a heading, inline backticks, four spaces of indentation or a tab
  (indented code) and anything mid-sentence do not count;
- it is outside fenced code blocks (an unclosed fence runs to the end, as in Markdown);
- its word is ``done``, ``no-tests-needed``, ``partial`` or ``failed``, in any case
  (``STATUS: great`` is no status), followed by nothing, a parenthesis, or a
  separator (em dash, en dash, ``--``, ``-``, ``:``, or ``.``/``,``/``;``/``!`` before
  a space) and the summary; ``STATUS: done with X`` is prose, not a status;
- it is not an echo of the prompt's instructions (a summary that is only a
  ``<placeholder>`` is the template, not a report).

The last such line wins. ``partial — did X | REMAINING: Y`` splits into summary and
remaining; a ``REMAINING:`` line right after the STATUS line (with any lines that
follow it up to a blank line) is the remaining work too.

Without a STATUS line the status is inferred (``inferred=True``, with the ground in
``reason``), first rule that applies wins:

1. truncated output -> ``partial`` (the agent was cut off; what it said last is not its end);
2. reported errors -> ``failed``, even if files changed: a careful user does not want
   an agent that ended on an error called done;
3. changed files -> ``done``;
4. nothing at all -> ``failed``: no claim, no change, no error is no progress.

``reported_errors=None`` detects errors from the text, conservatively: only the last
few non-blank lines count, and only when one starts like an error
(``Traceback (most recent call last):``, ``Error:``, ``ValueError:``, ``error:``,
``FAILED``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from seawall.errors import ConfigurationError
from seawall.model import Status, StatusReport

__all__ = ["error_in_text", "parse_status"]

_FLAGS = re.IGNORECASE | re.ASCII
_BOLD = r"(?:\*\*|__)"
_LEAD = r"^[ ]{0,3}(?:[-*+][ \t]+)?"
_STATUS_LINE = re.compile(
    rf"{_LEAD}(?P<bold>{_BOLD})?status[ \t]*{_BOLD}?[ \t]*:[ \t]*{_BOLD}?[ \t]*"
    r"(?P<word>done|partial|failed|no[-_ ]tests[-_ ]needed)(?![A-Za-z0-9_])(?!-[A-Za-z0-9_])"
    rf"(?:[ \t]*{_BOLD})?(?P<rest>.*)$",
    _FLAGS,
)
_REMAINING_LINE = re.compile(
    rf"{_LEAD}{_BOLD}?remaining[ \t]*{_BOLD}?[ \t]*:[ \t]*{_BOLD}?(?P<text>.*)$", _FLAGS
)
_REMAINING_MARK = re.compile(rf"{_BOLD}?remaining[ \t]*{_BOLD}?[ \t]*:{_BOLD}?", _FLAGS)
_SEPARATOR = re.compile(r"(?:—|–|--|-|:|[.,;!](?=\s|$))[ \t]*")
_PLACEHOLDER = re.compile(r"<[^<>]*>")
_FENCE = re.compile(r"^[ ]{0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ERROR_LINE = re.compile(
    r"^[ \t]*(?:Traceback \(most recent call last\):|(?:[A-Z][A-Za-z0-9_.]*)?Error:"
    r"|error(?:\[[^\]\n]*\])?:|FAILED(?![A-Za-z0-9_]))",
    re.ASCII,
)
_ERROR_WINDOW = 5  # how many final non-blank lines error detection looks at
_NAMED_ERROR = re.compile(
    r"(?<![A-Za-z0-9_.])(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception)"
    r"(?::[ \t]*[^\n]*)?",
    re.ASCII,
)

_WORDS = {
    "done": Status.DONE,
    "partial": Status.PARTIAL,
    "failed": Status.FAILED,
}


def parse_status(
    text: str,
    *,
    changed_files: bool = False,
    reported_errors: bool | None = None,
    truncated: bool = False,
) -> StatusReport:
    """The status an agent's final output reports, or the one inferred without a STATUS line.

    Never raises on any ``text``; raises ``ConfigurationError`` only for arguments of
    the wrong type.
    """
    _check_args(text, changed_files, reported_errors, truncated)
    lines = text.splitlines()
    found = list(_status_lines(lines))
    if found:
        index, report = found[-1]
        return _with_remaining(report, lines, index, count=len(found))
    return _infer(lines, changed_files, reported_errors, truncated)


def _check_args(text: object, changed: object, errors: object, truncated: object) -> None:
    if not isinstance(text, str):
        raise ConfigurationError(f"text must be a string; got {type(text).__name__}")
    for name, value in (("changed_files", changed), ("truncated", truncated)):
        if not isinstance(value, bool):
            raise ConfigurationError(f"{name} must be True or False; got {value!r}")
    if errors is not None and not isinstance(errors, bool):
        raise ConfigurationError(f"reported_errors must be True, False or None; got {errors!r}")


def _prose_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """``(index, line)`` for each line outside fenced code blocks."""
    fence = ""
    for index, line in enumerate(lines):
        match = _FENCE.match(line)
        if fence:
            if match and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence):
                fence = "" if not match["info"].strip() else fence
            continue
        if match and not (match["fence"][0] == "`" and "`" in match["info"]):
            fence = match["fence"]
            continue
        yield index, line


def _status_lines(lines: list[str]) -> Iterator[tuple[int, StatusReport]]:
    for index, line in _prose_lines(lines):
        report = _parse_line(line)
        if report is not None:
            yield index, report


def _parse_line(line: str) -> StatusReport | None:
    """The report on one STATUS line, or None when the line is not one."""
    match = _STATUS_LINE.match(line)
    if match is None:
        return None
    summary = _summary(match["rest"], match["bold"])
    if summary is None:
        return None
    summary, remaining = _split_remaining(summary)
    if _is_placeholder(summary) or _is_placeholder(remaining):
        return None
    return StatusReport(status=_status_word(match["word"]), summary=summary, remaining=remaining)


def _summary(rest: str, bold: str | None) -> str | None:
    """The summary after the status word, or None when the rest is prose, not a summary."""
    rest = rest.strip()
    if bold and rest.endswith(bold):
        rest = rest.removesuffix(bold).rstrip()
    if not rest:
        return ""
    separator = _SEPARATOR.match(rest)
    if separator:
        return rest[separator.end() :].strip()
    if rest.startswith("("):
        return rest
    return None


def _split_remaining(summary: str) -> tuple[str, str]:
    """Split ``did X | REMAINING: Y`` into ``("did X", "Y")``."""
    for mark in _REMAINING_MARK.finditer(summary):
        before = summary[: mark.start()]
        if before and not before[-1].isspace() and before[-1] != "|":
            continue
        done = before.rstrip().removesuffix("|").rstrip()
        return done, summary[mark.end() :].strip()
    return summary, ""


def _is_placeholder(text: str) -> bool:
    return _PLACEHOLDER.fullmatch(text) is not None


def _status_word(word: str) -> Status:
    return _WORDS.get(word.lower(), Status.NO_TESTS_NEEDED)


def _with_remaining(
    report: StatusReport, lines: list[str], index: int, *, count: int
) -> StatusReport:
    """``report`` completed by a REMAINING line following its STATUS line, and a reason."""
    remaining = report.remaining or _remaining_after(lines, index)
    reason = f"reported on line {index + 1}"
    if count > 1:
        reason += f", the last of {count} STATUS lines"
    return StatusReport(
        status=report.status, summary=report.summary, remaining=remaining, reason=reason
    )


def _remaining_after(lines: list[str], index: int) -> str:
    """The REMAINING text on the next non-blank line after ``index``, with its continuation."""
    start = next((i for i in range(index + 1, len(lines)) if lines[i].strip()), len(lines))
    match = _REMAINING_LINE.match(lines[start]) if start < len(lines) else None
    if match is None:
        return ""
    parts = [match["text"].strip().removesuffix("**").removesuffix("__").strip()]
    for line in lines[start + 1 :]:
        if not line.strip() or _FENCE.match(line) or _STATUS_LINE.match(line):
            break
        parts.append(line.strip())
    return "\n".join(part for part in parts if part)


def _infer(
    lines: list[str], changed: bool, reported_errors: bool | None, truncated: bool
) -> StatusReport:
    """The status inferred when there is no STATUS line (precedence: module doc)."""
    changes = "changed files" if changed else "changed no files"
    if truncated:
        return _inferred(Status.PARTIAL, f"no STATUS line; the output was truncated ({changes})")
    error_line = _last_error_line(lines) if reported_errors is None else ""
    if reported_errors or error_line:
        source = "its output ends in an error" if error_line else "it reported errors"
        return _inferred(Status.FAILED, f"no STATUS line; {source} ({changes})", error_line)
    if changed:
        return _inferred(Status.DONE, "no STATUS line; the agent changed files, no errors")
    return _inferred(Status.FAILED, "no STATUS line, no changed files and no errors: no progress")


def _inferred(status: Status, reason: str, summary: str = "") -> StatusReport:
    return StatusReport(status=status, summary=summary, inferred=True, reason=reason)


def _last_error_line(lines: list[str]) -> str:
    """The last error-looking line among the final non-blank lines, or ``""``."""
    tail = [line for line in lines if line.strip() and not _FENCE.match(line)][-_ERROR_WINDOW:]
    for line in reversed(tail):
        if _ERROR_LINE.match(line):
            return line.strip()
    return ""


def error_in_text(text: str, *, limit: int = 200) -> str:
    """The last error a text names, from its name to the end of its line
    (``ModuleNotFoundError: No module named 'csvkit'``), anywhere in prose or a
    STATUS line; else its last error-looking line; else ``""``."""
    matches = list(_NAMED_ERROR.finditer(text))
    found = matches[-1].group(0).strip() if matches else _last_error_line(text.splitlines())
    return found if len(found) <= limit else found[: limit - 1] + "…"
