"""CommandRunner with real subprocess agents: environment, output, failures, kills."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from seawall.adapters.runners.command import CommandRunner
from seawall.errors import ConfigurationError, RunnerError
from seawall.events import Event, Final, Message, ToolCall
from seawall.model import RunnerSpec
from seawall.runner import AgentRequest
from seawall.runtime.processes import process_alive
from tests.integration.runnerkit import anyio_backend, same_dir, workspace

__all__ = ["anyio_backend", "workspace"]

pytestmark = pytest.mark.anyio

FAKE_BIN = Path(__file__).resolve().parents[1] / "fakes" / "bin"
AGENT = [sys.executable, str(FAKE_BIN / "text_agent.py")]


def request(task_id: str, workspace: Path, **fields: object) -> AgentRequest:
    base: dict[str, object] = {
        "task_id": task_id,
        "prompt": f"Do {task_id}.\nSTATUS line please",
        "workspace": workspace,
        "session": "s1",
        "wave": 2,
        "max_turns": 9,
    }
    return AgentRequest(**(base | fields))  # type: ignore[arg-type]


async def test_prompt_environment_and_cwd(workspace: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "agents" / "echo.log"
    runner = CommandRunner(AGENT, env={"EXTRA": "1"})
    req = request("echo", workspace, transcript_path=transcript, env={"MINE": "2"})
    result = await runner.run(req, lambda event: None)
    info = json.loads(result.final_text)
    assert info["stdin"] == req.prompt
    assert info["file"] == req.prompt
    assert same_dir(Path(info["cwd"]), workspace)
    env = info["env"]
    assert env["SEAWALL_SESSION"] == "s1"
    assert env["SEAWALL_WAVE"] == "2"
    assert env["SEAWALL_TASK_ID"] == "echo"
    assert env["SEAWALL_MAX_TURNS"] == "9"
    assert Path(env["SEAWALL_WORKSPACE"]) == workspace
    assert not Path(env["SEAWALL_PROMPT_FILE"]).is_relative_to(workspace)
    assert transcript.read_text().strip() == result.final_text
    assert (transcript.parent / "echo.prompt.md").read_text() == req.prompt
    assert (result.exit_code, result.is_error) == (0, False)


async def test_success_writes_in_workspace_and_reports_final(workspace: Path) -> None:
    events: list[Event] = []
    result = await CommandRunner(AGENT).run(request("finish", workspace), events.append)
    assert (workspace / "done.txt").read_text() == "done\n"
    assert result.final_text.endswith("STATUS: done")
    assert [type(e) for e in events] == [Message, Message, Final]


async def test_nonzero_exit_is_an_error_result_with_stderr(workspace: Path) -> None:
    result = await CommandRunner(AGENT).run(request("fail", workspace), lambda e: None)
    assert result.exit_code == 7 and result.is_error
    assert "cannot do it" in result.stderr_tail
    assert "STATUS: failed" in result.final_text


async def test_binary_output_is_tolerated(workspace: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "garbage.log"
    req = request("garbage", workspace, transcript_path=transcript)
    result = await CommandRunner(AGENT).run(req, lambda e: None)
    assert not result.is_error
    assert result.final_text.endswith("STATUS: done")
    assert transcript.read_bytes().startswith(bytes(range(10)))


async def test_time_limit_kills_the_whole_process_group(workspace: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    runner = CommandRunner(AGENT, kill_grace=0.5)
    req = request("hang", workspace, time_limit=1.0, env={"FAKE_AGENT_PIDFILE": str(pidfile)})
    events: list[Event] = []
    result = await runner.run(req, events.append)
    assert result.timed_out and result.exit_code is None and result.is_error
    assert result.stop_reason == "time limit"
    assert Message(text="working") in events
    assert not process_alive(int(pidfile.read_text()))


async def test_outer_cancellation_kills_the_group_and_propagates(
    workspace: Path, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    req = request("hang", workspace, env={"FAKE_AGENT_PIDFILE": str(pidfile)})
    with anyio.move_on_after(1.0) as scope:
        await CommandRunner(AGENT, kill_grace=0.5).run(req, lambda e: None)
        pytest.fail("run() returned after its caller was cancelled")
    assert scope.cancelled_caught
    assert not process_alive(int(pidfile.read_text()))


async def test_stream_json_output_is_parsed_and_garbage_tolerated(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_AGENT_SCENARIO", "garbage")
    events: list[Event] = []
    runner = CommandRunner(["claude"], output="stream-json")
    result = await runner.run(request("t", workspace), events.append)
    assert [e.name for e in events if isinstance(e, ToolCall)] == ["Write", "Bash"]
    assert result.tool_calls == 2 and result.cost_usd == 0.0123
    assert not result.is_error and result.final_text.endswith("STATUS: done")


async def test_missing_executable_is_a_runner_error_naming_it(workspace: Path) -> None:
    runner = CommandRunner(["no-such-agent-cli-xyz", "--flag"])
    with pytest.raises(RunnerError, match="no-such-agent-cli-xyz"):
        await runner.run(request("t", workspace), lambda e: None)


async def test_missing_workspace_is_a_runner_error(tmp_path: Path) -> None:
    with pytest.raises(RunnerError, match="workspace"):
        await CommandRunner(AGENT).run(request("t", tmp_path / "absent"), lambda e: None)


def test_from_spec_options() -> None:
    spec = RunnerSpec(
        name="mine",
        kind="command",
        argv=("agent", "--x"),
        env={"A": "1"},
        options={"output": "stream-json", "kill_grace": "0.25"},
    )
    runner = CommandRunner.from_spec(spec)
    assert runner.argv == ("agent", "--x")
    assert (runner.output, runner.kill_grace, dict(runner.env)) == ("stream-json", 0.25, {"A": "1"})
    with pytest.raises(ConfigurationError, match="unknown option"):
        CommandRunner.from_spec(
            RunnerSpec(name="m", kind="command", argv=("a",), options={"x": "1"})
        )
    with pytest.raises(ConfigurationError, match="output"):
        CommandRunner(["a"], output="yaml")
    with pytest.raises(ConfigurationError, match="argv"):
        CommandRunner([])
    with pytest.raises(ConfigurationError, match="kill_grace"):
        CommandRunner.from_spec(
            RunnerSpec(name="m", kind="command", argv=("a",), options={"kill_grace": "-1"})
        )


STREAM_WITHOUT_RESULT = """
import json
message = {"id": "m1", "content": [{"type": "text", "text": "all good\\nSTATUS: done"}]}
print("plain log line")
print(json.dumps({"type": "assistant", "message": message}))
"""


async def test_stream_json_without_result_line_uses_the_exit_code(workspace: Path) -> None:
    runner = CommandRunner([sys.executable, "-c", STREAM_WITHOUT_RESULT], output="stream-json")
    result = await runner.run(request("t", workspace), lambda e: None)
    assert (result.is_error, result.turns) == (False, 1)
    assert result.final_text == "all good\nSTATUS: done"
    failing = CommandRunner(
        [sys.executable, "-c", STREAM_WITHOUT_RESULT + "raise SystemExit(4)"], output="stream-json"
    )
    failed = await failing.run(request("t", workspace), lambda e: None)
    assert failed.is_error and failed.exit_code == 4


async def test_text_output_keeps_the_tail_of_a_huge_output(workspace: Path) -> None:
    script = "for n in range(100_000): print(f'line {n:07d} ' + 'x' * 12)\nprint('STATUS: done')"
    result = await CommandRunner([sys.executable, "-c", script]).run(
        request("t", workspace), lambda e: None
    )
    assert len(result.final_text) <= 1024 * 1024
    assert result.final_text.endswith("line 0099999 " + "x" * 12 + "\nSTATUS: done")


async def test_stopped_before_start_starts_nothing(workspace: Path) -> None:
    req = request("finish", workspace)
    req.stop.stop("wave aborted")
    result = await CommandRunner(AGENT).run(req, lambda e: None)
    assert result.cancelled and result.stop_reason == "wave aborted"
    assert not (workspace / "done.txt").exists()
