"""``budgets.session_minutes``: the session's own running time halts it, precisely and
resumably, measured on an injected clock (nothing here waits for real time)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import jsonschema

from seawall.adapters.runners.callable import CallableRunner
from seawall.codec import decode, encode
from seawall.exitcodes import ExitCode
from seawall.plan import parse_plan
from seawall.runner import AgentRequest, EmitFn
from seawall.session.clock import SessionClock
from seawall.session.engine import Session
from seawall.session.step_types import load_schema
from seawall.state.ledger import HaltReason, SessionPhase, SessionState
from seawall.state.store import StateStore
from seawall.telemetry import SessionHalted, read_events
from tests.integration.sessionkit import make_repo, seawall, show
from tests.reliability.kit import ledger

PLAN = """
[session]
name = "clocked"
isolation = "worktree"

[session.budgets]
session_minutes = 60

[[task]]
id = "a"
prompt = "a"
scope = ["a.txt"]

[[task]]
id = "b"
prompt = "b"
scope = ["b.txt"]
depends_on = ["a"]

[[task]]
id = "c"
prompt = "c"
scope = ["c.txt"]
depends_on = ["b"]
"""


class FakeClock:
    """Monotonic seconds that move only when a test moves them."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _runner(clock: FakeClock, minutes: float) -> CallableRunner:
    async def agent(request: AgentRequest, emit: EmitFn) -> str:
        clock.now += minutes * 60.0  # the agent's work takes this long
        (request.workspace / f"{request.task_id}.txt").write_text("work\n")
        return "STATUS: done — wrote it"

    return CallableRunner(agent)


def test_the_session_halts_past_its_minutes_and_resume_grants_as_many_again(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    clock = FakeClock()
    session = Session(
        parse_plan(PLAN), repo=repo, runner=_runner(clock, 40), plan_text=PLAN, clock=clock
    )
    result = anyio.run(session.run)
    # wave 1 ran 40 minutes (time left: wave 2 starts), wave 2 ends at 80: no wave 3
    assert result.phase is SessionPhase.HALTED
    assert result.exit_code == ExitCode.HALTED
    assert result.waves == 2
    halt = result.halt
    assert halt is not None and halt.reason is HaltReason.SESSION_TIME
    assert halt.budget == "session_minutes"
    assert (halt.elapsed_s, halt.limit_s) == (4800.0, 3600.0)
    assert halt.detail == (
        "budgets.session_minutes: the session has run 80.0 of its 60 minutes; "
        "no new wave was started"
    )
    assert show(repo, "main", "b.txt") == "work\n"  # the dispatched wave finished and merged
    assert show(repo, "main", "c.txt") is None
    state = ledger(repo)  # valid, and STATE.md is rendered from it
    assert state.running_s == 4800.0 and state.clock_start_s == 0.0
    state_md = (repo / ".seawall" / result.session / "STATE.md").read_text()
    assert "session-time" in state_md and "80.0 of its 60 minutes" in state_md
    halted = read_events(repo / ".seawall" / result.session / "events.jsonl", SessionHalted)
    assert [(e.reason, e.elapsed_s, e.limit_s) for e in halted] == [
        ("session-time", 4800.0, 3600.0)
    ]

    clock.now += 24 * 3600.0  # a day passes before someone resumes: it does not count
    again = Session.open(repo, result.session, runner=_runner(clock, 40), clock=clock)
    resumed = anyio.run(again.resume)
    assert resumed.phase is SessionPhase.DONE, resumed.halt
    assert show(repo, "main", "c.txt") == "work\n"
    state = ledger(repo)
    assert state.running_s == 7200.0  # 80 minutes, then 40 more
    assert state.clock_start_s == 4800.0  # the new allowance began where the halt was


def test_without_the_budget_the_clock_only_counts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    clock = FakeClock()
    plan = PLAN.replace("[session.budgets]\nsession_minutes = 60\n", "")
    session = Session(
        parse_plan(plan), repo=repo, runner=_runner(clock, 400), plan_text=plan, clock=clock
    )
    result = anyio.run(session.run)
    assert result.phase is SessionPhase.DONE and result.waves == 3
    assert ledger(repo).running_s == 3 * 400 * 60.0


def test_the_count_goes_on_across_processes_and_skips_the_time_between() -> None:
    state = SessionState(session="s", name="s", repo="/r", target_branch="main", start_commit="0")
    clock = FakeClock()
    first = SessionClock(clock)
    first.tick(state)  # not started: nothing is counted
    assert state.running_s == 0.0
    first.start()
    clock.now += 90.0
    first.tick(state)
    clock.now += 30.0
    first.tick(state)
    assert state.running_s == 120.0
    clock.now += 3600.0  # the coordinator is dead for an hour
    resumed = SessionClock(clock)  # a new process resumes from the same ledger
    resumed.start()
    clock.now += 60.0
    resumed.tick(state)
    assert state.running_s == 180.0
    assert SessionClock.elapsed(state) == 180.0
    SessionClock.grant(state)
    assert SessionClock.elapsed(state) == 0.0 and state.clock_start_s == 180.0
    # the ledger keeps both through its file format
    again = decode(encode(state), SessionState)
    assert (again.running_s, again.clock_start_s) == (180.0, 180.0)


def _has_run(repo: Path, minutes: float) -> None:
    """Record in the session's ledger that seawall has run it for ``minutes``."""
    (path,) = (repo / ".seawall").glob("*/state.json")
    store = StateStore(repo, path.parent.name)
    state = store.load()
    state.running_s = minutes * 60.0
    store.save(state)


def test_step_mode_halts_past_its_minutes_as_run_does(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    clock = FakeClock()
    session = Session(parse_plan(PLAN), repo=repo, plan_text=PLAN, clock=clock)
    prepared = anyio.run(session.prepare_wave)
    assert prepared is not None and prepared.wave == 1
    (Path(prepared.agents[0].workspace) / "a.txt").write_text("work\n")
    anyio.run(session.review_wave, {"a": "STATUS: done — wrote it"})
    assert session.state is not None
    session.state.running_s = 61 * 60.0  # the lead's calls have taken 61 minutes

    assert anyio.run(session.prepare_wave) is None
    assert session.result().exit_code == ExitCode.HALTED
    state = ledger(repo)
    assert state.phase is SessionPhase.HALTED and len(state.waves) == 1
    assert state.halt is not None and state.halt.reason == "session-time"
    assert state.halt.detail == (
        "budgets.session_minutes: the session has run 61.0 of its 60 minutes; "
        "no new wave was started"
    )
    assert show(repo, "main", "a.txt") == "work\n"

    again = Session.open(repo, state.session, runner=_runner(clock, 1), clock=clock)
    assert anyio.run(again.resume).phase is SessionPhase.DONE
    assert show(repo, "main", "c.txt") == "work\n"


def test_the_step_mode_commands_halt_with_exit_code_3(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    for command in (["next"], ["wave", "prepare"]):
        repo = make_repo(tmp_path / command[-1])
        where = ("--repo", str(repo))
        first = json.loads(seawall("next", str(plan), *where, cwd=repo, check=True).stdout)
        (agent,) = first["wave"]["agents"]
        (Path(agent["workspace"]) / "a.txt").write_text("work\n")
        outputs = json.dumps({"outputs": {"a": "STATUS: done — wrote it"}})
        seawall("wave", "review", *where, cwd=repo, stdin=outputs, check=True)
        _has_run(repo, 75)

        halted = seawall(*command, *where, cwd=repo)
        assert halted.returncode == ExitCode.HALTED, halted.stderr
        answer = json.loads(halted.stdout)
        jsonschema.validate(answer, load_schema(answer["schema"]))
        assert answer["phase"] == "halted" and answer["halt"]["reason"] == "session-time"
        assert "75.0 of its 60 minutes" in answer["halt"]["detail"]
        assert "75.0 of its 60 minutes" in halted.stderr
        assert ledger(repo).phase is SessionPhase.HALTED
