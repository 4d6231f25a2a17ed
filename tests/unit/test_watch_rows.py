"""The rows of ``seawall watch``, built from a session's files written by hand."""

from __future__ import annotations

from pathlib import Path

from seawall.breakers import BreakerKind
from seawall.codec import encode
from seawall.model import Enforcement, Isolation, RunCounts, Status, Task
from seawall.state import AgentRecord, SessionPhase, SessionState, StateStore, WavePhase
from seawall.state import WaveRecord as LedgerWave
from seawall.state.live import LiveCounts, live_path, request_stop, session_stop_path, write_live
from seawall.state.runs import AgentRun
from seawall.telemetry import BreakerTripped
from seawall.watch.rows import SessionReader, read_view
from seawall.watch.screen import render_view

NOW = 1_000_000.0
PLAN = """
[session]
name = "demo"
[session.budgets]
cost_usd = 5.0
session_minutes = 60
[[task]]
id = "api"
prompt = "api"
[[task]]
id = "docs"
prompt = "docs"
[[task]]
id = "ui"
prompt = "ui"
"""


def _wave(number: int, phase: WavePhase, tasks: list[str]) -> LedgerWave:
    return LedgerWave(
        number=number,
        tasks=[Task(id=task, prompt=task) for task in tasks],
        isolation=Isolation.WORKTREE,
        enforcement=Enforcement.STRICT,
        max_turns=40,
        phase=phase,
        agents=[AgentRecord(task=task) for task in tasks],
    )


def _session(tmp_path: Path) -> tuple[StateStore, SessionState]:
    store = StateStore(tmp_path, "demo-1")
    first = _wave(1, WavePhase.DONE, ["api"])
    first.agents[0] = AgentRecord(
        task="api",
        status=Status.DONE,
        merged=True,
        turns=7,
        tool_calls=12,
        cost_usd=0.5,
        input_tokens=1000,
        output_tokens=200,
        elapsed_s=61.0,
        last_tool="Edit",
    )
    state = SessionState(
        session="demo-1",
        name="demo",
        repo=str(tmp_path),
        target_branch="main",
        start_commit="0" * 40,
        plan_text=PLAN,
        waves=[first, _wave(2, WavePhase.DISPATCHED, ["docs", "ui"])],
        running_s=600.0,
    )
    store.save(state)
    return store, state


def _live(
    store: StateStore,
    task: str,
    *,
    turns: int = 0,
    tool_calls: int = 0,
    cost_usd: float = 0.0,
    last_tool: str = "",
) -> None:
    live = LiveCounts(
        task=task,
        wave=2,
        started_at=NOW - 42.0,
        updated_at=NOW - 5.0,
        turns=turns,
        tool_calls=tool_calls,
        cost_usd=cost_usd,
        last_tool=last_tool,
        max_turns=40,
        max_tool_calls=100,
        time_limit_s=1800.0,
    )
    write_live(live_path(store.paths, task, 2), live)


def test_a_running_agent_moves_with_the_clock_and_warns_near_its_budget(tmp_path: Path) -> None:
    store, _ = _session(tmp_path)
    _live(store, "docs", turns=3, tool_calls=85, cost_usd=0.25, last_tool="Bash")
    with store.lock():  # a coordinator runs the session
        first = SessionReader(store).read(now=NOW)
        later = SessionReader(store).read(now=NOW + 10)
    docs = next(a for a in first.agents if a.task == "docs")
    assert (docs.state, docs.running, docs.elapsed_s) == ("running", True, 42.0)
    assert (docs.turns, docs.tool_calls, docs.last_tool) == (3, 85, "Bash")
    assert docs.warnings == ("tool calls 85/100",)
    assert next(a for a in later.agents if a.task == "docs").elapsed_s == 52.0
    ui = next(a for a in first.agents if a.task == "ui")
    assert (ui.state, ui.running) == ("starting", False)  # no live file yet
    assert not first.ended and first.phase == "running"


def test_ended_agents_read_their_run_file_then_their_record(tmp_path: Path) -> None:
    store, _ = _session(tmp_path)
    _live(store, "docs", turns=1)
    run = AgentRun(
        task_id="ui",
        truncated=True,
        stop_reason="stopped by the user (seawall watch)",
        counts=RunCounts(turns=4, tool_calls=9, cost_usd=0.75, elapsed_s=30.5, last_tool="Grep"),
    )
    store.paths.agent_dir("ui").mkdir(parents=True)
    (store.paths.agent_dir("ui") / "w2-run.json").write_bytes(encode(run))
    store.events.append(
        BreakerTripped(wave=2, agent="docs", breaker=BreakerKind.LOOP, evidence="ls x4")
    )
    with store.lock():
        view = read_view(store, now=NOW)
    api, docs, ui = view.agents
    assert (api.wave, api.state, api.merge, api.elapsed_s, api.tokens) == (
        1,
        "done",
        "merged",
        61.0,
        1200,
    )
    assert (ui.state, ui.turns, ui.last_tool, ui.stop_reason) == (
        "stopped",
        4,
        "Grep",
        "stopped by the user (seawall watch)",
    )
    assert docs.trips == ("breaker/loop: ls x4",)
    assert view.cost_usd == 0.5 + 0.75
    assert view.spend() == ("$1.25 of $5.00", "1,200 tokens", "10.0 min of 60")
    assert [(w.number, w.phase) for w in view.waves] == [(1, "done"), (2, "dispatched")]


def test_a_session_nobody_runs_reads_interrupted_and_ended(tmp_path: Path) -> None:
    store, _ = _session(tmp_path)
    _live(store, "docs", turns=2)
    view = read_view(store, now=NOW)  # no coordinator holds the lock
    docs = next(a for a in view.agents if a.task == "docs")
    assert (view.phase, view.ended) == ("interrupted", True)
    assert (docs.state, docs.running, docs.elapsed_s) == ("interrupted", False, 37.0)
    assert "seawall resume" in view.note


def test_a_finished_session_ends_the_watch_and_shows_a_stop_asked(tmp_path: Path) -> None:
    store, state = _session(tmp_path)
    request_stop(session_stop_path(store.paths))
    with store.lock():
        assert read_view(store, now=NOW).stop_asked
    state.phase = SessionPhase.KILLED
    store.save(state)
    view = read_view(store, now=NOW)
    assert (view.phase, view.ended) == ("killed", True)


def test_the_screen_draws_every_row(tmp_path: Path) -> None:
    from rich.console import Console

    store, _ = _session(tmp_path)
    _live(store, "docs", turns=3, tool_calls=5, last_tool="Bash")
    with store.lock():
        view = read_view(store, now=NOW)
    console = Console(width=200, record=True, color_system=None)
    console.print(render_view(view, selected=1, message="asked", now=NOW))
    text = console.export_text()
    assert "demo-1" in text and "W1 done  W2 dispatched" in text
    assert "$0.50 of $5.00" in text
    assert "docs" in text and "42.0s" in text and "Bash" in text
    assert "s stop agent" in text and "asked" in text
