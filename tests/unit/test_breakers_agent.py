"""Per-agent breakers (loops, failures, polls, budgets, wall clock): every threshold
with its negative twin."""

from __future__ import annotations

import itertools
import os
from typing import Any

import pytest

from seawall.breakers import AgentBreaker, BreakerKind, BreakerState, NoticeKind, Trip
from seawall.breakers.memory import normal_path
from seawall.events import Event, Message, ToolCall, ToolResult, Turn
from seawall.model import BreakerLimits

_ids = itertools.count()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id=f"c{next(_ids)}", name=name, arguments=arguments)


def result(of: ToolCall, text: str = "ok", **fields: Any) -> ToolResult:
    return ToolResult(call_id=of.call_id, name=of.name, text=text, **fields)


def run(breaker: AgentBreaker, name: str, text: str = "ok", *, error: bool = False,
        exit_code: int | None = None, **arguments: Any) -> Trip | None:  # fmt: skip
    tool_call = call(name, **arguments)
    trip = breaker.observe(tool_call)
    if trip is not None:
        return trip
    return breaker.observe(result(tool_call, text, is_error=error, exit_code=exit_code))


def feed(breaker: AgentBreaker, events: list[Event]) -> list[Trip]:
    return [trip for trip in map(breaker.observe, events) if trip is not None]


def edit(breaker: AgentBreaker, path: str, n: int = 0) -> Trip | None:
    return run(breaker, "Edit", file_path=path, old_string=f"a{n}", new_string=f"b{n}")


# -- unverified edits -------------------------------------------------------------------


def test_unverified_edits_trips_at_the_limit_without_snapshot() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_edits_without_verify=5))
    trips = [edit(breaker, "a.py", n) for n in range(5)]
    assert trips[:4] == [None] * 4
    trip = trips[4]
    assert trip is not None and trip.kind is BreakerKind.UNVERIFIED_EDITS
    assert not trip.wants_snapshot and trip.self_service
    assert breaker.state is BreakerState.TRIPPED


def test_a_passing_verify_resets_the_edit_count() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_edits_without_verify=5))
    for n in range(4):
        assert edit(breaker, "a.py", n) is None
    assert run(breaker, "Bash", "5 passed", exit_code=0, command="pytest -q") is None
    for n in range(4):
        assert edit(breaker, "a.py", 10 + n) is None
    assert breaker.edits_since_verify == 4


def test_a_verify_failing_as_before_does_not_reset_the_edit_count() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_edits_without_verify=3))
    failing = "FAILED tests/test_a.py::test_one - assert 1 == 2\n1 failed"
    run(breaker, "Bash", failing, error=True, exit_code=1, command="pytest -q")
    edit(breaker, "a.py", 1)
    edit(breaker, "a.py", 2)
    run(breaker, "Bash", failing, error=True, exit_code=1, command="pytest -q")
    trip = edit(breaker, "a.py", 3)
    assert trip is not None and trip.kind is BreakerKind.UNVERIFIED_EDITS
    assert "run `pytest -q`" in trip.evidence  # the trip names the check to run


def test_a_verify_whose_failures_changed_resets_the_edit_count() -> None:
    """Working through a failing build: each run that fails otherwise is progress."""
    breaker = AgentBreaker(limits=BreakerLimits(max_edits_without_verify=3))
    errors = [f"src/m{n}.ts(4,2): error TS2322: Type 'x' is not assignable" for n in range(6)]
    for fixed in range(4):
        edit(breaker, "a.ts", fixed * 10)
        edit(breaker, "a.ts", fixed * 10 + 1)
        text = "\n".join(errors[fixed:])
        assert run(breaker, "Bash", text, error=True, exit_code=2, command="npx tsc") is None
        assert breaker.edits_since_verify == 0


def test_the_soft_trip_names_the_given_check() -> None:
    breaker = AgentBreaker(
        limits=BreakerLimits(max_edits_without_verify=2), verify_command="npm run build"
    )
    edit(breaker, "a.ts", 1)
    trip = edit(breaker, "a.ts", 2)
    assert trip is not None and "run `npm run build`" in trip.evidence


def test_a_piped_verify_with_a_failure_summary_does_not_count_as_passing() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_edits_without_verify=3))
    edit(breaker, "a.py", 1)
    edit(breaker, "a.py", 2)
    run(breaker, "Bash", "== 2 failed, 3 passed ==", exit_code=0, command="pytest | tail -3")
    assert breaker.edits_since_verify == 2


def test_a_passing_verify_clears_an_unverified_edits_trip() -> None:
    notices: list[NoticeKind] = []
    breaker = AgentBreaker(limits=BreakerLimits(max_edits_without_verify=2))
    breaker.add_listener(lambda notice: notices.append(notice.kind))
    edit(breaker, "a.py", 1)
    assert edit(breaker, "a.py", 2) is not None
    run(breaker, "Bash", "ok", exit_code=0, command="cargo test")
    assert breaker.trip is None and breaker.state is BreakerState.ARMED
    assert notices == [NoticeKind.TRIPPED, NoticeKind.CLEARED]


def test_a_passing_verify_never_clears_another_trip() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_failures=2))
    run(breaker, "Bash", "no", error=True, command="ls x")
    assert run(breaker, "Bash", "no2", error=True, command="ls y") is not None
    run(breaker, "Bash", "ok", exit_code=0, command="pytest")
    assert breaker.trip is not None and breaker.trip.kind is BreakerKind.CONSECUTIVE_FAILURES


# -- loop ------------------------------------------------------------------------------


def test_loop_trips_on_the_fourth_identical_call_with_the_same_result() -> None:
    breaker = AgentBreaker()
    trips = [run(breaker, "Read", "same text", file_path="/r/a.py") for _ in range(4)]
    assert trips[:3] == [None, None, None]
    trip = trips[3]
    assert trip is not None and trip.kind is BreakerKind.LOOP and trip.wants_snapshot
    assert trip.count == 4 and trip.limit == 4


def test_loop_key_ignores_argument_order() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_repeat_identical=2))
    run(breaker, "Grep", "x", pattern="foo", path="src")
    tool_call = ToolCall(call_id="z", name="Grep", arguments={"path": "src", "pattern": "foo"})
    trip = breaker.observe(tool_call)
    assert trip is not None and trip.kind is BreakerKind.LOOP


def test_passing_verifies_are_not_counted_as_loops() -> None:
    breaker = AgentBreaker()
    for _ in range(8):
        assert run(breaker, "Bash", "5 passed", exit_code=0, command="pytest -q") is None
    assert breaker.trip is None


def test_a_read_whose_result_changed_is_a_wait_not_a_loop() -> None:
    breaker = AgentBreaker()
    for n in range(8):
        assert run(breaker, "Read", f"log line {n}", file_path="/r/build.log") is None
    assert breaker.trip is None
    assert breaker.consecutive_polls == 7  # every changed read after the first is a wait


def test_identical_calls_with_different_arguments_are_not_a_loop() -> None:
    breaker = AgentBreaker()
    for n in range(10):
        assert run(breaker, "Read", "same", file_path=f"/r/{n}.py") is None


# -- command failures -------------------------------------------------------------------


def test_same_command_same_error_trips_command_failures() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_failures=99))
    error = "error[E0308]: mismatched types at src/lib.rs:10:5 (took 1.2s)"
    trips = [
        run(breaker, "Bash", error.replace("10", str(n)), error=True, command="cargo build")
        for n in range(3)
    ]
    trip = trips[2]
    assert trips[:2] == [None, None]
    assert trip is not None and trip.kind is BreakerKind.COMMAND_FAILURES
    assert "cargo build" in trip.evidence


def test_a_build_failing_differently_three_times_is_iteration() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_failures=99))
    for error in ("error: missing semicolon", "error: unknown name foo", "error: type mismatch"):
        assert run(breaker, "Bash", error, error=True, command="cargo build") is None
    assert breaker.trip is None


def test_command_failures_reset_when_the_command_succeeds() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_failures=99))
    for _ in range(2):
        run(breaker, "Bash", "error: boom", error=True, command="make lint")
    run(breaker, "Bash", "clean", exit_code=0, command="make lint")
    for _ in range(2):
        assert run(breaker, "Bash", "error: boom", error=True, command="make lint") is None


# -- consecutive failures -----------------------------------------------------------------


def test_consecutive_failures_trip_at_three() -> None:
    breaker = AgentBreaker()
    assert run(breaker, "Read", "no such file", error=True, file_path="/r/x") is None
    assert run(breaker, "Bash", "exit 1", error=True, command="ls nope") is None
    trip = run(breaker, "Grep", "bad regex", error=True, pattern="(")
    assert trip is not None and trip.kind is BreakerKind.CONSECUTIVE_FAILURES


def test_a_success_between_failures_resets_the_run() -> None:
    breaker = AgentBreaker()
    run(breaker, "Read", "no such file", error=True, file_path="/r/x")
    run(breaker, "Bash", "exit 1", error=True, command="ls nope")
    run(breaker, "Read", "content", file_path="/r/y")
    assert run(breaker, "Bash", "exit 1", error=True, command="ls nope2") is None


def test_a_call_cancelled_because_a_sibling_errored_is_not_a_failure() -> None:
    breaker = AgentBreaker()
    calls = [call("Read", file_path=f"/r/{n}") for n in range(4)]
    events: list[Event] = [*calls]
    events.append(result(calls[0], "boom", is_error=True))
    events.extend(result(c, "Sibling tool call errored", is_error=True, cancelled=True)
                  for c in calls[1:])  # fmt: skip
    assert feed(breaker, events) == []
    assert breaker.consecutive_failures == 1


def test_a_timed_out_wait_is_not_a_failure() -> None:
    breaker = AgentBreaker()
    for seconds in (30, 60, 90):
        trip = run(breaker, "Bash", "Command timed out after 2m 0s", error=True,
                   command=f"sleep {seconds} && gh pr checks 4")  # fmt: skip
        assert trip is None
    assert breaker.consecutive_failures == 0


# -- no progress ---------------------------------------------------------------------------


def test_only_polling_trips_no_progress() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_polls=5))
    trips = [run(breaker, "TaskOutput", "still running", task_id="b1") for _ in range(5)]
    assert trips[:4] == [None] * 4
    trip = trips[4]
    assert trip is not None and trip.kind is BreakerKind.NO_PROGRESS


def test_polls_are_exempt_from_the_loop_count() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_polls=50))
    for _ in range(10):
        assert run(breaker, "TaskOutput", "same", task_id="b1") is None


def test_reading_a_file_a_background_command_writes_is_a_poll() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_polls=30))
    run(breaker, "Bash", "started", command="pytest > /tmp/out.log 2>&1", run_in_background=True)
    for _ in range(6):  # the same (empty) content every time: still a wait
        assert run(breaker, "Read", "", file_path="/tmp/out.log") is None
    assert breaker.consecutive_polls == 6


def test_rereading_a_file_nothing_writes_counts_as_a_loop() -> None:
    breaker = AgentBreaker()
    run(breaker, "Bash", "started", command="pytest > /tmp/out.log", run_in_background=True)
    trips = [run(breaker, "Read", "same", file_path="/r/other.py") for _ in range(4)]
    assert trips[3] is not None and trips[3].kind is BreakerKind.LOOP


def test_a_text_only_turn_is_not_a_poll() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_polls=3))
    run(breaker, "TaskOutput", "running", task_id="b")
    run(breaker, "TaskOutput", "running", task_id="b")
    events: list[Event] = [Turn(number=n) for n in range(5)]
    events += [Message(text="still waiting for the build") for _ in range(5)]
    assert feed(breaker, events) == []
    assert breaker.consecutive_polls == 2


def test_real_work_between_polls_resets_no_progress() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_polls=3))
    for n in range(6):
        assert run(breaker, "TaskOutput", "running", task_id="b") is None
        assert edit(breaker, "a.py", n) is None


# -- tool budget, blast radius, session time --------------------------------------------


def test_tool_budget_warns_once_at_80_percent_then_trips_over_the_budget() -> None:
    notices: list[str] = []
    breaker = AgentBreaker(limits=BreakerLimits(max_tool_calls=10))
    breaker.add_listener(lambda notice: notices.append(notice.kind.value))
    trips = [run(breaker, "Read", f"t{n}", file_path=f"/r/{n}") for n in range(11)]
    assert trips[:10] == [None] * 10
    trip = trips[10]
    assert trip is not None and trip.kind is BreakerKind.TOOL_BUDGET
    assert notices == ["warned", "tripped"]
    assert breaker.warned


def test_tool_budget_at_exactly_the_budget_does_not_trip() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_tool_calls=10))
    assert all(run(breaker, "Read", f"t{n}", file_path=f"/r/{n}") is None for n in range(10))


def test_blast_radius_trips_past_the_distinct_file_limit() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_files_touched=3))
    assert [edit(breaker, f"f{n}.py", n) for n in range(3)] == [None] * 3
    trip = edit(breaker, "f3.py", 3)
    assert trip is not None and trip.kind is BreakerKind.BLAST_RADIUS


def test_editing_the_same_files_again_is_not_blast_radius() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_files_touched=3))
    for n in range(12):
        assert edit(breaker, f"f{n % 3}.py", n) is None
        if n % 4 == 3:
            run(breaker, "Bash", "ok", exit_code=0, command="make test")


def test_session_time_trips_after_the_wall_clock() -> None:
    clock = Clock()
    breaker = AgentBreaker(limits=BreakerLimits(max_session_minutes=90), clock=clock)
    clock.now += 90 * 60
    assert breaker.observe(Turn(number=1)) is None
    clock.now += 1
    trip = breaker.observe(Turn(number=2))
    assert trip is not None and trip.kind is BreakerKind.SESSION_TIME and trip.at == clock.now


# -- first trip wins, statistics ---------------------------------------------------------


def test_the_first_trip_wins() -> None:
    clock = Clock()
    breaker = AgentBreaker(limits=BreakerLimits(max_consecutive_failures=1), clock=clock)
    first = run(breaker, "Bash", "boom", error=True, command="false")
    clock.now += 10_000
    assert run(breaker, "Bash", "boom", error=True, command="false") is None
    assert first is not None and breaker.trip == first


def test_statistics_snapshot() -> None:
    breaker = AgentBreaker()
    edit(breaker, "a.py")
    stats = breaker.statistics()
    assert (stats.tool_calls, stats.edits_since_verify, stats.files_touched) == (1, 1, 1)
    assert stats.state is BreakerState.ARMED and stats.trip is None


@pytest.mark.parametrize("kind", list(BreakerKind))
def test_only_unverified_edits_skips_the_snapshot(kind: BreakerKind) -> None:
    assert kind.wants_snapshot is (kind is not BreakerKind.UNVERIFIED_EDITS)
    trip = Trip(kind=kind, evidence="the evidence", count=1, limit=1, at=0.0)
    message = trip.message("t1")
    assert kind.label in message and "the evidence" in message
    if kind is BreakerKind.UNVERIFIED_EDITS:
        assert "a run that passes, or fails otherwise than before, clears" in message
    else:
        assert "seawall reset --agent t1" in message and "No self-service" in message


# -- every limit is read from BreakerLimits: trips exactly at it, not one call before ----


def _scenario(kind: BreakerKind, breaker: AgentBreaker, n: int) -> Trip | None:
    """The n-th step (0-based) of a run that drives ``kind`` towards its limit."""
    if kind is BreakerKind.UNVERIFIED_EDITS:
        return edit(breaker, "a.py", n)
    if kind is BreakerKind.LOOP:
        return run(breaker, "Glob", "same", pattern="**/*.py")
    if kind is BreakerKind.COMMAND_FAILURES:
        return run(breaker, "Bash", "error: same", error=True, command="make")
    if kind is BreakerKind.CONSECUTIVE_FAILURES:
        return run(breaker, "Bash", f"error: {n}", error=True, command=f"cmd{n}")
    if kind is BreakerKind.NO_PROGRESS:
        return run(breaker, "BashOutput", "running", bash_id="b")
    if kind is BreakerKind.TOOL_BUDGET:
        return run(breaker, "Read", f"r{n}", file_path=f"/r/{n}")
    if kind is BreakerKind.BLAST_RADIUS:
        trip = edit(breaker, f"f{n}.py", n)
        breaker.edits_since_verify = 0  # isolate from unverified-edits
        return trip
    raise AssertionError(kind)


LIMIT_TABLE = [
    (BreakerKind.UNVERIFIED_EDITS, "max_edits_without_verify", 7, 7),
    (BreakerKind.LOOP, "max_repeat_identical", 6, 6),
    (BreakerKind.COMMAND_FAILURES, "max_same_command_failures", 5, 5),
    (BreakerKind.CONSECUTIVE_FAILURES, "max_consecutive_failures", 5, 5),
    (BreakerKind.NO_PROGRESS, "max_consecutive_polls", 9, 9),
    (BreakerKind.TOOL_BUDGET, "max_tool_calls", 9, 10),  # a budget: exceeded, not reached
    (BreakerKind.BLAST_RADIUS, "max_files_touched", 4, 5),
]


@pytest.mark.parametrize(("kind", "field", "limit", "trips_at"), LIMIT_TABLE, ids=str)
def test_every_limit_is_honoured(kind: BreakerKind, field: str, limit: int, trips_at: int) -> None:
    generous: dict[str, Any] = {"max_consecutive_failures": 10_000, "max_repeat_identical": 10_000}
    limits = BreakerLimits(**{**generous, field: limit})  # only the breaker under test bites
    breaker = AgentBreaker(limits=limits)
    trips = [_scenario(kind, breaker, n) for n in range(trips_at)]
    assert trips[:-1] == [None] * (trips_at - 1)
    last = trips[-1]
    assert last is not None and last.kind is kind and last.limit == limit


# -- scope denials ----------------------------------------------------------------------

DENIED = "seawall scope-denied: src/other.py is outside the scope (this task may change: src/a.py)"


def test_scope_denials_are_not_consecutive_failures() -> None:
    breaker = AgentBreaker()
    for n in range(5):
        assert run(breaker, "Edit", DENIED, error=True, file_path=f"/r/o{n}.py") is None
    assert breaker.consecutive_failures == 0 and breaker.scope_denials == 5
    assert run(breaker, "Bash", "exit 1", error=True, command="ls nope") is None


def test_scope_denials_trip_their_own_breaker_at_the_limit() -> None:
    breaker = AgentBreaker(limits=BreakerLimits(max_scope_denials=3))
    blocked = "seawall command-blocked: `git push -f`: a force push rewrites shared history"
    assert run(breaker, "Write", DENIED, error=True, file_path="/r/o.py") is None
    assert run(breaker, "Bash", blocked, error=True, command="git push -f") is None
    trip = run(breaker, "Edit", DENIED, error=True, file_path="/r/p.py")
    assert trip is not None and trip.kind is BreakerKind.SCOPE_DENIALS
    assert "3 calls denied by the scope guard" in trip.evidence


def test_scope_denial_count_survives_a_save() -> None:
    breaker = AgentBreaker()
    run(breaker, "Edit", DENIED, error=True, file_path="/r/o.py")
    assert AgentBreaker.resumed(breaker.saved()).scope_denials == 1


def test_normal_path_is_normpath_for_every_short_path() -> None:
    parts = ("a", ".", "/", "b.py", "..", "x/")
    for size in range(1, 6):
        for combination in itertools.product(parts, repeat=size):
            path = "".join(combination)
            assert normal_path(path) == os.path.normpath(path), path
    assert normal_path("") == os.path.normpath("")
