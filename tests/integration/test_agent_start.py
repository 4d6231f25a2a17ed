"""An agent program that cannot start is the environment's failure, not the task's."""

from __future__ import annotations

import json
import stat
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from seawall.adapters.trackers.memory import MemoryTracker
from seawall.errors import RunnerError
from seawall.exitcodes import ExitCode
from seawall.plan.loader import parse_plan
from seawall.runner import AgentRequest, AgentResult, AgentRunner, EmitFn
from seawall.session.engine import Session
from seawall.state.ledger import SessionPhase
from seawall.telemetry import AgentStartFailed, CarryoverFiled, read_events
from seawall.unattended.outcomes import ChainEffect, chain_effect, outcome_for_exit_code
from tests.integration.sessionkit import git, make_repo, seawall, show, status


def _plan(path: Path, runner: str) -> Path:
    path.write_text(
        textwrap.dedent(
            """
            [session]
            name = "start"
            agent = "agent"
            isolation = "worktree"
            """
        )
        # the agent counts its dispatches in state/, beside the plan: its sandbox allows it
        + f"sandbox_writable = [{json.dumps(str(path.parent / 'state'))}]\n\n"
        + runner
        + textwrap.dedent(
            """

            [[task]]
            id = "a"
            prompt = "Write a."
            scope = ["src/a.py"]
            """
        )
    )
    return path


def _no_session_state(repo: Path) -> bool:
    return not (repo / ".seawall").exists() or not any((repo / ".seawall").glob("*/state.json"))


def test_a_missing_program_fails_the_preflight_before_any_state(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = _plan(
        tmp_path / "plan.toml", '[runners.agent]\nkind = "command"\nargv = ["/nonexistent/agent"]'
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
    assert done.returncode == ExitCode.ERROR, done.stdout + done.stderr
    assert "runner 'agent' cannot start" in done.stderr
    assert "`/nonexistent/agent`" in done.stderr and "does not exist" in done.stderr
    assert _no_session_state(repo)
    assert not (repo / ".seawall" / "issues").exists()


def test_an_agent_cli_whose_version_fails_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'error: unknown option --version-x' >&2\nexit 2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    runner = f'[runners.agent]\nkind = "claude-code"\noptions = {{ executable = "{fake}" }}'
    plan = _plan(tmp_path / "plan.toml", runner)
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
    assert done.returncode == ExitCode.ERROR, done.stdout + done.stderr
    assert f"`{fake} --version` exited 2: error: unknown option --version-x" in done.stderr
    assert _no_session_state(repo)


_DIES_UNTIL_FIXED = textwrap.dedent(
    """
    import os, pathlib, sys
    fixed = pathlib.Path(sys.argv[1])
    count = fixed.with_name("dispatches")
    count.write_text(str(int(count.read_text()) + 1 if count.exists() else 1))
    if not fixed.exists():
        sys.stderr.write("Traceback (most recent call last):\\n")
        sys.stderr.write("ImportError: libagent.so.3 missing\\n")
        sys.exit(2)
    sys.stdin.read()
    os.makedirs("src", exist_ok=True)
    pathlib.Path("src/a.py").write_text("a = 1\\n")
    print("STATUS: done - a")
    """
)


def test_an_agent_that_dies_before_its_first_event_halts_the_session(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    agent = tmp_path / "agent.py"
    agent.write_text(_DIES_UNTIL_FIXED)
    fixed = tmp_path / "state" / "fixed"
    fixed.parent.mkdir()
    runner = (
        '[runners.agent]\nkind = "command"\n'
        f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(agent))}, {json.dumps(str(fixed))}]"
    )
    plan = _plan(tmp_path / "plan.toml", runner)
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
    assert done.returncode == ExitCode.AGENT_START, done.stdout + done.stderr
    assert "ImportError: libagent.so.3 missing" in done.stderr  # the stderr tail, on the console
    assert "exited 2 before its first event" in done.stderr
    data = status(repo)
    assert data["phase"] == "halted" and data["halt"]["reason"] == "agent-start"
    assert "libagent.so.3" in data["halt"]["stderr"]  # ... in the ledger
    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    assert "libagent.so.3" in state_md and "agent-start" in state_md  # ... and in STATE.md
    assert (tmp_path / "state" / "dispatches").read_text() == "1"  # no re-dispatch
    assert not list((repo / ".seawall" / "issues").glob("*.md"))  # no carryover issue
    events = repo / ".seawall" / data["session"] / "events.jsonl"
    assert [e.task for e in read_events(events, AgentStartFailed)] == ["a"]
    assert not list(read_events(events, CarryoverFiled))
    # the program is fixed: resume runs the agent again and the session ends normally
    fixed.write_text("")
    done = seawall("resume", "--repo", str(repo), cwd=repo)
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert show(repo, "main", "src/a.py") == "a = 1\n"
    assert status(repo)["waves"][0]["agents"][0]["status"] == "done"
    assert len(status(repo)["waves"]) == 1
    assert git(repo, "status", "--porcelain") == ""


class _GoneRunner(AgentRunner):
    """A runner whose program disappeared after the preflight."""

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        raise RunnerError(f"task {request.task_id!r}: cannot start the agent: 'agent' is gone")


def test_a_runner_error_mid_session_halts_without_a_carryover(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    text = _plan(
        tmp_path / "plan.toml", '[runners.agent]\nkind = "command"\nargv = ["true"]'
    ).read_text()
    tracker = MemoryTracker()
    session = Session(
        parse_plan(text), repo=repo, plan_text=text, runner=_GoneRunner(), tracker=tracker
    )
    result = anyio.run(session.run)
    assert result.phase is SessionPhase.HALTED
    assert result.exit_code == ExitCode.AGENT_START
    assert result.halt is not None and "'agent' is gone" in result.halt.detail
    assert tracker.list_issues("carryover") == []
    assert session.state is not None and session.state.pending == []


@pytest.mark.parametrize("code", [ExitCode.AGENT_START])
def test_the_unattended_runner_counts_an_agent_start_failure(code: ExitCode) -> None:
    assert chain_effect(outcome_for_exit_code(code)) is ChainEffect.COUNTS
