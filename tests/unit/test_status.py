"""STATUS parsing (anchored at a line start, the last line wins) and inference of a
status when an agent gave none."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seawall.errors import ConfigurationError
from seawall.model import Status
from seawall.status_parsing import parse_status

FENCE = "```"

# (agent output, status, summary, remaining)
REPORTED = [
    ("STATUS: done — added the parser", "done", "added the parser", ""),
    ("STATUS: done – en dash", "done", "en dash", ""),
    ("STATUS: done -- double hyphen", "done", "double hyphen", ""),
    ("STATUS: done - single hyphen", "done", "single hyphen", ""),
    ("STATUS: done: colon", "done", "colon", ""),
    ("STATUS: done", "done", "", ""),
    ("STATUS: done.", "done", "", ""),
    ("STATUS: done. All green.", "done", "All green.", ""),
    ("STATUS: done (see the diff)", "done", "(see the diff)", ""),
    ("STATUS:done—tight", "done", "tight", ""),
    ("status: Done — lower keyword", "done", "lower keyword", ""),
    ("Status: PARTIAL — mixed case", "partial", "mixed case", ""),
    ("**STATUS: done** — bold around word", "done", "bold around word", ""),
    ("**STATUS:** done — bold keyword", "done", "bold keyword", ""),
    ("**STATUS: done — all bold**", "done", "all bold", ""),
    ("STATUS: **failed** — bold word", "failed", "bold word", ""),
    ("- STATUS: done — bullet", "done", "bullet", ""),
    ("* STATUS: partial — star bullet", "partial", "star bullet", ""),
    ("   STATUS: done — three spaces", "done", "three spaces", ""),
    ("STATUS: no-tests-needed — suite covers it", "no-tests-needed", "suite covers it", ""),
    ("STATUS: No-Tests-Needed", "no-tests-needed", "", ""),
    ("STATUS: no_tests_needed — underscores", "no-tests-needed", "underscores", ""),
    ("STATUS: failed — ImportError in setup", "failed", "ImportError in setup", ""),
    ("STATUS: partial — did X | REMAINING: Y", "partial", "did X", "Y"),
    ("STATUS: partial — did X |REMAINING:Y and Z", "partial", "did X", "Y and Z"),
    ("STATUS: partial — did X. REMAINING: Y", "partial", "did X.", "Y"),
    ("STATUS: partial — did X | **REMAINING:** Y", "partial", "did X", "Y"),
    ("STATUS: partial — did X\nREMAINING: Y", "partial", "did X", "Y"),
    ("STATUS: partial — did X\n\n- REMAINING: Y", "partial", "did X", "Y"),
    ("STATUS: partial — did X\nREMAINING:\n- a\n- b\n\nbye", "partial", "did X", "- a\n- b"),
    ("STATUS: partial — did X\nNext I would do Y", "partial", "did X", ""),
    ("Work log.\r\nSTATUS: done — crlf\r\n", "done", "crlf", ""),
    ("STATUS: partial — crlf\r\nREMAINING: rest\r\n", "partial", "crlf", "rest"),
    # several STATUS lines: the last one wins
    ("STATUS: failed — first try\nfixed it\nSTATUS: done — second", "done", "second", ""),
    ("STATUS: done — early\nthen it broke\nSTATUS: failed — late", "failed", "late", ""),
    # quoting is not reporting
    ("STATUS: done — real\nThe doc says `STATUS: failed — x`.", "done", "real", ""),
    ("STATUS: done — real\n> STATUS: failed — quoted", "done", "real", ""),
    ("STATUS: done — real\nI was told to write STATUS: failed — x", "done", "real", ""),
    ("STATUS: done — real\n`STATUS: failed — inline code at line start`", "done", "real", ""),
    ("STATUS: done — real\n    STATUS: failed — indented code", "done", "real", ""),
    ("STATUS: done — real\n\tSTATUS: failed — tab", "done", "real", ""),
    ("STATUS: done — real\n## STATUS: failed — heading", "done", "real", ""),
    (f"STATUS: done — real\n{FENCE}\nSTATUS: failed — in code\n{FENCE}", "done", "real", ""),
    ("STATUS: done — real\n~~~text\nSTATUS: failed — tilde fence\n~~~", "done", "real", ""),
    (f"STATUS: done — real\n{FENCE}\nunclosed\nSTATUS: failed — x", "done", "real", ""),
    (
        f"STATUS: done — real\n````\n{FENCE}\nSTATUS: failed — nested\n{FENCE}\n````",
        "done",
        "real",
        "",
    ),
    (f"{FENCE}\nSTATUS: failed — code\n{FENCE}\nSTATUS: partial — after", "partial", "after", ""),
    (
        f"{FENCE}python\nx = 1\n{FENCE}\nSTATUS: done — after info fence",
        "done",
        "after info fence",
        "",
    ),
    # unknown words and prose are no status lines
    ("STATUS: done — real\nSTATUS: great — unknown word", "done", "real", ""),
    ("STATUS: done — real\nSTATUS: doneish", "done", "real", ""),
    ("STATUS: done — real\nSTATUS: done-ish — suffix", "done", "real", ""),
    ("STATUS: done — real\nSTATUS: failed to mention it", "done", "real", ""),
    ("STATUS: done — real\nSTATUSES: failed", "done", "real", ""),
    # an echo of the prompt's instructions is the template, not a report
    (
        "STATUS: partial — parser | REMAINING: cli\n"
        "- STATUS: done — <1-line summary of what was accomplished>\n"
        "- STATUS: partial — <what was done> | REMAINING: <what is left>\n"
        "- STATUS: failed — <what went wrong>",
        "partial",
        "parser",
        "cli",
    ),
]


@pytest.mark.parametrize(("text", "status", "summary", "remaining"), REPORTED)
def test_reported_status(text: str, status: str, summary: str, remaining: str) -> None:
    report = parse_status(text, changed_files=True, reported_errors=True, truncated=True)
    assert report.status == status
    assert report.summary == summary
    assert report.remaining == remaining
    assert report.inferred is False
    assert report.reason.startswith("reported on line")


def test_reason_names_line_and_count() -> None:
    report = parse_status("STATUS: failed — a\nb\nSTATUS: done — c")
    assert report.reason == "reported on line 3, the last of 2 STATUS lines"
    assert parse_status("x\nSTATUS: done").reason == "reported on line 2"


def test_no_tests_needed_is_a_success() -> None:
    report = parse_status("Existing tests already catch it.\nSTATUS: no-tests-needed — covered")
    assert report.status is Status.NO_TESTS_NEEDED
    assert report.status.is_success


# (agent output, changed_files, reported_errors, truncated, status, reason fragment)
INFERRED = [
    ("Edited the parser.", True, None, False, "done", "changed files"),
    ("", True, False, False, "done", "changed files"),
    ("Edited the parser.", True, True, False, "failed", "reported errors"),
    ("I tried.", False, True, False, "failed", "reported errors"),
    ("Edited the parser.", True, None, True, "partial", "truncated"),
    ("Traceback (most recent call last):", True, None, True, "partial", "truncated"),
    ("", False, None, True, "partial", "truncated"),
    ("", False, None, False, "failed", "no progress"),
    ("All good, nothing to change.", False, None, False, "failed", "no progress"),
    ("ran it\nTraceback (most recent call last):\n  x", True, None, False, "failed", "error"),
    ("ran it\nValueError: bad input", True, None, False, "failed", "error"),
    ("ran it\nError: cannot open file", False, None, False, "failed", "error"),
    ("build\nerror: linker failed", False, None, False, "failed", "error"),
    ("build\nerror[E0425]: unresolved name", False, None, False, "failed", "error"),
    ("tests\nFAILED tests/test_a.py::test_x - assert 1 == 2", True, None, False, "failed", "error"),
    (f"output:\n{FENCE}\nKeyError: 'x'\n{FENCE}", True, None, False, "failed", "error"),
    # conservative: errors early in the output or merely mentioned do not count
    ("ValueError: first\n" + "fixed it\n" * 6, True, None, False, "done", "changed files"),
    ("I fixed the ValueError: it was a typo.", True, None, False, "done", "changed files"),
    ("No errors: all fine.", True, None, False, "done", "changed files"),
    ("Traceback seen earlier is gone\nall good", True, None, False, "done", "changed files"),
    # reported_errors=False turns detection off
    ("ran it\nValueError: bad input", True, False, False, "done", "changed files"),
    # spoofed or unknown STATUS lines fall through to inference
    ("Do not write `STATUS: done` yet.", False, None, False, "failed", "no progress"),
    ("> STATUS: done — quoted", True, None, False, "done", "changed files"),
    (f"{FENCE}\nSTATUS: done — only in code\n{FENCE}", False, None, False, "failed", "no progress"),
    ("STATUS: great — unknown", True, None, False, "done", "changed files"),
    ("STATUS: blocked — unknown here", False, None, True, "partial", "truncated"),
    (
        "- STATUS: done — <1-line summary of what was accomplished>",
        False,
        None,
        False,
        "failed",
        "no progress",
    ),
]


@pytest.mark.parametrize(("text", "changed", "errors", "truncated", "status", "reason"), INFERRED)
def test_inferred_status(
    text: str, changed: bool, errors: bool | None, truncated: bool, status: str, reason: str
) -> None:
    report = parse_status(text, changed_files=changed, reported_errors=errors, truncated=truncated)
    assert report.status == status
    assert report.inferred is True
    assert report.reason.startswith("no STATUS line")
    assert reason in report.reason
    assert report.remaining == ""


def test_detected_error_line_becomes_the_summary() -> None:
    report = parse_status("ran the tests\nValueError: bad input\n", changed_files=True)
    assert report.status is Status.FAILED
    assert report.summary == "ValueError: bad input"
    assert report.reason == "no STATUS line; its output ends in an error (changed files)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": None}, "text must be a string"),
        ({"text": b"STATUS: done"}, "text must be a string"),
        ({"changed_files": 1}, "changed_files must be True or False"),
        ({"truncated": "no"}, "truncated must be True or False"),
        ({"reported_errors": "auto"}, "reported_errors must be True, False or None"),
    ],
)
def test_invalid_arguments(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"text": "", **kwargs}
    text = arguments.pop("text")
    with pytest.raises(ConfigurationError, match=message):
        parse_status(text, **arguments)  # type: ignore[arg-type]


@given(
    st.text(),
    st.booleans(),
    st.one_of(st.none(), st.booleans()),
    st.booleans(),
)
def test_never_raises_on_any_text(
    text: str, changed: bool, errors: bool | None, truncated: bool
) -> None:
    report = parse_status(text, changed_files=changed, reported_errors=errors, truncated=truncated)
    assert report.status in {Status.DONE, Status.NO_TESTS_NEEDED, Status.PARTIAL, Status.FAILED}
    assert report.reason


@given(
    st.text(
        alphabet=st.characters(exclude_characters="`~\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
    ),
    st.sampled_from(["done", "partial", "failed", "no-tests-needed"]),
)
def test_appended_status_line_wins(prefix: str, word: str) -> None:
    report = parse_status(f"{prefix}\nSTATUS: {word} — the end")
    assert report.status == word
    assert report.summary == "the end"
    assert report.inferred is False


@given(st.text(alphabet="STATUSdonefailpr:*_-—`>#| \n\t.", max_size=200))
def test_markdown_like_noise_never_raises(text: str) -> None:
    report = parse_status(text, changed_files=True)
    assert isinstance(report.status, Status)
