"""`seawall run` with the opencode runner driving the real opencode CLI.

opencode talks to the scripted OpenAI server through an OpenAI-compatible provider
(Chat Completions), offline. Each test is one real session: a clean edit that merges, a
looping agent stopped by a breaker, a stopped agent whose background process must not
survive it, and an out-of-scope write refused by the kernel while the agent runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seawall.sandbox.launch import available
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.fakes.openai_server import OpenAIResponsesServer
from tests.integration import realsession
from tests.integration.realcli import agent_clis, live_processes, openai, opencode_env
from tests.integration.realsession import run_record, sleeper
from tests.integration.sessionkit import agents_by_wave, git, make_repo, show
from tests.waiting import wait_until

__all__ = ["agent_clis", "openai", "opencode_env", "sleeper"]

pytestmark = pytest.mark.slow


def plan_text(name: str, tasks: list[dict[str, object]], extra: str = "") -> str:
    return realsession.plan_text(
        name, ['kind = "opencode"', "options = { kill_grace = 1 }"], tasks, extra
    )


def run_plan(repo: Path, plan: Path) -> tuple[int, str, dict[str, Any]]:
    return realsession.run_plan(repo, plan, timeout=120)


def test_a_clean_opencode_edit_merges_done_with_its_turns_counted(
    openai: OpenAIResponsesServer, opencode_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    write = Call(name="write", input={"filePath": "{cwd}/src/greet.py", "content": "HI = 1\n"})
    openai.add(
        Script(
            marker="OC-CLEAN",
            turns=[
                ModelTurn(text="Writing the module.", calls=[write]),
                ModelTurn(text="Wrote src/greet.py.\nSTATUS: done — greet added"),
            ],
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {
        "id": "greet",
        "prompt": "Work item OC-CLEAN.",
        "scope": ["src/greet.py"],
    }
    plan.write_text(plan_text("oc-clean", [task]))
    code, output, data = run_plan(repo, plan)
    agent = agents_by_wave(data)[0]["greet"]
    assert agent["status"] == "done", (agent, output)
    assert code == 0, output
    assert show(repo, "main", "src/greet.py") == "HI = 1\n"
    counts = run_record(repo, data, "greet")["counts"]
    assert counts["turns"] == 2 and counts["tool_calls"] == 1, counts
    assert counts["input_tokens"] == 2 * 1200, counts
    assert len(openai.answered("OC-CLEAN")) == 2
    assert git(repo, "status", "--porcelain") == ""


def test_a_looping_opencode_agent_is_stopped_by_a_breaker(
    openai: OpenAIResponsesServer, opencode_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    write = Call(name="write", input={"filePath": "{cwd}/src/loop.py", "content": "L = 1\n"})
    fail = Call(name="bash", input={"command": "ls src/not-there", "description": "list"})
    openai.add(
        Script(
            marker="OC-LOOP", turns=[ModelTurn(calls=[write]), ModelTurn(calls=[fail])], loop=True
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {
        "id": "loop",
        "prompt": "Work item OC-LOOP.",
        "scope": ["src/loop.py"],
    }
    plan.write_text(plan_text("oc-loop", [task]))
    code, output, data = run_plan(repo, plan)
    agent = agents_by_wave(data)[0]["loop"]
    assert agent["status"] == "blocked", (agent, output)
    run = run_record(repo, data, "loop")
    assert "breaker" in run["stop_reason"], run
    assert run["counts"]["turns"] <= 8, run  # stopped live, long before the turn limit
    wip = run["wip"]
    assert wip and git(repo, "show", f"{wip}:src/loop.py") == "L = 1"
    assert code != 0


def test_nothing_a_stopped_opencode_agent_started_survives_it(
    openai: OpenAIResponsesServer, opencode_env: dict[str, str], tmp_path: Path, sleeper: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    daemon = Call(
        name="bash",
        input={"command": f"setsid nohup {sleeper} >/dev/null 2>&1 &", "description": "bg"},
    )
    fail = Call(name="bash", input={"command": "ls src/not-there", "description": "list"})
    openai.add(
        Script(
            marker="OC-DAEMON",
            turns=[ModelTurn(calls=[daemon]), ModelTurn(calls=[fail])],
            loop=True,
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {
        "id": "loop",
        "prompt": "Work item OC-DAEMON.",
        "scope": ["src/loop.py"],
    }
    plan.write_text(plan_text("oc-daemon", [task]))
    _code, output, data = run_plan(repo, plan)
    assert agents_by_wave(data)[0]["loop"]["status"] == "blocked", output
    wait_until(lambda: not live_processes(sleeper), timeout=10, what=f"every {sleeper!r} to end")
    assert live_processes("opencode run", within=tmp_path) == []


@pytest.mark.skipif(not available(), reason="this kernel has no Landlock")
def test_an_out_of_scope_opencode_write_is_refused_by_the_os_sandbox(
    openai: OpenAIResponsesServer, opencode_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    mine = Call(name="write", input={"filePath": "{cwd}/src/mine.py", "content": "M = 1\n"})
    theirs = Call(name="write", input={"filePath": "{cwd}/README.md", "content": "taken\n"})
    sibling = Call(name="write", input={"filePath": "{cwd}/src/other.py", "content": "O = 1\n"})
    shell = Call(
        name="bash", input={"command": "mkdir -p docs && echo x > docs/n.md", "description": "w"}
    )
    openai.add(
        Script(
            marker="OC-SCOPE",
            turns=[
                ModelTurn(calls=[theirs]),
                ModelTurn(calls=[sibling]),  # three refusals in a row would trip a breaker
                ModelTurn(calls=[mine]),
                ModelTurn(calls=[shell]),
                ModelTurn(text="Done what I could.\nSTATUS: done — mine written"),
            ],
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {
        "id": "mine",
        "prompt": "Work item OC-SCOPE.",
        "scope": ["src/mine.py"],
    }
    plan.write_text(plan_text("oc-scope", [task], 'isolation = "none"\nenforcement = "strict"'))
    code, output, data = run_plan(repo, plan)
    assert "agents are sandboxed by the kernel (Landlock)" in output
    agent = agents_by_wave(data)[0]["mine"]
    assert agent["status"] == "done", (agent, output)
    results = tool_results(repo, data, "mine")
    assert results[0][:2] == ("write", "error") and "PermissionDenied" in results[0][2], results
    # the absent scope file is granted alone (made empty first), never its directory
    assert results[1][:2] == ("write", "error") and "PermissionDenied" in results[1][2], results
    assert results[2] == ("write", "completed", "Wrote file successfully.", None), results
    assert results[3][0] == "bash" and "Permission denied" in results[3][2], results
    assert results[3][3] not in (None, 0), results
    assert show(repo, "main", "src/mine.py") == "M = 1\n"
    assert (repo / "README.md").read_text() == "# p\n"
    assert not (repo / "docs").exists()
    assert not (repo / "src" / "other.py").exists()
    assert code == 0, output


def tool_results(
    repo: Path, data: dict[str, Any], task: str
) -> list[tuple[str, str, str, int | None]]:
    """(tool, status, error or output, exit code) of each tool call in the transcript."""
    path = repo / ".seawall" / str(data["session"]) / "agents" / task / "w1-transcript.jsonl"
    found: list[tuple[str, str, str, int | None]] = []
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event.get("type") != "tool_use":
            continue
        state = event["part"]["state"]
        text = state.get("error") or state.get("output") or ""
        found.append(
            (event["part"]["tool"], state["status"], text, state.get("metadata", {}).get("exit"))
        )
    return found


def test_an_opencode_rate_limit_pauses_the_agent_which_continues_its_session_after_the_reset(
    openai: OpenAIResponsesServer, opencode_env: dict[str, str], tmp_path: Path
) -> None:
    """The provider answers 429 with ``retry-after: 2`` until opencode gives up (its own
    retries wait what the header says, then its ``APIError`` ends the run): seawall reads
    that as the provider's limit, pauses the agent (no failure, no carryover), waits for
    the reset and dispatches it again, continuing its session, and the work merges.

    (With a reset far ahead opencode waits inside its own retry, silently: one request,
    then nothing on its output until the header's time has passed. Only the agent's time
    budget bounds that wait.)"""
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    limit = ModelTurn(
        status=429,
        error={"type": "rate_limit_exceeded", "message": "Rate limit reached"},
        headers={"retry-after": "2"},
    )
    write = Call(name="write", input={"filePath": "{cwd}/src/lim.py", "content": "L = 1\n"})
    more = Call(name="write", input={"filePath": "{cwd}/src/lim2.py", "content": "M = 2\n"})
    openai.add(
        Script(
            marker="OC-LIMIT",
            # its second request, and opencode's five retries of it, meet the limit
            once={1: (limit,) * 6},
            turns=[
                ModelTurn(calls=[write]),
                ModelTurn(calls=[more]),
                ModelTurn(text="Wrote both.\nSTATUS: done — lim added"),
            ],
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {
        "id": "lim",
        "prompt": "Work item OC-LIMIT.",
        "scope": ["src/lim.py", "src/lim2.py"],
    }
    plan.write_text(plan_text("oc-limit", [task], extra='on_limit = "wait"'))
    code, output, data = run_plan(repo, plan)
    assert code == 0, output
    first, second = (waves["lim"] for waves in agents_by_wave(data))
    assert first["status"] == "paused", (first, output)
    assert second["status"] == "done", (second, output)
    assert show(repo, "main", "src/lim.py") == "L = 1\n"
    assert show(repo, "main", "src/lim2.py") == "M = 2\n"
    assert "no carryover" not in output and "carried over" not in output
    # the second dispatch continued opencode's session (``run --session``): the earlier
    # turn was sent again as history, never asked for again
    assert first["conversation"] and second["continued"] == first["conversation"], second
    requests = openai.answered("OC-LIMIT")
    assert [r.turn for r in requests] == [0] + [1] * 6 + [1, 2], [r.turn for r in requests]
    continued = json.dumps(requests[7].body)
    assert "call_t0_0" in continued and "CONTINUE:" in continued
