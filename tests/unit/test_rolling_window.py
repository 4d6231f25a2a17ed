"""The wave breaker in a rolling session: each review is judged with the last N reviews."""

from __future__ import annotations

from dataclasses import replace

import pytest

from seawall.breakers.wave import WaveTrigger
from seawall.errors import PlanError
from seawall.model import (
    Enforcement,
    Isolation,
    Schedule,
    SessionConfig,
    Status,
    Task,
    WaveBreakerConfig,
)
from seawall.plan.loader import parse_plan
from seawall.plan.render import render_plan
from seawall.session.rolling import in_flight, landed_ready
from seawall.session.wave_breaker import evaluate_wave, review_window
from seawall.state.ledger import AgentRecord, SessionState, WavePhase, WaveRecord
from seawall.state.render import render_state_md, timeline_line

ROLLING = SessionConfig(schedule=Schedule.ROLLING, max_agents_per_wave=3)


def _state() -> SessionState:
    return SessionState(session="s", name="s", repo="/r", target_branch="main", start_commit="0")


def _review(state: SessionState, number: int, *, merged: bool, at: float) -> WaveRecord:
    task = Task(id=f"t{number}", prompt="p", scope=(f"f{number}",))
    wave = WaveRecord(
        number=number,
        tasks=[task],
        isolation=Isolation.WORKTREE,
        enforcement=Enforcement.WARN,
        max_turns=10,
        base="b",
        phase=WavePhase.DONE,
        finished_at=at,
        agents=[
            AgentRecord(
                task=task.id,
                status=Status.DONE if merged else Status.FAILED,
                merged=merged,
                touched=[f"f{number}"],
                error_signature="" if merged else f"error {number}",
            )
        ],
    )
    state.waves.append(wave)
    return wave


def test_the_window_is_the_last_reviews_in_the_order_they_ended() -> None:
    state = _state()
    first = _review(state, 1, merged=True, at=30.0)  # dispatched first, ended last
    second = _review(state, 2, merged=False, at=10.0)
    third = _review(state, 3, merged=False, at=20.0)
    fourth = _review(state, 4, merged=False, at=40.0)
    assert review_window(state, fourth, ROLLING) == [third, first, fourth]
    wider = replace(ROLLING, wave_breaker=WaveBreakerConfig(window=5))
    assert review_window(state, fourth, wider) == [second, third, first, fourth]
    # a wave session's breaker reads the wave alone
    assert review_window(state, fourth, SessionConfig()) == [fourth]


def test_a_stall_trips_only_when_the_window_merged_nothing_twice_in_a_row() -> None:
    state = _state()
    at = 0.0
    _review(state, 1, merged=True, at=at)
    trips: list[str | None] = []
    for number in range(2, 7):  # reviews that merge nothing, one after another
        at += 1.0
        wave = _review(state, number, merged=False, at=at)
        trips.append(evaluate_wave(state, wave, ROLLING))
    # window 3: reviews 2-3 still see review 1's merge; 4 and 5 see none: trips at 5
    assert trips[:3] == [None, None, None]
    assert trips[3] is not None and "stall" in trips[3]
    assert state.breaker is not None and state.breaker.trigger is WaveTrigger.STALL


def test_a_task_is_ready_only_once_its_dependency_landed() -> None:
    state = _state()
    dep = Task(id="dep", prompt="p", scope=("a",))
    child = Task(id="child", prompt="p", scope=("b",), depends_on=("dep",))
    other = Task(id="other", prompt="p", scope=("c",))
    state.pending = [child, other]
    running = WaveRecord(
        number=1,
        tasks=[dep],
        isolation=Isolation.WORKTREE,
        enforcement=Enforcement.WARN,
        max_turns=10,
        phase=WavePhase.DISPATCHED,
    )
    state.waves.append(running)
    assert in_flight(state) == {"dep"}
    assert [t.id for t in landed_ready(state)] == ["other"]
    running.phase = WavePhase.DONE
    assert [t.id for t in landed_ready(state)] == ["child", "other"]


def test_state_md_shows_each_dispatch_s_start_end_and_merge() -> None:
    state = _state()
    wave = _review(state, 1, merged=True, at=1_700_000_030.0)
    wave.started_at, wave.ended_at, wave.merged_at = 1_700_000_000.0, 1_700_000_012.5, 0.0
    assert render_state_md(state).count("timeline:") == 1
    line = timeline_line(wave)
    assert line == "  - timeline: started 22:13:20 · ended 22:13:32 (12.5 s)"
    wave.merged_at = 1_700_000_014.0
    assert timeline_line(wave) == f"{line} · merged 22:13:34"
    wave.ended_at = 0.0  # still running: no timeline yet
    assert timeline_line(wave) is None


def test_a_window_not_yet_full_is_not_judged_a_stall() -> None:
    state = _state()
    trips = [
        evaluate_wave(state, _review(state, number, merged=False, at=float(number)), ROLLING)
        for number in range(1, 5)
    ]
    # window 3: reviews 1-2 fill it, 3 is the first stalled window, 4 the second: trips
    assert trips[:3] == [None, None, None]
    assert trips[3] is not None and "stall" in trips[3]


def _plan(session: str) -> str:
    return f'[session]\nname = "p"\n{session}\n\n[[task]]\nid = "a"\nprompt = "x"\n'


def test_the_cap_is_max_agents_and_its_old_name_still_reads() -> None:
    assert parse_plan(_plan("max_agents = 3")).session.max_agents == 3
    assert parse_plan(_plan("max_agents_per_wave = 2")).session.max_agents == 2
    # a recorded plan is written with the new name and reads back the same
    plan = parse_plan(_plan('max_agents_per_wave = 2\nschedule = "rolling"'))
    assert "max_agents = 2" in render_plan(plan)
    assert parse_plan(render_plan(plan)).session == plan.session
    assert plan.session.schedule is Schedule.ROLLING


@pytest.mark.parametrize(
    ("session", "field", "line", "words"),
    [
        ("max_agents = 2\nmax_agents_per_wave = 3", "session.max_agents", 3, "old name"),
        ("max_agents = 0", "session.max_agents", 3, "at least 1"),
        ('schedule = "rolls"', "session.schedule", 3, "rolling"),
        ("[session.wave_breaker]\nwindow = -1", "session.wave_breaker.window", 4, "negative"),
    ],
)
def test_bad_schedule_settings_name_their_field_and_line(
    session: str, field: str, line: int, words: str
) -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(_plan(session), path="plan.toml")
    assert caught.value.field == field
    assert caught.value.line == line
    assert words in str(caught.value)
