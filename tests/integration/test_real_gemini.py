"""`seawall run` with the gemini runner driving the real Gemini CLI.

Gemini CLI talks to the scripted Gemini API server (``GOOGLE_GEMINI_BASE_URL``), offline.
Each test is one real session: a clean edit that merges with its turns and tokens
counted, an agent rewriting one file again and again (a spiral from its own history), a
looping agent stopped by a breaker, a stopped agent whose background process must not
survive it, and an out-of-scope write refused by the kernel while the agent runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seawall.adapters.runners.gemini import GeminiRunner
from seawall.sandbox.launch import available
from tests.fakes.gemini_server import GeminiServer
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.integration import realsession
from tests.integration.realcli import agent_clis, gemini, gemini_env, live_processes
from tests.integration.realsession import run_record, sleeper
from tests.integration.sessionkit import agents_by_wave, git, make_repo, show
from tests.waiting import wait_until

__all__ = ["agent_clis", "gemini", "gemini_env", "sleeper"]

pytestmark = pytest.mark.slow


def plan_text(name: str, tasks: list[dict[str, object]], extra: str = "") -> str:
    return realsession.plan_text(
        name,
        ['kind = "gemini"', 'model = "gemini-2.5-pro"', "options = { kill_grace = 1 }"],
        tasks,
        extra,
    )


def run_plan(repo: Path, plan: Path) -> tuple[int, str, dict[str, Any]]:
    return realsession.run_plan(repo, plan, timeout=180)


def write(path: str, content: str) -> Call:
    return Call(name="write_file", input={"file_path": f"{{cwd}}/{path}", "content": content})


def shell(command: str) -> Call:
    return Call(name="run_shell_command", input={"command": command, "description": "run"})


def test_a_clean_gemini_edit_merges_done_with_its_turns_and_tokens_counted(
    gemini: GeminiServer, gemini_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    gemini.add(
        Script(
            marker="GEM-CLEAN",
            turns=[
                ModelTurn(text="Writing the module.", calls=[write("src/greet.py", "HI = 1\n")]),
                ModelTurn(text="Wrote src/greet.py.\nSTATUS: done — greet added"),
            ],
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {
        "id": "greet",
        "prompt": "Work GEM-CLEAN.",
        "scope": ["src/greet.py"],
    }
    plan.write_text(plan_text("gem-clean", [task]))
    code, output, data = run_plan(repo, plan)
    agent = agents_by_wave(data)[0]["greet"]
    assert agent["status"] == "done", (agent, output)
    assert code == 0, output
    assert show(repo, "main", "src/greet.py") == "HI = 1\n"
    counts = run_record(repo, data, "greet")["counts"]
    assert counts["turns"] == 2 and counts["tool_calls"] == 1, counts
    assert counts["input_tokens"] == 2 * 1200 and counts["output_tokens"] == 2 * 80, counts
    assert len(gemini.answered("GEM-CLEAN")) == 2
    assert "Work GEM-CLEAN." in gemini.shown("GEM-CLEAN")  # the prompt came through stdin
    assert git(repo, "status", "--porcelain") == ""


def test_a_gemini_agent_rewriting_one_file_is_a_spiral_from_its_own_history(
    gemini: GeminiServer, gemini_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/loop.py": "L = 0\n"})
    rewrites = [ModelTurn(calls=[write("src/loop.py", f"L = {1 + n % 2}\n")]) for n in range(4)]
    gemini.add(
        Script(
            marker="GEM-SPIRAL",
            turns=[*rewrites, ModelTurn(text="Fixed at last.\nSTATUS: done — loop fixed")],
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {"id": "loop", "prompt": "Work GEM-SPIRAL.", "scope": ["src/loop.py"]}
    plan.write_text(plan_text("gem-spiral", [task], 'isolation = "worktree"'))
    _code, output, data = run_plan(repo, plan)
    agent = agents_by_wave(data)[0]["loop"]
    assert agent["status"] == "spiral", (agent, output)
    assert "src/loop.py changed 4×" in agent["spiral"]["summary"], agent
    assert agent["merged"] is False
    assert show(repo, "main", "src/loop.py") == "L = 0\n"


def test_a_looping_gemini_agent_is_stopped_by_a_breaker(
    gemini: GeminiServer, gemini_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    gemini.add(
        Script(
            marker="GEM-LOOP",
            turns=[
                ModelTurn(calls=[write("src/loop.py", "L = 1\n")]),
                ModelTurn(calls=[shell("ls src/not-there")]),
            ],
            loop=True,
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {"id": "loop", "prompt": "Work GEM-LOOP.", "scope": ["src/loop.py"]}
    plan.write_text(plan_text("gem-loop", [task]))
    code, output, data = run_plan(repo, plan)
    agent = agents_by_wave(data)[0]["loop"]
    assert agent["status"] == "blocked", (agent, output)
    run = run_record(repo, data, "loop")
    assert "breaker" in run["stop_reason"], run
    assert run["counts"]["turns"] <= 8, run  # stopped live, long before the turn limit
    assert code != 0


def test_nothing_a_stopped_gemini_agent_started_survives_it(
    gemini: GeminiServer, gemini_env: dict[str, str], tmp_path: Path, sleeper: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    daemon = shell(f"setsid nohup {sleeper} >/dev/null 2>&1 &")
    gemini.add(
        Script(
            marker="GEM-DAEMON",
            turns=[ModelTurn(calls=[daemon]), ModelTurn(calls=[shell("ls src/not-there")])],
            loop=True,
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {"id": "loop", "prompt": "Work GEM-DAEMON.", "scope": ["src/loop.py"]}
    plan.write_text(plan_text("gem-daemon", [task]))
    _code, output, data = run_plan(repo, plan)
    assert agents_by_wave(data)[0]["loop"]["status"] == "blocked", output
    wait_until(lambda: not live_processes(sleeper), timeout=10, what=f"every {sleeper!r} to end")
    assert live_processes("gemini", within=tmp_path) == []


@pytest.mark.skipif(not available(), reason="this kernel has no Landlock")
def test_an_out_of_scope_gemini_write_is_refused_by_the_os_sandbox(
    gemini: GeminiServer, gemini_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    gemini.add(
        Script(
            marker="GEM-SCOPE",
            turns=[
                ModelTurn(calls=[shell("echo taken > README.md")]),
                ModelTurn(calls=[write("src/mine.py", "M = 1\n")]),
                ModelTurn(text="Done what I could.\nSTATUS: done — mine written"),
            ],
        )
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {"id": "mine", "prompt": "Work GEM-SCOPE.", "scope": ["src/mine.py"]}
    plan.write_text(plan_text("gem-scope", [task], 'isolation = "none"\nenforcement = "strict"'))
    code, output, data = run_plan(repo, plan)
    assert "agents are sandboxed by the kernel (Landlock)" in output
    agent = agents_by_wave(data)[0]["mine"]
    assert agent["status"] == "done", (agent, output)
    assert show(repo, "main", "src/mine.py") == "M = 1\n"
    assert (repo / "README.md").read_text() == "# p\n"
    assert code == 0, output


def test_a_model_error_is_a_failed_run_that_says_why(
    gemini: GeminiServer, gemini_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    gemini.add(
        Script(marker="GEM-ERR", turns=[ModelTurn(text="the request is too large", status=400)])
    )
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {"id": "big", "prompt": "Work GEM-ERR.", "scope": ["src/big.py"]}
    plan.write_text(plan_text("gem-err", [task]))
    code, output, data = run_plan(repo, plan)
    agent = agents_by_wave(data)[0]["big"]
    assert agent["status"] == "failed", (agent, output)
    run = run_record(repo, data, "big")
    assert run["is_error"] is True, run
    assert "the request is too large" in run["final_text"] + run["stderr_tail"], run
    assert code != 0


def test_a_gemini_agent_past_its_turn_limit_is_stopped_with_its_work_kept(
    gemini: GeminiServer, gemini_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    steps = [ModelTurn(calls=[write(f"src/step{n}.py", f"S = {n}\n")]) for n in range(6)]
    gemini.add(Script(marker="GEM-TURNS", turns=steps))
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {
        "id": "steps",
        "prompt": "Work GEM-TURNS.",
        "scope": ["src/"],
        "max_turns": 2,
    }
    plan.write_text(plan_text("gem-turns", [task]))
    _code, output, data = run_plan(repo, plan)
    run = run_record(repo, data, "steps")
    assert run["stop_reason"].startswith("turn limit: 3 turns > max 2"), (run, output)
    assert run["wip"] and git(repo, "show", f"{run['wip']}:src/step0.py") == "S = 0"
    assert len(gemini.answered("GEM-TURNS")) <= 4


def test_a_429_past_the_clis_own_retries_pauses_the_agent_and_halts_on_limit(
    gemini: GeminiServer, gemini_env: dict[str, str], tmp_path: Path
) -> None:
    """The Gemini CLI retries a 429 itself (two attempts here, ten by default), then ends
    with its rate-limit message: the agent is paused, not failed, nothing is carried
    over, and ``on_limit = "halt"`` halts with exit code 6 naming the provider."""
    settings = Path(gemini_env["HOME"]) / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    data["general"]["maxAttempts"] = 2
    settings.write_text(json.dumps(data))
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    quota = ModelTurn(text="Resource has been exhausted (e.g. check quota).", status=429)
    gemini.add(Script(marker="GEM-LIM", turns=[quota], loop=True))
    plan = tmp_path / "plan.toml"
    task: dict[str, object] = {"id": "lim", "prompt": "Work GEM-LIM.", "scope": ["lim.py"]}
    plan.write_text(plan_text("gem-limit", [task], 'on_limit = "halt"'))
    code, output, data = run_plan(repo, plan)
    assert code == 6, output
    agent = agents_by_wave(data)[0]["lim"]
    assert agent["status"] == "paused", (agent, output)
    assert data["halt"]["reason"] == "rate-limited", data["halt"]
    assert data["halt"]["provider"] == GeminiRunner().provider, data["halt"]
    assert len(gemini.answered("GEM-LIM")) == 2  # its own two attempts, then the pause
    assert not (repo / ".seawall" / "issues").exists()
