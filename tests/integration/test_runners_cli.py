"""ClaudeCodeRunner and CodexRunner against fake ``claude`` / ``codex`` executables on PATH
that write real-format JSON lines (and can replay the real transcripts)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from seawall.adapters.runners.claude_code import ClaudeCodeRunner
from seawall.adapters.runners.codex import CodexRunner
from seawall.errors import ConfigurationError, RunnerError
from seawall.events import Event, Final, ToolCall, ToolResult, Usage
from seawall.model import RunnerSpec
from seawall.runner import AgentRequest, build_runner
from seawall.transcripts import parse_file
from tests.fixtures_path import TRANSCRIPTS, transcripts_present
from tests.integration.runnerkit import anyio_backend, same_dir, workspace

__all__ = ["anyio_backend", "workspace"]

pytestmark = pytest.mark.anyio

FAKE_BIN = Path(__file__).resolve().parents[1] / "fakes" / "bin"
FIXTURES = TRANSCRIPTS
needs_fixtures = pytest.mark.skipif(
    not transcripts_present(), reason=f"real transcripts not present at {FIXTURES}"
)


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fakes on PATH, recording their invocation into the returned folder."""
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}")
    folder = tmp_path / "record"
    monkeypatch.setenv("FAKE_AGENT_RECORD", str(folder))
    monkeypatch.delenv("FAKE_AGENT_SCENARIO", raising=False)
    return folder


def request(workspace: Path, **fields: object) -> AgentRequest:
    base: dict[str, object] = {
        "task_id": "api",
        "prompt": "Add the route.",
        "workspace": workspace,
        "session": "s",
        "wave": 1,
        "max_turns": 12,
    }
    return AgentRequest(**(base | fields))  # type: ignore[arg-type]


def invocation(record: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((record / "invocation.json").read_text())
    return data


async def test_claude_command_line_prompt_and_events(record: Path, workspace: Path) -> None:
    runner = ClaudeCodeRunner(model="sonnet", extra_args=("--permission-mode", "acceptEdits"))
    events: list[Event] = []
    result = await runner.run(request(workspace), events.append)
    info = invocation(record)
    argv = info["argv"]
    assert isinstance(argv, list)
    assert argv[:4] == ["-p", "--output-format", "stream-json", "--verbose"]
    assert argv[4:8] == ["--max-turns", "12", "--model", "sonnet"]
    assert argv[8] == "--settings" and argv[9].endswith("settings.json")
    assert argv[10:] == ["--permission-mode", "acceptEdits"]  # the caller's mode wins
    assert (record / "prompt.txt").read_text() == "Add the route."
    assert same_dir(Path(str(info["cwd"])), workspace)
    assert (workspace / "fake_agent_output.txt").read_text() == "written by claude\n"
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["Write", "Bash"]
    failed = [e for e in events if isinstance(e, ToolResult) and e.is_error]
    assert [(r.name, r.exit_code) for r in failed] == [("Bash", 1)]
    assert [e.message_id for e in events if isinstance(e, Usage)] == ["msg_1", "msg_2", "msg_3"]
    assert (result.turns, result.tool_calls, result.cost_usd) == (3, 2, 0.0123)
    assert not result.is_error and result.final_text == "Done.\nSTATUS: done"


@pytest.mark.parametrize(
    ("scenario", "exit_code", "text"),
    [("api-error", 1, "API Error: 529 overloaded")],
)
async def test_claude_error_results_are_failures(
    record: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    scenario: str,
    exit_code: int,
    text: str,
) -> None:
    monkeypatch.setenv("FAKE_AGENT_SCENARIO", scenario)
    events: list[Event] = []
    result = await ClaudeCodeRunner().run(request(workspace), events.append)
    finals = [e for e in events if isinstance(e, Final)]
    assert len(finals) == 1 and finals[0].is_error
    assert result.is_error and result.exit_code == exit_code
    assert result.final_text == text


async def test_claude_crash_without_result_line(
    record: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_SCENARIO", "crash")
    events: list[Event] = []
    result = await ClaudeCodeRunner().run(request(workspace), events.append)
    assert result.exit_code == 3 and result.is_error
    assert "crashed" in result.stderr_tail
    assert not any(isinstance(e, Final) for e in events)
    assert result.tool_calls == 2


async def test_claude_garbage_lines_are_skipped(
    record: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_SCENARIO", "garbage")
    result = await ClaudeCodeRunner().run(request(workspace), lambda e: None)
    assert not result.is_error and result.tool_calls == 2


async def test_claude_without_max_turns_or_model(record: Path, workspace: Path) -> None:
    await ClaudeCodeRunner().run(request(workspace, max_turns=None), lambda e: None)
    argv = invocation(record)["argv"]
    assert isinstance(argv, list)
    assert argv[:5] == ["-p", "--output-format", "stream-json", "--verbose", "--settings"]
    assert argv[6:] == ["--permission-mode", "dontAsk"]


@needs_fixtures
async def test_claude_replaying_a_real_session_gives_the_parsed_events(
    record: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fixture = (
        FIXTURES / "DRMacIver__claude-reliability" / "python-to-rust-port" / "transcript.jsonl"
    )
    monkeypatch.setenv("FAKE_AGENT_REPLAY", str(fixture))
    transcript = tmp_path / "agents" / "api.jsonl"
    events: list[Event] = []
    result = await ClaudeCodeRunner().run(
        request(workspace, transcript_path=transcript), events.append
    )
    assert [type(e) for e in events] == [type(e) for e in parse_file(fixture)]
    assert result.tool_calls == 39
    assert result.is_error  # a session file has no result line: no success claimed
    assert transcript.read_bytes() == fixture.read_bytes()


async def test_codex_command_line_and_events(record: Path, workspace: Path) -> None:
    runner = CodexRunner(model="gpt-5-codex", extra_args=("--skip-git-repo-check",))
    events: list[Event] = []
    result = await runner.run(request(workspace), events.append)
    assert invocation(record)["argv"] == [
        "exec",
        "--json",
        "--sandbox",
        "workspace-write",
        "-c",
        "sandbox_workspace_write.exclude_slash_tmp=true",
        "--model",
        "gpt-5-codex",
        "--skip-git-repo-check",
        "-",
    ]
    assert (record / "prompt.txt").read_text() == "Add the route."
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["command_execution", "file_change", "command_execution"]
    assert calls[1].arguments == {
        "changes": [{"path": str((workspace / "fake_agent_output.txt").absolute()), "kind": "add"}]
    }
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.exit_code, r.is_error) for r in results] == [(1, True), (None, False), (0, False)]
    (usage,) = [e for e in events if isinstance(e, Usage)]
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (500, 1500, 300)
    assert not result.is_error and result.final_text == "Done.\nSTATUS: done"
    assert result.tool_calls == 3


async def test_codex_turn_failed_is_an_error(
    record: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_SCENARIO", "turn-failed")
    result = await CodexRunner(sandbox=None).run(request(workspace), lambda e: None)
    assert result.is_error and result.exit_code == 1
    assert "usage limit" in result.final_text
    assert invocation(record)["argv"] == ["exec", "--json", "-"]


@needs_fixtures
async def test_codex_replaying_the_real_capture(
    record: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = FIXTURES / "yuanyuanyuan__stark-repo-analyzer-skill" / "codex-events.jsonl"
    monkeypatch.setenv("FAKE_AGENT_REPLAY", str(fixture))
    events: list[Event] = []
    result = await CodexRunner().run(request(workspace), events.append)
    assert result.tool_calls == 21
    assert result.is_error  # the capture stops before turn.completed
    assert not any(isinstance(e, Final) for e in events)


async def test_missing_cli_is_a_runner_error(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(workspace))
    with pytest.raises(RunnerError, match="'claude'"):
        await ClaudeCodeRunner().run(request(workspace), lambda e: None)
    with pytest.raises(RunnerError, match="'codex-nightly'"):
        await CodexRunner(executable="codex-nightly").run(request(workspace), lambda e: None)


def test_runners_from_plan_tables() -> None:
    claude = build_runner(
        RunnerSpec(
            name="c",
            kind="claude-code",
            model="opus",
            argv=("--x",),
            options={"executable": "claude-beta", "kill_grace": "1"},
        )
    )
    assert isinstance(claude, ClaudeCodeRunner)
    assert (claude.executable, claude.model, claude.extra_args, claude.kill_grace) == (
        "claude-beta",
        "opus",
        ("--x",),
        1.0,
    )
    codex = build_runner(RunnerSpec(name="x", kind="codex", options={"sandbox": "none"}))
    assert isinstance(codex, CodexRunner) and codex.sandbox is None
    assert codex.argv(AgentRequest(task_id="t", prompt="", workspace=Path()))[:3] == [
        "codex",
        "exec",
        "--json",
    ]
    with pytest.raises(ConfigurationError, match="unknown option"):
        build_runner(RunnerSpec(name="c", kind="claude-code", options={"modle": "x"}))
