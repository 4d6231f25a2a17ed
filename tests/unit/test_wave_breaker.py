"""The wave-level breaker (stall, identical failure, rework storm, cost drift, merge
conflict, one report per wave): triggers, state shape, resume."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from seawall.breakers import WaveBreaker, WaveReport, WaveTrigger, WaveTrip
from seawall.breakers.wave import WaveBreakerState, WaveCounters
from seawall.codec import decode, encode, from_data, to_data
from seawall.errors import StateError
from seawall.model import WaveBreakerConfig

PROGRESS = {"merged": 1, "new_commits": 1}


def wave(n: int, **fields: Any) -> WaveReport:
    return WaveReport(wave=n, **fields)


def test_two_waves_without_progress_trip_the_stall() -> None:
    breaker = WaveBreaker()
    assert breaker.record(wave(1)) is None
    trip = breaker.record(wave(2))
    assert trip is not None and trip.trigger is WaveTrigger.STALL
    assert trip.checkpoint.wave == 2


def test_progress_between_idle_waves_is_no_stall() -> None:
    breaker = WaveBreaker()
    for n in range(1, 7):
        fields = PROGRESS if n % 2 == 0 else {}
        assert breaker.record(wave(n, **fields)) is None


def test_a_new_commit_alone_is_progress() -> None:
    breaker = WaveBreaker()
    for n in range(1, 5):
        assert breaker.record(wave(n, new_commits=1)) is None


def test_a_build_failing_identically_twice_is_a_stall() -> None:
    breaker = WaveBreaker()
    first = "ERROR /tmp/b-1/src/a.ts:17 TS2345 not assignable\nDone in 4.2s"
    second = "ERROR /tmp/b-2/src/a.ts:19 TS2345 not assignable\nDone in 3.1s"
    assert breaker.record(wave(1, failures={"t1": (first,)}, **PROGRESS)) is None
    trip = breaker.record(wave(2, failures={"t1": (second,)}, redispatched=("t1",), **PROGRESS))
    assert trip is not None and trip.trigger is WaveTrigger.IDENTICAL_FAILURE
    assert "'t1'" in trip.detail and "2 consecutive" in trip.detail


def test_a_build_failing_differently_three_times_is_iteration() -> None:
    breaker = WaveBreaker()
    errors = ["error: missing semicolon", "error: unknown name foo", "error: type mismatch"]
    for n, error in enumerate(errors, start=1):
        report = wave(n, failures={"t1": (error,)}, redispatched=("t1",) if n > 1 else (),
                      **PROGRESS)  # fmt: skip
        assert breaker.record(report) is None


def test_the_same_failure_in_two_different_tasks_is_not_a_repeat() -> None:
    breaker = WaveBreaker()
    assert breaker.record(wave(1, failures={"t1": ("error: boom",)}, **PROGRESS)) is None
    assert breaker.record(wave(2, failures={"t2": ("error: boom",)}, **PROGRESS)) is None


def test_the_same_review_finding_fingerprint_twice_trips() -> None:
    breaker = WaveBreaker()
    breaker.record(wave(1, fingerprints={"t1": ("f-9a1c",)}, **PROGRESS))
    trip = breaker.record(wave(2, fingerprints={"t1": ("f-9a1c",)}, **PROGRESS))
    assert trip is not None and trip.trigger is WaveTrigger.IDENTICAL_FAILURE
    assert "finding" in trip.detail


def test_fingerprints_are_compared_verbatim_not_normalized() -> None:
    breaker = WaveBreaker()
    breaker.record(wave(1, fingerprints={"t1": ("a1b2c3d4e5",)}, **PROGRESS))
    assert breaker.record(wave(2, fingerprints={"t1": ("f6e5d4c3b2",)}, **PROGRESS)) is None


def test_more_than_three_redispatches_is_a_rework_storm() -> None:
    breaker = WaveBreaker()
    for n in range(1, 4):
        assert breaker.record(wave(n, redispatched=("t1",), **PROGRESS)) is None
    trip = breaker.record(wave(4, redispatched=("t1",), **PROGRESS))
    assert trip is not None and trip.trigger is WaveTrigger.REWORK_STORM
    assert "4 times" in trip.detail


def test_cost_over_the_budget_trips() -> None:
    breaker = WaveBreaker(cost_budget_usd=10.0)
    assert breaker.record(wave(1, cost_usd=6.0, **PROGRESS)) is None
    trip = breaker.record(wave(2, cost_usd=10.5, **PROGRESS))
    assert trip is not None and trip.trigger is WaveTrigger.COST_DRIFT
    assert "$10.50 of a $10.00" in trip.detail


def test_a_projected_next_wave_over_the_budget_trips_before_spending_it() -> None:
    breaker = WaveBreaker(cost_budget_usd=10.0)
    assert breaker.record(wave(1, cost_usd=4.0, projected_next_usd=5.0, **PROGRESS)) is None
    trip = breaker.record(wave(2, cost_usd=8.0, projected_next_usd=4.0, **PROGRESS))
    assert trip is not None and trip.trigger is WaveTrigger.COST_DRIFT
    assert "projected" in trip.detail


def test_a_token_budget_trips_like_a_cost_budget() -> None:
    breaker = WaveBreaker(token_budget=50_000)
    assert breaker.record(wave(1, tokens=49_999, **PROGRESS)) is None
    trip = breaker.record(wave(2, tokens=50_000, **PROGRESS))
    assert trip is not None and trip.trigger is WaveTrigger.COST_DRIFT
    assert "50000 of a 50000-token budget" in trip.detail


def test_no_budget_means_no_cost_trip() -> None:
    assert WaveBreaker().record(wave(1, cost_usd=1e6, **PROGRESS)) is None


def test_a_conflict_needing_reconciliation_trips() -> None:
    breaker = WaveBreaker()
    trip = breaker.record(wave(1, conflicts=("t2: src/a.py rewritten by t1",), **PROGRESS))
    assert trip is not None and trip.trigger is WaveTrigger.MERGE_CONFLICT
    assert "src/a.py" in trip.detail


def test_the_first_trigger_in_spec_order_wins() -> None:
    breaker = WaveBreaker(cost_budget_usd=1.0)
    breaker.record(wave(1))
    trip = breaker.record(wave(2, cost_usd=5.0, conflicts=("x",)))
    assert trip is not None and trip.trigger is WaveTrigger.STALL


def test_a_tripped_breaker_holds_its_first_trip() -> None:
    breaker = WaveBreaker()
    breaker.record(wave(1))
    first = breaker.record(wave(2))
    assert breaker.record(wave(3, conflicts=("x",))) is None
    assert breaker.trip == first


def test_disabled_never_trips_but_keeps_counting() -> None:
    breaker = WaveBreaker(WaveBreakerConfig(enabled=False))
    for n in range(1, 5):
        assert breaker.record(wave(n)) is None
    assert breaker.counters.stall_waves == 4


def test_state_shape_is_the_spec_shape_and_round_trips_through_json() -> None:
    breaker = WaveBreaker(clock=lambda: 0.0)
    breaker.record(wave(1, redispatched=("t1",)))
    breaker.record(wave(2, head="abc123"))
    state = json.loads(encode(breaker.state()))
    assert set(state) == {"tripped", "trigger", "detail", "checkpoint", "tripped_at", "counters"}
    assert state["tripped"] is True and state["trigger"] == "stall"
    assert state["checkpoint"] == {"wave": 2, "head": "abc123"}
    assert state["tripped_at"] == "1970-01-01T00:00:00Z"
    assert state["counters"]["rework_cycles"] == {"t1": 1}
    assert state["counters"]["last_report"]["head"] == "abc123"
    again = WaveBreaker(state=decode(json.dumps(state), WaveBreakerState))
    assert again.trip is not None and again.trip.trigger is WaveTrigger.STALL
    assert to_data(again.state()) == state


def test_the_saved_state_is_a_copy_the_breaker_does_not_change() -> None:
    breaker = WaveBreaker()
    breaker.record(wave(1, redispatched=("t1",)))
    saved = breaker.state()
    breaker.record(wave(2, redispatched=("t1",)))
    assert saved.counters.rework_cycles == {"t1": 1}
    assert breaker.counters.rework_cycles == {"t1": 2}


def test_counters_of_an_older_ledger_take_their_defaults() -> None:
    state = from_data({"tripped": False, "counters": {"stall_waves": 1}}, WaveBreakerState)
    assert state.counters == WaveCounters(stall_waves=1)
    assert WaveBreaker(state=state).counters.last_report is None


def test_an_unreadable_state_is_a_state_error() -> None:
    with pytest.raises(msgspec.ValidationError, match="trigger"):
        from_data({"tripped": True, "trigger": "nonsense", "counters": {}}, WaveBreakerState)
    with pytest.raises(StateError, match="without a trigger"):
        WaveBreaker(state=WaveBreakerState(tripped=True))


def test_the_trip_line_names_resume_and_kill() -> None:
    breaker = WaveBreaker()
    breaker.record(wave(1))
    trip = breaker.record(wave(2))
    assert isinstance(trip, WaveTrip)
    line = trip.line()
    assert "\n" not in line and "stall" in line and "wave 2" in line
    assert "`seawall resume`" in line and "`seawall kill`" in line


def test_resume_keeps_counters_and_the_same_stall_re_trips_at_once() -> None:
    breaker = WaveBreaker()
    breaker.record(wave(1))
    breaker.record(wave(2))
    assert breaker.resume() is None
    assert not breaker.tripped and breaker.counters.stall_waves == 2
    trip = breaker.record(wave(3))
    assert trip is not None and trip.trigger is WaveTrigger.STALL


def test_resume_after_a_fix_continues() -> None:
    breaker = WaveBreaker()
    breaker.record(wave(1))
    breaker.record(wave(2))
    breaker.resume()
    assert breaker.record(wave(3, **PROGRESS)) is None
    assert breaker.counters.stall_waves == 0


def test_resume_with_cost_still_over_budget_re_trips_immediately() -> None:
    breaker = WaveBreaker(cost_budget_usd=10.0)
    breaker.record(wave(1, cost_usd=12.0, **PROGRESS))
    again = breaker.resume()
    assert again is not None and again.trigger is WaveTrigger.COST_DRIFT
    assert breaker.tripped
    assert breaker.resume(cost_budget_usd=20.0) is None and not breaker.tripped


def test_resume_from_saved_state_re_trips_on_standing_cost() -> None:
    breaker = WaveBreaker(cost_budget_usd=10.0)
    breaker.record(wave(1, cost_usd=12.0, **PROGRESS))
    restored = WaveBreaker(
        cost_budget_usd=10.0, state=decode(encode(breaker.state()), WaveBreakerState)
    )
    trip = restored.resume()
    assert trip is not None and trip.trigger is WaveTrigger.COST_DRIFT


def test_listeners_hear_every_trip() -> None:
    heard: list[WaveTrigger] = []
    breaker = WaveBreaker()
    breaker.add_listener(lambda trip: heard.append(trip.trigger))
    breaker.record(wave(1, conflicts=("x",)))
    assert heard == [WaveTrigger.MERGE_CONFLICT]


def test_a_clean_rework_cycle_between_two_identical_failures_breaks_the_chain() -> None:
    breaker = WaveBreaker()
    assert breaker.record(wave(1, failures={"t1": ("error: boom",)}, **PROGRESS)) is None
    assert breaker.record(wave(2, redispatched=("t1",), **PROGRESS)) is None  # ran, passed
    report = wave(3, failures={"t1": ("error: boom",)}, redispatched=("t1",), **PROGRESS)
    assert breaker.record(report) is None
    assert breaker.counters.identical_failure_cycles["t1"] == 1
