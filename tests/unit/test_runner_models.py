"""Each agent CLI is given the model of the attempt: the task's (``Task.models``) when it
names one, else the runner's own; a command agent reads it from ``SEAWALL_MODEL``."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.adapters.runners.claude_code import ClaudeCodeRunner
from seawall.adapters.runners.codex import CodexRunner
from seawall.adapters.runners.gemini import GeminiRunner
from seawall.adapters.runners.opencode import OpenCodeRunner
from seawall.adapters.runners.streaming import StreamingCliRunner
from seawall.model import Task
from seawall.runner import AgentRequest

RUNNERS = [ClaudeCodeRunner, CodexRunner, OpenCodeRunner, GeminiRunner]


def _model_in(argv: list[str]) -> str | None:
    return argv[argv.index("--model") + 1] if "--model" in argv else None


@pytest.mark.parametrize("kind", RUNNERS, ids=lambda kind: kind.__name__)
def test_the_attempts_model_wins_over_the_runners(
    kind: type[StreamingCliRunner], tmp_path: Path
) -> None:
    runner = kind(model="runner-model")
    plain = AgentRequest(task_id="t", prompt="p", workspace=tmp_path)
    assert _model_in(runner.argv(plain)) == "runner-model"
    escalated = AgentRequest(task_id="t", prompt="p", workspace=tmp_path, model="big-model")
    assert _model_in(runner.argv(escalated)) == "big-model"
    assert _model_in(kind().argv(plain)) is None  # no model named: the CLI's default


def test_a_command_agent_is_told_its_model(tmp_path: Path) -> None:
    request = AgentRequest(task_id="t", prompt="p", workspace=tmp_path, model="big-model")
    assert request.seawall_env()["SEAWALL_MODEL"] == "big-model"
    assert (
        "SEAWALL_MODEL"
        not in AgentRequest(task_id="t", prompt="p", workspace=tmp_path).seawall_env()
    )


def test_each_attempt_takes_the_next_model_and_the_last_repeats() -> None:
    task = Task(id="t", prompt="p", models=("small", "medium", "large"))
    assert [task.model_for(n) for n in range(5)] == ["small", "medium", "large", "large", "large"]
    assert Task(id="t", prompt="p").model_for(3) is None
