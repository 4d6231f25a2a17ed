"""ClaudeCodeRunner driving the real Claude Code CLI against a scripted Messages API."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.adapters.runners.claude_code import ClaudeCodeRunner
from seawall.events import Event, Final, ToolResult
from seawall.runner import AgentRequest
from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.integration.realcli import agent_clis, anthropic, claude_env
from tests.integration.runnerkit import anyio_backend, workspace

__all__ = ["agent_clis", "anthropic", "anyio_backend", "claude_env", "workspace"]

pytestmark = pytest.mark.anyio


def request(workspace: Path, marker: str, **fields: object) -> AgentRequest:
    base: dict[str, object] = {
        "task_id": "api",
        "prompt": f"Task {marker}: add the greeting file.",
        "workspace": workspace,
        "max_turns": 12,
        "transcript_path": workspace.parent / "transcripts" / "api.jsonl",
        "time_limit": 90.0,
    }
    return AgentRequest(**(base | fields))  # type: ignore[arg-type]


@pytest.mark.slow  # real claude with seawall's hooks on every call
async def test_clean_edit_counts_turns_cost_and_shows_the_model_the_output(
    anthropic: AnthropicServer, claude_env: dict[str, str], workspace: Path
) -> None:
    anthropic.add(
        Script(
            marker="EDIT-1",
            turns=[
                ModelTurn(
                    calls=[
                        Call(
                            name="Write",
                            input={"file_path": "{cwd}/hello.txt", "content": "hi there\n"},
                        )
                    ]
                ),
                ModelTurn(calls=[Call(name="Bash", input={"command": "wc -c hello.txt"})]),
                ModelTurn(text="Wrote the file.\nSTATUS: done — greeting added"),
            ],
        )
    )
    events: list[Event] = []
    result = await ClaudeCodeRunner().run(request(workspace, "EDIT-1"), events.append)
    assert (workspace / "hello.txt").read_text() == "hi there\n"
    assert not result.is_error, result
    assert result.turns == 3
    assert result.tool_calls == 2
    assert result.cost_usd > 0
    assert "STATUS: done" in result.final_text
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.is_error for r in results] == [False, False]
    shown = anthropic.shown("EDIT-1")
    assert "9 hello.txt" in shown  # the model saw the command's real output
    final = [e for e in events if isinstance(e, Final)]
    assert final and final[-1].num_turns == 3


@pytest.mark.slow  # real claude with seawall's hooks on every call
async def test_turn_limit_ends_the_run_as_a_turn_limit_not_a_crash(
    anthropic: AnthropicServer, claude_env: dict[str, str], workspace: Path
) -> None:
    look = Call(name="Bash", input={"command": "ls"})
    anthropic.add(Script(marker="LIMIT-R", turns=[ModelTurn(calls=[look])], loop=True))
    events: list[Event] = []
    result = await ClaudeCodeRunner().run(request(workspace, "LIMIT-R", max_turns=2), events.append)
    (final,) = [e for e in events if isinstance(e, Final)]
    assert final.subtype == "error_max_turns" and final.turn_limit
    assert result.is_error and result.exit_code not in (None,)
    assert len(anthropic.answered("LIMIT-R")) == 2


async def test_an_api_error_is_a_failed_run_with_the_error_text(
    anthropic: AnthropicServer, claude_env: dict[str, str], workspace: Path
) -> None:
    anthropic.add(
        Script(
            marker="API-ERR",
            turns=[ModelTurn(text="model sonnet-x is not available", status=400)],
        )
    )
    events: list[Event] = []
    result = await ClaudeCodeRunner().run(request(workspace, "API-ERR"), events.append)
    (final,) = [e for e in events if isinstance(e, Final)]
    assert final.is_error and result.is_error
    assert "not available" in result.final_text, result.final_text


async def test_a_start_failure_keeps_the_cli_stderr(
    anthropic: AnthropicServer, claude_env: dict[str, str], workspace: Path
) -> None:
    runner = ClaudeCodeRunner(extra_args=("--no-such-flag",))
    result = await runner.run(request(workspace, "NEVER"), lambda e: None)
    assert result.is_error and result.exit_code not in (0, None)
    assert "no-such-flag" in result.stderr_tail
    assert not anthropic.requests
