"""The synthetic cases of ``detector_cases`` through a real ``AgentMonitor``, and the
hook-mode admissions after a trip (what stays open, and each exception's bound)."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.breakers import AgentBreaker, BreakerKind, WaveBreaker, WaveReport
from seawall.events import ToolCall, ToolResult
from seawall.model import BreakerLimits
from seawall.stagnation import AgentMonitor, Pattern
from tests.unit.detector_cases import CASES, LINT_LINE, TYPE_ERROR, Case


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_case(case: Case, workspace: Path) -> tuple[list[tuple[str, int]], set[str]]:
    clock = Clock()
    monitor = AgentMonitor(
        session="s", wave=1, agent="a1", workspace=workspace, repo=workspace,
        limits=case.limits, clock=clock,
    )  # fmt: skip
    trips: list[tuple[str, int]] = []
    last = 0
    for step, event in case.events():
        if step != last:
            clock.now = step * case.minutes_per_step * 60.0
            last = step
        trip = monitor.observe(event)
        if trip is not None:
            trips.append((trip.kind.value, step))
    findings = {finding.pattern.value for finding in monitor.finish()}
    return trips, findings


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_synthetic_case(case: Case, tmp_path: Path) -> None:
    trips, findings = run_case(case, tmp_path)
    expected = [] if case.trip is None else [(case.trip, case.at)]
    assert trips[:1] == expected, case.reason
    assert findings == case.findings, case.reason


def test_every_trip_of_spec_003_has_a_case() -> None:
    assert {kind.value for kind in BreakerKind} <= {case.trip for case in CASES}


def test_every_pattern_of_spec_004_has_a_case() -> None:
    found = {pattern for case in CASES for pattern in case.findings}
    assert {pattern.value for pattern in Pattern} <= found


# -- class 4 at the wave level: a task re-dispatched into the same failure -------------------


def test_a_restart_loop_across_waves_trips_the_wave_breaker() -> None:
    breaker = WaveBreaker()
    first = WaveReport(wave=1, merged=1, failures={"T1": (TYPE_ERROR,)})
    again = WaveReport(
        wave=2, merged=1, redispatched=("T1",), failures={"T1": (TYPE_ERROR + "\n" + LINT_LINE,)}
    )
    assert breaker.record(first) is None
    trip = breaker.record(again)
    assert trip is not None and trip.trigger.value == "identical-failure"


# -- class 6 and the bounds of every exception: hook mode after a trip ------------------------

_n = iter(range(10**6))


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(call_id=f"h{next(_n)}", name=name, arguments=arguments)


def bash(command: str) -> ToolCall:
    return call("Bash", command=command)


def edits_tripped() -> AgentBreaker:
    breaker = AgentBreaker(limits=BreakerLimits(max_edits_without_verify=2))
    for n in range(2):
        edit = call("Write", file_path=f"/r/new{n}.py", content="x")
        assert breaker.admit(edit).allowed
        breaker.observe(ToolResult(call_id=edit.call_id, text="File created"))
    assert breaker.trip is not None and breaker.trip.kind is BreakerKind.UNVERIFIED_EDITS
    return breaker


@pytest.mark.parametrize(
    "tool_call",
    [
        call("Read", file_path="/r/a.py"),
        call("Grep", pattern="def f", path="/r"),
        call("Glob", pattern="**/*.py"),
        bash("cat src/a.py"),
        bash("ls -la src && git diff --stat"),
        bash("sed -n '1,80p' src/a.py | grep def"),
    ],
    ids=lambda c: str(c.arguments.get("command") or c.name),
)
def test_reading_stays_open_after_an_unverified_edits_trip(tool_call: ToolCall) -> None:
    admission = edits_tripped().admit(tool_call)
    assert admission.allowed and not admission.cleanup


@pytest.mark.parametrize(
    "tool_call",
    [
        call("Edit", file_path="/r/a.py", old_string="a", new_string="b"),
        call("Write", file_path="/r/c.py", content="x"),
        call("mcp__filesystem__write_file", path="/r/c.py", content="x"),
        bash("sed -i s/a/b/ src/a.py"),
        bash("echo x > src/a.py"),
        bash("python -c \"open('x','w')\""),
    ],
    ids=lambda c: str(c.arguments.get("command") or c.name),
)
def test_edits_stay_blocked_until_a_check_passes(tool_call: ToolCall) -> None:
    admission = edits_tripped().admit(tool_call)
    assert not admission.allowed
    assert "Edits are blocked until a test or build run passes" in admission.reason


def test_a_verify_run_alone_clears_the_trip_and_reopens_edits() -> None:
    breaker = edits_tripped()
    verify = bash("cd src && pytest -q 2>&1 | tail -5")
    assert breaker.admit(verify).allowed
    breaker.observe(ToolResult(call_id=verify.call_id, text="4 passed", exit_code=0))
    assert breaker.trip is None
    assert breaker.admit(call("Edit", file_path="/r/a.py")).allowed


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("pytest --version", "pytest 8.3.0"),
        ("pytest --help", "usage: pytest [options]"),
        ("pytest --collect-only -q", "3 tests collected"),
        ("pytest -q", "no tests ran in 0.01s"),
        ("make -n test", "pytest -q"),
    ],
)
def test_a_check_that_ran_no_tests_does_not_clear_the_trip(command: str, output: str) -> None:
    breaker = edits_tripped()
    admission = breaker.admit(bash(command))
    if admission.allowed:  # admitted as a read at most: its success proves nothing
        breaker.observe(ToolResult(call_id=f"h{next(_n) - 1}", text=output, exit_code=0))
    assert breaker.trip is not None and breaker.trip.kind is BreakerKind.UNVERIFIED_EDITS


@pytest.mark.parametrize(
    "command",
    ["pytest -q; sed -i s/a/b/ src/a.py", "pytest -q && rm -rf build", "sed -i x a.py && pytest"],
)
def test_a_verify_with_other_work_beside_it_is_no_verify(command: str) -> None:
    breaker = edits_tripped()
    admission = breaker.admit(bash(command))
    assert not admission.allowed


@pytest.mark.parametrize(
    "command", ["git status &", "git status | cat", "(git status)", "git status; ls"]
)
def test_the_cleanup_allowance_refuses_backgrounding_and_compounds(command: str) -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_repeat_identical=2))
    for _ in range(2):
        read = call("Read", file_path="/r/a.py")
        breaker.admit(read)
        breaker.observe(ToolResult(call_id=read.call_id, text="same"))
    assert breaker.trip is not None and breaker.trip.kind is BreakerKind.LOOP
    admission = breaker.admit(bash(command))
    assert not admission.allowed and breaker.cleanup_used == 0
    assert breaker.admit(bash("git status")).cleanup
