"""ScriptedRunner and CallableRunner: real files, real git, recorded dispatches."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest

from seawall.adapters.runners.callable import AgentEmit, CallableRunner
from seawall.adapters.runners.scripted import (
    AgentScript,
    Commit,
    Crash,
    Edit,
    Read,
    Say,
    ScriptedRunner,
    Spend,
    Step,
    Tool,
    load_scripts,
)
from seawall.errors import ConfigurationError
from seawall.events import Event, Final, Message, ToolCall, ToolResult
from seawall.model import RunnerSpec
from seawall.runner import AgentRequest, build_runner
from tests.integration.runnerkit import anyio_backend

__all__ = ["anyio_backend"]

pytestmark = pytest.mark.anyio


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "app.py").write_text("def f():\n    return 1\n")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(path),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ],
        check=True,
    )
    return path


def request(task_id: str, workspace: Path, **fields: object) -> AgentRequest:
    return AgentRequest(task_id=task_id, prompt="p", workspace=workspace, **fields)  # type: ignore[arg-type]


def resolved(path: Path) -> Path:
    return path.resolve()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


async def test_edits_change_files_and_emit_real_tool_calls(repo: Path) -> None:
    runner = ScriptedRunner(
        {
            "t": [
                Edit(path="app.py", old="return 1", new="return 2"),
                Edit(path="pkg/new.py", content="X = 1\n"),
                Edit(path="app.py", old="not there", new="y"),
            ]
        }
    )
    events: list[Event] = []
    result = await runner.run(request("t", repo), events.append)
    assert (repo / "app.py").read_text() == "def f():\n    return 2\n"
    assert (repo / "pkg" / "new.py").read_text() == "X = 1\n"
    calls = [e for e in events if isinstance(e, ToolCall)]
    root = resolved(repo)
    assert [(c.name, c.arguments["file_path"]) for c in calls] == [
        ("Edit", str(root / "app.py")),
        ("Write", str(root / "pkg/new.py")),
        ("Edit", str(root / "app.py")),
    ]
    assert calls[0].arguments["old_string"] == "return 1"
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.is_error for r in results] == [False, False, True]
    assert "String to replace not found" in results[2].text
    assert (result.turns, result.tool_calls, result.is_error) == (3, 3, False)
    assert result.final_text == "STATUS: done"


async def test_commit_is_a_real_git_commit_of_the_edited_files(repo: Path) -> None:
    (repo / "untouched.txt").write_text("someone else's work\n")
    script: list[Step] = [
        Edit(path="app.py", content="A = 1\n"),
        Commit(message="agent: set A"),
        Commit(message="again"),
    ]
    events: list[Event] = []
    await ScriptedRunner({"t": script}).run(request("t", repo), events.append)
    assert git(repo, "log", "-1", "--format=%s|%an").strip() == "agent: set A|scripted agent t"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["app.py"]
    assert "untouched.txt" in git(repo, "status", "--porcelain")
    bash = [e for e in events if isinstance(e, ToolCall) and e.name == "Bash"]
    assert "git commit -m 'agent: set A'" in str(bash[0].arguments["command"])
    results = [e for e in events if isinstance(e, ToolResult) and e.name == "Bash"]
    assert [(r.exit_code, r.is_error) for r in results] == [(0, False), (1, True)]


async def test_tool_read_say_spend_steps(repo: Path) -> None:
    script = AgentScript(
        steps=(
            Tool(
                name="Bash",
                arguments={"command": "pytest"},
                result="2 failed",
                is_error=True,
                exit_code=1,
            ),
            Read(path="app.py", offset=2, limit=1),
            Read(path="missing.py"),
            Say(text="STATUS: partial"),
            Spend(cost_usd=0.25, input_tokens=10),
            Spend(cost_usd=0.5),
        ),
        final="half done\nSTATUS: partial",
    )
    events: list[Event] = []
    result = await ScriptedRunner({"t": script}).run(request("t", repo), events.append)
    results = [e for e in events if isinstance(e, ToolResult)]
    assert (results[0].is_error, results[0].exit_code, results[0].text) == (True, 1, "2 failed")
    assert results[1].text == "     2\t    return 1" and not results[1].is_error
    assert results[2].is_error
    read = next(e for e in events if isinstance(e, ToolCall) and e.name == "Read")
    assert (read.arguments["offset"], read.arguments["limit"]) == (2, 1)
    assert Message(text="STATUS: partial", turn=4) in events
    assert result.cost_usd == 0.75
    assert result.final_text == "half done\nSTATUS: partial"


async def test_crash_is_an_error_result_and_attempts_follow_the_script_list(repo: Path) -> None:
    runner = ScriptedRunner(
        {
            "t": [
                AgentScript(steps=(Say(text="x"), Crash(message="boom"))),
                AgentScript(final="fixed"),
            ]
        }
    )
    events: list[Event] = []
    first = await runner.run(request("t", repo), events.append)
    second = await runner.run(request("t", repo), lambda e: None)
    third = await runner.run(request("t", repo), lambda e: None)
    other = await runner.run(request("other", repo), lambda e: None)
    assert first.is_error and "boom" in first.stderr_tail
    assert next(e for e in events if isinstance(e, Final)).subtype == "crash"
    assert (second.final_text, third.final_text, other.final_text) == (
        "fixed",
        "fixed",
        "STATUS: done",
    )
    assert runner.dispatches("t") == 3
    assert [r.task_id for r in runner.requests] == ["t", "t", "t", "other"]
    assert runner.results == [first, second, third, other]


async def test_paths_outside_the_workspace_are_refused(repo: Path, tmp_path: Path) -> None:
    events: list[Event] = []
    await ScriptedRunner({"t": [Edit(path="../escape.txt", content="x")]}).run(
        request("t", repo), events.append
    )
    assert not (tmp_path / "escape.txt").exists()
    assert [e.is_error for e in events if isinstance(e, ToolResult)] == [True]


async def test_transcript_holds_one_json_record_per_event(repo: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "agents" / "t.jsonl"
    events: list[Event] = []
    script: list[Step] = [Tool(name="Bash", arguments={"command": "ls"}), Say(text="hi")]
    await ScriptedRunner({"t": script}).run(
        request("t", repo, transcript_path=transcript), events.append
    )
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [r["event"] for r in records] == [type(e).__name__ for e in events]
    assert records[1]["arguments"] == {"command": "ls"}


SCRIPT_TOML = """
[default]
final = "default done"

[scripts.api]
final = "api done"
steps = [
  { edit = "app.py", old = "return 1", new = "return 3" },
  { tool = "Bash", arguments = { command = "pytest" }, result = "ok", exit_code = 0 },
  { commit = "api: three" },
]

[[scripts.retry]]
steps = [{ crash = "first attempt fails" }]
[[scripts.retry]]
final = "second attempt"
"""


async def test_scripts_load_from_toml_and_json(repo: Path, tmp_path: Path) -> None:
    toml_file = tmp_path / "scripts.toml"
    toml_file.write_text(SCRIPT_TOML)
    runner = ScriptedRunner.from_file(toml_file)
    assert (await runner.run(request("api", repo), lambda e: None)).final_text == "api done"
    assert "return 3" in (repo / "app.py").read_text()
    assert git(repo, "log", "-1", "--format=%s").strip() == "api: three"
    assert (await runner.run(request("retry", repo), lambda e: None)).is_error
    assert (await runner.run(request("retry", repo), lambda e: None)).final_text == "second attempt"
    assert (await runner.run(request("zzz", repo), lambda e: None)).final_text == "default done"
    json_file = tmp_path / "scripts.json"
    json_file.write_text(json.dumps({"scripts": {"a": {"steps": [{"say": "hi"}], "final": "j"}}}))
    loaded = load_scripts(json_file)
    assert loaded.scripts["a"] == (AgentScript(steps=(Say(text="hi"),), final="j"),)
    spec_runner = build_runner(
        RunnerSpec(name="s", kind="scripted", options={"script": str(json_file)})
    )
    assert isinstance(spec_runner, ScriptedRunner) and "a" in spec_runner.scripts


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[scripts.a]\nsteps = [{ edit = "x" }]',
            "step 1: edit 'x': give either content or old/new",
        ),
        ('[scripts.a]\nsteps = [{ say = "x", sleep = 1 }]', "exactly one action"),
        ("[scripts.a]\nsteps = [{ sleep = -1 }]", "seconds must be a number"),
        ('[scripts.a]\nsteps = [{ say = "x", color = "red" }]', "unknown key(s) ['color']"),
        ("[scripts.a]\nstep = []", "unknown key(s) ['step']"),
        ('[scritps.a]\nfinal = "x"', "unknown key(s) ['scritps']"),
        ("[scripts.a]\nsteps = [{ say = 3 }]", "text must be a string"),
        ("not toml [", "not valid toml"),
    ],
)
def test_script_file_errors_name_the_file_script_and_step(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigurationError) as caught:
        load_scripts(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


async def test_callable_runner_crash_and_own_final(repo: Path) -> None:
    async def crashing(request: AgentRequest, emit: AgentEmit) -> str:
        await emit(Message(text="trying"))
        raise ValueError("agent bug")

    async def finishing(request: AgentRequest, emit: AgentEmit) -> str | None:
        await emit(Final(text="custom", is_error=True, subtype="error_max_turns", cost_usd=1.5))
        return None

    crashed = await CallableRunner(crashing).run(request("a", repo), lambda e: None)
    assert crashed.is_error and "ValueError: agent bug" in crashed.stderr_tail
    events: list[Event] = []
    finished = await CallableRunner(finishing).run(request("b", repo), events.append)
    assert [type(e) for e in events] == [Final]
    assert (finished.final_text, finished.is_error, finished.cost_usd) == ("custom", True, 1.5)


async def test_scripted_wave_of_many_agents_runs_concurrently(tmp_path: Path) -> None:
    runner = ScriptedRunner(default=AgentScript(steps=(Say(text="a"), Tool(name="Bash"))))
    results = []

    async def one(n: int) -> None:
        folder = tmp_path / f"w{n}"
        folder.mkdir()
        results.append(await runner.run(request(f"t{n}", folder), lambda e: None))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for n in range(50):
                group.start_soon(one, n)
    assert len(results) == 50 and all(r.tool_calls == 1 for r in results)
