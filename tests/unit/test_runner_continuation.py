"""Each CLI that can continue a conversation is given it on its command line; Claude Code
gets the session file beside its new working directory first. (The real CLIs continuing
their conversations: ``tests/integration/test_real_continuation.py``.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.adapters.runners.claude_code import ClaudeCodeRunner, carry_session, session_folder
from seawall.adapters.runners.codex import CodexRunner
from seawall.adapters.runners.command import CommandRunner
from seawall.adapters.runners.gemini import GeminiRunner
from seawall.adapters.runners.opencode import OpenCodeRunner
from seawall.runner import AgentRequest, AgentRunner


def _request(workspace: Path, conversation: str | None = None) -> AgentRequest:
    return AgentRequest(task_id="t", prompt="p", workspace=workspace, conversation=conversation)


def test_each_cli_continues_by_its_own_flag(tmp_path: Path) -> None:
    go_on = _request(tmp_path, "abc-123")
    claude = ClaudeCodeRunner().argv(go_on)
    assert claude[claude.index("--resume") + 1] == "abc-123"
    codex = CodexRunner(sandbox="workspace-write").argv(go_on)
    # ``exec resume`` takes the thread, then the prompt from stdin; its sandbox by config
    assert codex[:4] == ["codex", "exec", "resume", "--json"] and codex[-2:] == ["abc-123", "-"]
    assert 'sandbox_mode="workspace-write"' in codex and "--sandbox" not in codex
    opencode = OpenCodeRunner().argv(go_on)
    assert opencode[opencode.index("--session") + 1] == "abc-123"
    fresh = _request(tmp_path)
    assert "--resume" not in ClaudeCodeRunner().argv(fresh)
    assert "resume" not in CodexRunner().argv(fresh)
    assert "--session" not in OpenCodeRunner().argv(fresh)


@pytest.mark.parametrize(
    ("runner", "continues"),
    [
        (ClaudeCodeRunner, True),
        (CodexRunner, True),
        (OpenCodeRunner, True),
        (GeminiRunner, False),
        (CommandRunner, False),
    ],
)
def test_which_runners_continue_conversations(runner: type[AgentRunner], continues: bool) -> None:
    built = runner(["agent"]) if runner is CommandRunner else runner()
    assert built.continues_conversations is continues


def test_claudes_session_file_is_carried_to_the_new_workspace(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home")}
    old, new = tmp_path / "w1" / "task", tmp_path / "w2" / "task_x"
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    folder = session_folder(env, old)
    assert folder.name == str(old.resolve()).replace("/", "-").replace("_", "-")
    folder.mkdir(parents=True)
    (folder / "abc.jsonl").write_text('{"type":"user"}\n')
    request = AgentRequest(
        task_id="t", prompt="p", workspace=new, conversation="abc", conversation_workspace=old
    )
    assert carry_session(env, request)
    assert (session_folder(env, new) / "abc.jsonl").read_text() == '{"type":"user"}\n'
    assert session_folder(env, new).name.endswith("-w2-task-x")  # "_" is a dash too
    missing = AgentRequest(task_id="t", prompt="p", workspace=new, conversation="gone")
    assert not carry_session(env, missing)  # the CLI then says so; the agent starts afresh
    configured = {**env, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    assert session_folder(configured, new).parent == tmp_path / "cfg" / "projects"
