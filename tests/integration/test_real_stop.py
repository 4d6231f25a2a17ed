"""Stopping a real agent CLI in `seawall run`: a looping agent is stopped live with a
named reason and its work saved, and no process it started outlives it."""

from __future__ import annotations

import json
import os
import random
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.fakes.openai_server import OpenAIResponsesServer
from tests.integration.realcli import (
    agent_clis,
    anthropic,
    claude_env,
    codex_env,
    live_processes,
    openai,
)
from tests.integration.sessionkit import agents_by_wave, git, make_repo, seawall, status
from tests.waiting import wait_until

__all__ = ["agent_clis", "anthropic", "claude_env", "codex_env", "openai"]


def plan_text(name: str, runner: str, kind: str, marker: str) -> str:
    return (
        f'[session]\nname = "{name}"\ntype = "feature"\nagent = "{runner}"\n'
        "[session.wave_breaker]\nmax_rework_cycles = 0\n"  # one wave: no re-dispatch
        f'[runners.{runner}]\nkind = "{kind}"\n'
        f'[[task]]\nid = "loop"\nprompt = "Work item {marker}."\nscope = ["src/loop.py"]\n'
    )


@pytest.fixture
def sleeper() -> Iterator[str]:
    """A command line no other process has, and the cleanup of what it leaves running."""
    marker = f"sleep {random.randint(40_000, 49_999)}"
    yield marker
    for line in live_processes(marker):
        os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)


def _run(repo: Path, plan: Path) -> tuple[int, str, dict[str, object]]:
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    return done.returncode, done.stdout + done.stderr, status(repo)


@pytest.mark.slow
def test_looping_claude_is_stopped_live_with_a_named_reason_and_its_work_saved(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    write = Call(name="Write", input={"file_path": "{cwd}/src/loop.py", "content": "L = 1\n"})
    fail = Call(name="Bash", input={"command": "ls src/not-there"})
    anthropic.add(
        Script(
            marker="STOP-LOOP", turns=[ModelTurn(calls=[write]), ModelTurn(calls=[fail])], loop=True
        )
    )
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text("claude-loop", "claude", "claude-code", "STOP-LOOP"))
    code, output, data = _run(repo, plan)
    agent = agents_by_wave(data)[0]["loop"]
    assert agent["status"] == "blocked", (agent, output)
    assert "command-failures" in output, output
    session = repo / ".seawall" / str(data["session"])
    run = json.loads((session / "agents" / "loop" / "w1-run.json").read_text())
    assert run["counts"]["turns"] <= 5, run  # stopped live, long before the turn limit
    assert "command-failures" in run["stop_reason"], run
    # stopped before Claude Code's result line: the usage so far is priced, as an estimate
    assert run["counts"]["cost_usd"] > 0 and run["counts"]["cost_estimated"] is True, run
    assert "~$" in output
    wip = run["wip"]
    assert wip and git(repo, "show", f"{wip}:src/loop.py") == "L = 1"
    blocked = (session / "BLOCKED.md").read_text()
    assert wip[:12] in blocked, blocked
    assert "no snapshot recorded" not in blocked
    assert "No such file or directory" in blocked  # the real error line, not "Exit code 2"
    assert code != 0


@pytest.mark.slow
def test_nothing_claude_started_survives_it(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path, sleeper: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    daemon = Call(
        name="Bash",
        input={"command": f"setsid nohup {sleeper} >/dev/null 2>&1 &", "description": "bg"},
    )
    fail = Call(name="Bash", input={"command": "ls src/not-there"})
    anthropic.add(
        Script(
            marker="STOP-DAEMON",
            turns=[ModelTurn(calls=[daemon]), ModelTurn(calls=[fail])],
            loop=True,
        )
    )
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text("claude-daemon", "claude", "claude-code", "STOP-DAEMON"))
    _code, output, data = _run(repo, plan)
    assert agents_by_wave(data)[0]["loop"]["status"] == "blocked", output
    wait_until(lambda: not live_processes(sleeper), timeout=10, what=f"every {sleeper!r} to end")


@pytest.mark.slow
@pytest.mark.parametrize(
    "sandbox",
    [
        "workspace-write",  # Codex's own sandbox ends its commands with it
        "danger-full-access",
    ],
)
def test_nothing_codex_started_survives_it(
    openai: OpenAIResponsesServer,
    codex_env: dict[str, str],
    tmp_path: Path,
    sleeper: str,
    sandbox: str,
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    daemon = Call(name="exec_command", input={"cmd": f"setsid nohup {sleeper} >/dev/null 2>&1 &"})
    fail = Call(name="exec_command", input={"cmd": "ls src/not-there"})
    openai.add(
        Script(
            marker="STOP-CX", turns=[ModelTurn(calls=[daemon]), ModelTurn(calls=[fail])], loop=True
        )
    )
    plan = tmp_path / "plan.toml"
    text = plan_text("codex-daemon", "codex", "codex", "STOP-CX")
    plan.write_text(
        text.replace('kind = "codex"', f'kind = "codex"\noptions = {{ sandbox = "{sandbox}" }}')
    )
    _code, output, data = _run(repo, plan)
    assert agents_by_wave(data)[0]["loop"]["status"] == "blocked", output
    wait_until(lambda: not live_processes(sleeper), timeout=10, what=f"every {sleeper!r} to end")
