"""Failure identity scored on a corpus of pairs: real failures of public transcripts
(the same error again, or another one) and synthetic variations of one error (an added
warning, reordered lines, timestamps, paths, colour) and of different errors behind one
boilerplate line. Every pair must be judged as labelled."""

from __future__ import annotations

from functools import cache

import pytest

from seawall.breakers.signature import failure_identifiers, failure_print, same_failure
from seawall.events import ToolCall, ToolResult
from seawall.transcripts import parse_file
from tests.fixtures_path import TRANSCRIPTS, transcripts_present

DIALYZER = "marot__spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
TEST_FIX = "marot__spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@cache
def _outputs(relative: str) -> dict[int, str]:
    """The output of each failed call of a transcript, by its step."""
    steps: dict[str, int] = {}
    failed: dict[int, str] = {}
    for event in parse_file(TRANSCRIPTS / relative):
        if isinstance(event, ToolCall):
            steps[event.call_id] = len(steps) + 1
        elif isinstance(event, ToolResult) and event.is_error and event.call_id in steps:
            failed[steps[event.call_id]] = event.text
    return failed


# (file, earlier step, later step, the same failure?, why)
REAL_PAIRS = (
    (DIALYZER, 133, 136, True, "the same Dialyzer finding, verbatim"),
    (DIALYZER, 133, 139, True, "the same Dialyzer finding beside a new Credo block"),
    (DIALYZER, 136, 142, True, "the same finding one line lower (a comment added above)"),
    (DIALYZER, 139, 142, False, "the Credo finding fixed: a failure set that lost one is progress"),
    (TEST_FIX, 94, 98, False, "a compile error, then five failing tests"),
    (TEST_FIX, 98, 103, False, "another failure of the same five tests"),
    (TEST_FIX, 103, 107, False, "four failures where five were: progress"),
)


@pytest.mark.skipif(not transcripts_present(), reason=f"real transcripts not at {TRANSCRIPTS}")
@pytest.mark.parametrize("pair", REAL_PAIRS, ids=lambda pair: f"{pair[1]}-{pair[2]}")
def test_real_failure_pairs(pair: tuple[str, int, int, bool, str]) -> None:
    relative, earlier, later, same, why = pair
    outputs = _outputs(relative)
    first, second = failure_print(outputs[earlier]), failure_print(outputs[later])
    assert same_failure(first, second) is same, why


TS_ERROR = "src/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'."
PYTEST = (
    "FAILED tests/test_api.py::test_create - AssertionError: assert 404 == 201\n"
    "FAILED tests/test_api.py::test_delete - KeyError: 'id'\n"
    "2 failed, 10 passed in 1.31s"
)
TRACEBACK = (
    'Traceback (most recent call last):\n  File "/tmp/x/run.py", line 3, in <module>\n'
    "    main()\nValueError: invalid literal for int() with base 10: 'abc'"
)
COMPOSE_WARNING = (
    "WARN[0000] /srv/app/docker-compose.yml: the attribute `version` is obsolete, "
    "it will be ignored, please remove it to avoid potential confusion"
)

SAME = (
    (TS_ERROR, "npm warn deprecated glob@7.2.3: Glob versions prior to v9\n" + TS_ERROR,
     "an added warning"),
    (PYTEST, "\n".join(reversed(PYTEST.splitlines())), "reordered lines"),
    (PYTEST, PYTEST.replace("1.31s", "2.07s"), "another duration"),
    ("2026-02-11T21:41:48Z " + TS_ERROR, "2026-02-12T08:03:11Z " + TS_ERROR, "timestamps"),
    (TRACEBACK, TRACEBACK.replace("/tmp/x/", "/tmp/y/"), "another temporary path"),
    (TS_ERROR, "\x1b[31m" + TS_ERROR + "\x1b[0m", "colour"),
    (TS_ERROR, TS_ERROR.replace("(12,5)", "(14,5)"), "the error moved two lines down"),
    ("Exit code 2\nls: cannot access '*.md': No such file or directory",
     "Exit code 2\nls: cannot access '*.md': No such file or directory", "verbatim"),
)  # fmt: skip
DIFFERENT = (
    (COMPOSE_WARNING + "\nError response from daemon: pull access denied for app-base",
     COMPOSE_WARNING + "\nservice \"web\" refers to undefined network backend",
     "different errors behind one warning"),
    (TS_ERROR, TS_ERROR.replace("TS2322", "TS2304"), "another error code"),
    (PYTEST, PYTEST.splitlines()[1] + "\n1 failed, 11 passed in 1.2s", "a test fixed"),
    (TRACEBACK, TRACEBACK.replace("ValueError: invalid literal", "TypeError: unsupported"),
     "another exception"),
    ("Exit code 1\nconnection refused", "Exit code 2\nconnection refused", "another exit code"),
    ("boom", "", "an error and nothing"),
)  # fmt: skip


@pytest.mark.parametrize("pair", SAME, ids=lambda pair: pair[2])
def test_variations_of_one_failure_are_the_same(pair: tuple[str, str, str]) -> None:
    earlier, later, why = pair
    assert same_failure(failure_print(earlier), failure_print(later)), why


@pytest.mark.parametrize("pair", DIFFERENT, ids=lambda pair: pair[2])
def test_different_failures_are_told_apart(pair: tuple[str, str, str]) -> None:
    earlier, later, why = pair
    assert not same_failure(failure_print(earlier), failure_print(later)), why


def test_identifiers_name_what_failed_not_where_the_text_is() -> None:
    assert failure_identifiers(TS_ERROR) == ["at:app.ts:ts2322"]
    assert failure_identifiers(PYTEST)[:2] == [
        "test:tests/test_api.py::test_create",
        "test:tests/test_api.py::test_delete",
    ]
    assert failure_identifiers(COMPOSE_WARNING) == []  # a warning identifies nothing
    assert failure_identifiers("lib/a.ex:57:13:pattern_match") == ["at:a.ex:pattern_match"]


def test_the_score_over_the_corpus() -> None:
    """Every synthetic pair judged as labelled (the real pairs are scored above)."""
    right = sum(same_failure(failure_print(a), failure_print(b)) for a, b, _ in SAME)
    right += sum(not same_failure(failure_print(a), failure_print(b)) for a, b, _ in DIFFERENT)
    assert right == len(SAME) + len(DIFFERENT)
