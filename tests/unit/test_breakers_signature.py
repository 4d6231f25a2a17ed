"""The error-signature normalizer: run-to-run noise masked, real differences kept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.breakers import error_signature, signature, signature_digest
from seawall.breakers.signature import failure_print, output_digest, same_failure


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\x1b[31mError\x1b[0m: boom", "error: boom"),
        ("2024-05-01T10:11:12.345Z fatal: no", "fatal: no"),
        ("[12:01:02] fatal: no", "[] fatal: no"),
        ("id 123e4567-e89b-12d3-a456-426614174000 lost", "id <uuid> lost"),
        ("object 3f2a9c1d0e8b missing", "object <hex> missing"),
        ("at 0xdeadbeef", "at <hex>"),
        ("File /tmp/pytest-17/src/a.py, line 42", "file <path>, line <n>"),
        ("src/pkg/mod.rs:10:5: mismatched types", "<path>:<n>:<n>: mismatched types"),
        ("error\nRan 5 tests in 0.31s\nfailed", "error\nfailed"),
        ("error\nsee https://example.com/help\nend", "error\nend"),
        ("error\ncompleted in 3 minutes\nend", "error\nend"),
        ("  too    many   spaces  ", "too many spaces"),
    ],
)
def test_normalization_table(text: str, expected: str) -> None:
    assert error_signature(text) == expected


def test_the_same_error_on_two_runs_has_one_signature() -> None:
    first = (
        "\x1b[1m2024-05-01 10:00:01\x1b[0m ERROR in /tmp/build-8812/src/app.ts:17:3\n"
        "TS2345: Argument of type 'string' is not assignable\n"
        "Done in 4.21s\n"
    )
    second = (
        "2024-05-02 11:30:59 ERROR in /tmp/build-9913/src/app.ts:19:3\n"
        "TS2345: Argument of type 'string' is not assignable\n"
        "Done in 3.90s\n"
    )
    assert error_signature(first) == error_signature(second)
    assert signature_digest(first) == signature_digest(second)


def test_a_different_error_has_another_signature() -> None:
    assert signature_digest("TS2345: Argument of type 'string'") != signature_digest(
        "TS2304: Cannot find name 'foo'"
    )
    assert error_signature("cannot find name foo") != error_signature("missing semicolon")


@given(st.text())
def test_normalizing_is_idempotent_and_lowercase(text: str) -> None:
    once = error_signature(text)
    assert error_signature(once) == once
    assert once == once.lower()


def test_one_added_warning_line_is_the_same_failure() -> None:
    error = "src/app.py:12: error: Incompatible return value type\nFound 1 error in 1 file"
    warned = error + "\nsrc/app.py:3:1: F401 'os' imported but unused"
    assert same_failure(failure_print(error), failure_print(warned))
    # the other way round a finding went away: the failure set changed, progress
    assert not same_failure(failure_print(warned), failure_print(error))
    two_more = warned + "\nsrc/b.py:9:1: E302 expected 2 blank lines"
    assert not same_failure(failure_print(error), failure_print(two_more))


def test_a_different_error_is_not_the_same_failure() -> None:
    assert not same_failure(
        failure_print("TS2345: Argument of type 'string' is not assignable"),
        failure_print("TS2304: Cannot find name 'foo'"),
    )
    assert not same_failure(failure_print("boom"), failure_print(""))


def test_output_digest_keeps_clock_times_and_masks_durations() -> None:
    assert output_digest("15:30:20") != output_digest("15:30:41")
    assert output_digest("5 passed in 0.31s") == output_digest("5 passed in 0.29s")
    assert output_digest("20% done") != output_digest("40% done")


def _every_pass(text: str) -> str:
    """``error_signature`` with every masking pass run, none skipped by its first test."""
    if len(text) > 2 * signature._SIGNATURE_CHARS:
        text = text[: signature._SIGNATURE_CHARS] + "\n" + text[-signature._SIGNATURE_CHARS :]
    if "\x1b" in text:
        text = signature._ANSI.sub("", text)
    text = signature.drop_noisy_lines(signature._TIMESTAMP.sub("", text)).lower()
    text = signature._UUID.sub("<uuid>", text)
    text = signature._HEX.sub("<hex>", text)
    text = signature._PATH.sub("<path>", text)
    text = signature._DIGITS.sub("<n>", text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


_PIECES = [*"0123456789abcdefxTZ:-./\\ \n\tAB", "2024-01-02 10:11:12", " 5 ms", "0x1f", "took"]
_NOISY = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_NOISY)
def test_a_pass_skipped_by_its_first_test_would_have_changed_nothing(text: str) -> None:
    assert error_signature(text) == _every_pass(text)
