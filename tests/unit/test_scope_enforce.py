"""Enforcement levels and the fail-open/fail-closed matrix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.model import Enforcement
from seawall.scope.enforce import (
    FAIL_MATRIX,
    Decision,
    ErrorClass,
    Failure,
    decide,
    decide_failure,
)
from seawall.telemetry import EventLog, ScopeDenied, ScopeWarning, read_events, scope_verdict

EXPECTED = {
    Failure.NO_SESSION: ("allow", "allow", "allow"),
    Failure.MANIFEST_MISSING: ("deny", "warn", "allow"),
    Failure.MANIFEST_CORRUPT: ("deny", "warn", "allow"),
    Failure.UNKNOWN_AGENT: ("deny", "warn", "allow"),
    Failure.UNPARSEABLE_COMMAND: ("deny", "warn", "allow"),
    Failure.UNKNOWN_PROGRAM: ("deny", "warn", "allow"),
    Failure.UNKNOWN_WRITE: ("deny", "warn", "allow"),
    Failure.BAD_INPUT: ("deny", "warn", "allow"),
    Failure.INTERNAL_ERROR: ("deny", "warn", "allow"),
}
LEVELS = (Enforcement.STRICT, Enforcement.WARN, Enforcement.OFF)


def test_the_matrix_covers_every_case_and_level() -> None:
    assert set(FAIL_MATRIX) == set(Failure)
    for failure, row in EXPECTED.items():
        got = tuple(str(FAIL_MATRIX[failure][level]) for level in LEVELS)
        assert got == row, failure


@pytest.mark.parametrize("failure", list(Failure))
@pytest.mark.parametrize("level", LEVELS)
def test_decide_failure_follows_the_matrix(failure: Failure, level: Enforcement) -> None:
    verdict = decide_failure(failure, level, "detail", error_class=ErrorClass.SCOPE_DENIED)
    assert verdict.decision is FAIL_MATRIX[failure][level]
    assert bool(verdict.message) == (verdict.decision is not Decision.ALLOW)


@pytest.mark.parametrize("error_class", list(ErrorClass))
def test_messages_name_the_class_and_never_suggest_disarming(error_class: ErrorClass) -> None:
    for level in (Enforcement.STRICT, Enforcement.WARN):
        verdict = decide(level, error_class=error_class, problem="x is outside")
        assert verdict.message.startswith(f"seawall {error_class}")
        lowered = verdict.message.lower()
        for word in (
            "disable",
            "turn off",
            "enforcement",
            "settings",
            "hook",
            "seawall_",
            "bypass",
        ):
            assert word not in lowered, (word, verdict.message)
        assert "STATUS" in verdict.message
    assert decide(Enforcement.OFF, error_class=error_class, problem="p").message == ""


def test_warn_and_deny_are_recorded_but_allow_is_not(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", session="s")
    for level in LEVELS:
        verdict = decide(level, error_class=ErrorClass.SCOPE_DENIED, problem=f"p-{level}")
        record = scope_verdict(verdict, wave=1, task="t1", tool="Write")
        if record is not None:
            log.append(record)
    records = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [(r["event"], r["problem"]) for r in records] == [
        ("scope_denied", "p-strict"),
        ("scope_warning", "p-warn"),
    ]
    typed = list(read_events(tmp_path / "events.jsonl"))
    assert [type(r) for r in typed] == [ScopeDenied, ScopeWarning]
    assert all(
        isinstance(r, ScopeDenied | ScopeWarning)
        and r.error_class is ErrorClass.SCOPE_DENIED
        and r.task == "t1"
        for r in typed
    )
    assert records[1]["task"] == "t1" and records[1]["error_class"] == "scope-denied"


def test_the_error_echo_classifier_reads_our_classes() -> None:
    from seawall.stagnation.finding import classify_error

    for error_class in ErrorClass:
        for level in (Enforcement.STRICT, Enforcement.WARN):
            verdict = decide(level, error_class=error_class, problem="`x` at other/y.py")
            assert str(classify_error(verdict.message)) == str(error_class), verdict.message
