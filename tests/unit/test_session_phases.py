"""Each phase of a wave, and ``loop.advance`` over them, on a context built by hand.

No ``Session``: the ``WaveContext`` the phases receive is made here from a real git
repository, a real ledger store, the scripted runner and the in-memory tracker, so each
phase is seen doing its one step and leaving the ledger in the phase that follows.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest

from seawall.adapters.runners.scripted import AgentScript, Edit, ScriptedRunner
from seawall.adapters.trackers.memory import MemoryTracker
from seawall.carryover import CarryoverFiler
from seawall.git.repo import ensure_excluded, open_repository, pin_base
from seawall.model import Plan, Status
from seawall.plan.loader import parse_plan
from seawall.report.progress import quiet_progress
from seawall.scope.manifest import load_manifest
from seawall.session.clock import SessionClock
from seawall.session.context import WaveContext
from seawall.session.loop import advance
from seawall.session.phases.dispatch import dispatch
from seawall.session.phases.finish import finish_session
from seawall.session.phases.merge import merge
from seawall.session.phases.planning import plan_next
from seawall.session.phases.prepare import prepare
from seawall.session.phases.recover import recover
from seawall.session.phases.review import review, settle_in_place
from seawall.state.ledger import SessionPhase, SessionState, WavePhase, WaveRecord
from seawall.state.store import StateStore

PLAN = """
[session]
name = "unit"
type = "feature"

[[task]]
id = "parser"
prompt = "Add the parser."
scope = ["src/parser.py"]

[[task]]
id = "report"
prompt = "Add the report."
scope = ["src/report.py"]

[[task]]
id = "docs"
prompt = "Document the parser."
scope = ["docs/parser.md"]
depends_on = ["parser"]
"""

SCRIPTS: dict[str, AgentScript | list[AgentScript]] = {
    "parser": AgentScript(
        steps=(Edit(path="src/parser.py", content="def parse(): ...\n"),),
        final="Added it.\nSTATUS: done — parser added",
    ),
    "report": [  # the n-th dispatch follows the n-th script
        AgentScript(final="STATUS: failed — No module named 'csvkit'"),
        AgentScript(
            steps=(Edit(path="src/report.py", content="import csv\n"),),
            final="STATUS: done — std csv",
        ),
    ],
    "docs": AgentScript(
        steps=(Edit(path="docs/parser.md", content="# parse()\n"),),
        final="STATUS: done — documented",
    ),
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "seawall test")
    git(path, "config", "user.email", "test@seawall.invalid")
    git(path, "config", "commit.gpgsign", "false")
    (path / "src").mkdir()
    (path / "src" / "__init__.py").write_text("")
    (path / "README.md").write_text("# project\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


class Context:
    """A hand-built ``WaveContext`` and the fakes behind it."""

    def __init__(self, repo: Path, plan: Plan, *, clock: Callable[[], float] = time.monotonic):
        self.runner = ScriptedRunner(SCRIPTS)
        self.tracker = MemoryTracker()
        store = StateStore(repo, "unit-1")
        ensure_excluded(open_repository(repo))
        pin = pin_base(repo)
        state = SessionState(
            session="unit-1",
            name=plan.session.name,
            repo=str(repo),
            target_branch=pin.branch,
            start_commit=pin.commit,
            created_at=round(time.time(), 3),
            pending=list(plan.tasks),
        )
        for task in plan.tasks:
            state.task(task.id).origin = task
        filer = CarryoverFiler(
            self.tracker,
            session=state.session,
            label=plan.session.tracker.label,
            events=store.events,
            lock_path=repo / ".seawall" / "carryover.lock",
        )
        session_clock = SessionClock(clock)
        session_clock.start()
        self.saves = 0

        async def save() -> None:
            self.saves += 1
            session_clock.tick(state)
            store.save(state)

        self.ctx = WaveContext(
            repo=repo,
            state=state,
            plan=plan,
            store=store,
            progress=quiet_progress(),
            clock=session_clock,
            save=save,
            runner_for=lambda task: self.runner,
            filer=lambda: filer,
            tracker=lambda: self.tracker,
        )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def context(repo: Path) -> Context:
    return Context(repo, parse_plan(PLAN))


def run(step: Callable[[], Awaitable[object]]) -> None:
    async def main() -> None:
        await step()

    anyio.run(main)


def first_wave(context: Context) -> WaveRecord:
    wave = context.ctx.state.current_wave
    assert wave is not None
    return wave


def phase(wave: WaveRecord) -> WavePhase:
    """The wave's phase, read afresh (each step moves it)."""
    return wave.phase


def agents(wave: WaveRecord) -> dict[str, Status | None]:
    return {agent.task: agent.status for agent in wave.agents}


def test_planning_takes_the_ready_tasks_and_leaves_their_dependants(context: Context) -> None:
    run(lambda: plan_next(context.ctx))
    wave = first_wave(context)
    assert wave.number == 1 and wave.phase is WavePhase.PLANNED
    assert sorted(task.id for task in wave.tasks) == ["parser", "report"]
    assert [task.id for task in context.ctx.state.pending] == ["docs"]
    assert context.saves >= 1  # the planned wave is in the ledger before anything runs


def test_preparing_decides_isolation_and_writes_the_scope_manifest(context: Context) -> None:
    run(lambda: plan_next(context.ctx))
    wave = first_wave(context)
    run(lambda: prepare(context.ctx, wave))
    assert phase(wave) is WavePhase.PREPARED
    assert wave.isolation_reason  # the decision says why
    assert (context.ctx.paths.wave_dir(1) / "scope.json").is_file()
    assert sorted(agent.task for agent in wave.agents) == ["parser", "report"]
    assert context.runner.requests == []  # nothing dispatched yet


def test_the_breakers_get_the_check_a_soft_trip_names(repo: Path) -> None:
    """The plan's first verify-run check goes into the limits of the hooks' manifest and
    of every dispatched agent's breaker; without one, the project's own command does."""
    with_checks = PLAN.replace(
        'type = "feature"',
        'type = "feature"\nchecks = ["ruff check .", "pytest -q"]\nchecks_policy = "warn"',
    )
    context = Context(repo, parse_plan(with_checks))
    run(lambda: plan_next(context.ctx))
    wave = first_wave(context)
    run(lambda: prepare(context.ctx, wave))
    manifest = load_manifest(context.ctx.paths.wave_dir(1) / "scope.json")
    assert manifest.limits.verify_command == "pytest -q"
    (repo / "go.mod").write_text("module x\n")
    assert Context(repo, parse_plan(PLAN)).ctx.breaker_limits().verify_command == "go test ./..."


def test_dispatch_runs_every_agent_once_and_records_each_run(context: Context) -> None:
    run(lambda: plan_next(context.ctx))
    wave = first_wave(context)
    run(lambda: prepare(context.ctx, wave))
    run(lambda: dispatch(context.ctx, wave))
    assert phase(wave) is WavePhase.DISPATCHED
    assert context.runner.dispatches("parser") == context.runner.dispatches("report") == 1
    assert all(agent.run is not None for agent in wave.agents)
    assert "TURN LIMIT" in context.runner.requests[0].prompt


def test_review_reads_each_status_and_merge_lands_only_the_done_work(
    context: Context, repo: Path
) -> None:
    run(lambda: plan_next(context.ctx))
    wave = first_wave(context)
    run(lambda: prepare(context.ctx, wave))
    run(lambda: dispatch(context.ctx, wave))
    run(lambda: settle_in_place(context.ctx, wave))
    run(lambda: review(context.ctx, wave))
    assert phase(wave) is WavePhase.REVIEWED
    assert agents(wave) == {"parser": Status.DONE, "report": Status.FAILED}
    run(lambda: merge(context.ctx, wave))
    assert phase(wave) is WavePhase.MERGED
    assert git(repo, "show", "main:src/parser.py") == "def parse(): ...\n"
    assert {agent.task: agent.merged for agent in wave.agents} == {"parser": True, "report": False}


def test_recovery_ends_the_wave_and_queues_what_is_left(context: Context) -> None:
    run(lambda: plan_next(context.ctx))
    wave = first_wave(context)
    for step in (prepare, dispatch, settle_in_place, review, merge, recover):
        run(lambda step=step: step(context.ctx, wave))  # type: ignore[misc]
    assert phase(wave) is WavePhase.DONE
    pending = sorted(task.id for task in context.ctx.state.pending)
    assert "docs" in pending  # its dependency landed: it can run next
    assert any(task.startswith("report") for task in pending)  # the failure is retried


def test_advance_runs_the_session_wave_by_wave_to_its_end(context: Context, repo: Path) -> None:
    steps = 0

    async def drive() -> None:  # as the engine drives it
        nonlocal steps
        while context.ctx.state.phase is SessionPhase.RUNNING:
            if not await advance(context.ctx):
                await finish_session(context.ctx)
                break
            steps += 1
            assert steps < 10, "advance never said it was done"

    anyio.run(drive)
    state = context.ctx.state
    assert steps >= 2 and len(state.waves) >= 2
    assert all(wave.phase is WavePhase.DONE for wave in state.waves)
    assert git(repo, "show", "main:docs/parser.md") == "# parse()\n"
    assert git(repo, "show", "main:src/parser.py") == "def parse(): ...\n"
    assert git(repo, "show", "main:src/report.py") == "import csv\n"  # on its second try
    assert context.runner.dispatches("report") == 2
    assert state.phase is SessionPhase.DONE and not state.pending


def test_advance_halts_before_a_new_wave_past_the_session_time(repo: Path) -> None:
    now = [0.0]
    plan = parse_plan(
        PLAN.replace('type = "feature"', 'type = "feature"\n[session.budgets]\nsession_minutes = 1')
    )
    context = Context(repo, plan, clock=lambda: now[0])
    run(lambda: plan_next(context.ctx))
    wave = first_wave(context)
    for step in (prepare, dispatch, settle_in_place, review, merge, recover):
        run(lambda step=step: step(context.ctx, wave))  # type: ignore[misc]
    now[0] = 61.0  # a minute and a second later
    moved: list[bool] = []

    async def once() -> None:
        moved.append(await advance(context.ctx))

    anyio.run(once)
    state = context.ctx.state
    assert moved == [True]  # halted is not "nothing left to do"
    assert state.phase is SessionPhase.HALTED
    assert state.halt is not None and "session_minutes" in state.halt.detail
    assert len(state.waves) == 1  # no second wave was planned
