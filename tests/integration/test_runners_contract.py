"""Every built-in runner passes the AgentRunner conformance kit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from seawall.adapters.runners.callable import AgentEmit, CallableRunner
from seawall.adapters.runners.claude_code import ClaudeCodeRunner
from seawall.adapters.runners.codex import CodexRunner
from seawall.adapters.runners.command import CommandRunner
from seawall.adapters.runners.opencode import OpenCodeRunner
from seawall.adapters.runners.scripted import AgentScript, Say, ScriptedRunner, Sleep
from seawall.events import Message, Turn
from seawall.runner import AgentRequest, AgentRunner
from seawall.testing.runner_processes import ProcessRunnerContract
from seawall.testing.runners import AgentRunnerContract

FAKE_BIN = Path(__file__).resolve().parents[1] / "fakes" / "bin"


@pytest.fixture
def fakes_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{FAKE_BIN}:{Path(sys.executable).parent}:/usr/bin:/bin")


class TestCommandRunnerText(AgentRunnerContract):
    @pytest.fixture
    def runner(self) -> AgentRunner:
        return CommandRunner([sys.executable, str(FAKE_BIN / "text_agent.py")], kill_grace=0.5)


class TestCommandRunnerStreamJson(AgentRunnerContract):
    @pytest.fixture
    def runner(self, fakes_on_path: None) -> AgentRunner:
        return CommandRunner(["claude"], output="stream-json", kill_grace=0.5)


class TestClaudeCodeRunner(AgentRunnerContract):
    @pytest.fixture
    def runner(self, fakes_on_path: None) -> AgentRunner:
        return ClaudeCodeRunner(kill_grace=0.5)


class TestCodexRunner(AgentRunnerContract):
    @pytest.fixture
    def runner(self, fakes_on_path: None) -> AgentRunner:
        return CodexRunner(kill_grace=0.5)


class TestScriptedRunner(AgentRunnerContract):
    @pytest.fixture
    def runner(self) -> AgentRunner:
        return ScriptedRunner(
            {
                "finish": AgentScript(steps=(Say(text="on it"),), final="STATUS: done"),
                "hang": AgentScript(steps=(Say(text="working"), Sleep(seconds=600))),
            }
        )


async def _callable_agent(request: AgentRequest, emit: AgentEmit) -> str:
    import anyio

    await emit(Turn(number=1))
    await emit(Message(text="on it", turn=1))
    if request.task_id == "hang":
        await anyio.sleep(600)
    return "STATUS: done"


class TestCallableRunner(AgentRunnerContract):
    @pytest.fixture
    def runner(self) -> AgentRunner:
        return CallableRunner(_callable_agent)


class TestCommandRunnerProcesses(ProcessRunnerContract):
    """The command runner holds the process duties: process groups, SIGKILL, turns."""

    @pytest.fixture
    def runner(self) -> AgentRunner:
        argv = [sys.executable, str(FAKE_BIN / "kit_agent.py")]
        return CommandRunner(argv, output="stream-json", kill_grace=0.5)


class TestOpenCodeRunnerProcesses(ProcessRunnerContract):
    """The opencode runner, on the public base, against a fake opencode's real format."""

    @pytest.fixture
    def runner(self, fakes_on_path: None) -> AgentRunner:
        return OpenCodeRunner(kill_grace=0.5)
