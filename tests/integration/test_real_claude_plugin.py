"""The Claude Code plugin in ``examples/claude-code-plugin`` under the real Claude Code CLI.

A scripted model plays the lead and its two subagents: the CLI loads the plugin (its
skill, command, hooks and MCP server); the wave is prepared first (a scripted model
cannot compose the prompts seawall answers with, so the test hands them to its script),
the lead asks for it with ``seawall next`` and dispatches both agents of the in-place
wave with the Agent tool, one of them tries to write the other's file and is refused
by the plugin's hook (the file is unchanged, the model is shown why), and the lead
hands both final messages to seawall's MCP ``next`` tool, which reviews, merges and
finishes the session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from seawall.session.step_types import load_schema
from tests.fakes.agent_clis import AgentClis
from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.integration.realcli import agent_clis, anthropic, claude_env
from tests.integration.sessionkit import make_repo, seawall, show, status

__all__ = ["agent_clis", "anthropic", "claude_env"]

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "claude-code-plugin"
NEXT_TOOL = "mcp__plugin_seawall_seawall__next"
APP_DONE = "Bumped x.\nSTATUS: done — x is 2"
DOCS_DONE = "Wrote the notes.\nSTATUS: done — notes written"


def _plan(tmp_path: Path) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "plugin"\nisolation = "none"\n'
        '[[task]]\nid = "app"\nprompt = "Bump x (SUB-APP)."\nscope = ["src/app.py"]\n'
        '[[task]]\nid = "docs"\nprompt = "Write the notes (SUB-DOCS)."\n'
        'scope = ["docs/**"]\n'
    )
    return plan


def _scripts(repo: Path, prompts: dict[str, str]) -> list[Script]:
    dispatch = [
        Call(
            name="Agent",
            input={
                "description": f"seawall task {task}",
                "prompt": prompt,
                "subagent_type": "general-purpose",
            },
        )
        for task, prompt in prompts.items()
    ]
    outputs = {"outputs": {"app": APP_DONE, "docs": DOCS_DONE}}
    lead = Script(
        marker="LEAD-PLUGIN",
        turns=[
            ModelTurn(calls=[Call(name="Bash", input={"command": "seawall next --json"})]),
            ModelTurn(calls=dispatch),
            ModelTurn(calls=[Call(name=NEXT_TOOL, input=outputs)]),
            ModelTurn(text="The wave is reviewed and merged; the session is finished."),
        ],
    )
    app = Script(
        marker="SUB-APP",
        turns=[
            *_read_then_write(repo / "src/app.py", "x = 2\n"),
            *_read_then_write(repo / "docs/notes.md", "hijacked\n"),  # the other's file
            ModelTurn(text=APP_DONE),
        ],
    )
    docs = Script(
        marker="SUB-DOCS",
        turns=[*_read_then_write(repo / "docs/notes.md", "notes v2\n"), ModelTurn(text=DOCS_DONE)],
    )
    return [lead, app, docs]


def _read_then_write(path: Path, content: str) -> list[ModelTurn]:
    """Claude Code writes an existing file only after reading it."""
    return [
        ModelTurn(calls=[Call(name="Read", input={"file_path": str(path)})]),
        ModelTurn(calls=[Call(name="Write", input={"file_path": str(path), "content": content})]),
    ]


def _tool_result(events: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    """The JSON a tool call of the lead answered, from the stream."""
    for event in events:
        message = event.get("message")
        if event.get("type") != "user" or not isinstance(message, dict):
            continue
        if event.get("parent_tool_use_id"):
            continue  # a subagent's (its call ids are numbered on their own)
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("tool_use_id") == call_id:
                content = block.get("content")
                if isinstance(content, list):
                    content = "".join(str(part.get("text", "")) for part in content)
                answer: dict[str, Any] = json.loads(str(content))
                return answer
    raise AssertionError(f"no tool result for {call_id}")


def _events(stdout: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            found.append(data)
    return found


@pytest.mark.slow  # the real Claude Code CLI, two subagents, seawall's hooks on every call
def test_a_lead_runs_an_in_place_wave_through_the_plugin(
    agent_clis: AgentClis,
    anthropic: AnthropicServer,
    claude_env: dict[str, str],
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n", "docs/notes.md": "notes\n"})
    first = seawall("next", str(_plan(tmp_path)), "--json", "--repo", str(repo), cwd=repo)
    step = json.loads(first.stdout)
    assert step["action"] == "dispatch" and step["wave"]["isolation"] == "none", first.stderr
    prompts = {a["task"]: a["prompt"] for a in step["wave"]["agents"]}
    for script in _scripts(repo, prompts):
        anthropic.add(script)
    bin_dir = str(Path(sys.executable).parent)  # `seawall` for the plugin's hooks and server
    env = {**claude_env, "PATH": f"{bin_dir}:{claude_env['PATH']}"}
    allowed = ",".join(["Agent", "Task", "Bash", "Read", "Write", "Edit", NEXT_TOOL])
    done = subprocess.run(
        [str(agent_clis.claude), "-p", "LEAD-PLUGIN: run the prepared seawall wave",
         "--output-format", "stream-json", "--verbose", "--plugin-dir", str(PLUGIN),
         "--permission-mode", "dontAsk", "--allowedTools", allowed, "--max-turns", "12"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=420, check=False,
    )  # fmt: skip
    events = _events(done.stdout)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    init = next(e for e in events if e.get("subtype") == "init")
    assert [p["name"] for p in init["plugins"]] == ["seawall"]
    assert "seawall:seawall-waves" in init["skills"]
    assert "seawall:seawall" in init["slash_commands"]
    assert any(s["name"] == "plugin:seawall:seawall" for s in init["mcp_servers"])
    # the write outside its scope was refused: the file holds the other agent's work
    assert (repo / "docs/notes.md").read_text() == "notes v2\n"
    shown_app = anthropic.shown("SUB-APP")
    assert "docs/notes.md is outside this task's file scope" in shown_app
    assert "this task may change: src/app.py" in shown_app
    assert "outside this task's file scope" not in anthropic.shown("SUB-DOCS")
    # the lead reviewed through the MCP tool: both merged, the session finished
    answer = _tool_result(events, "call_t2_0")  # what the lead was shown for its `next`
    jsonschema.validate(answer, load_schema(answer["schema"]))
    assert answer["action"] == "done" and answer["phase"] == "done"
    assert {a["task"]: a["merged"] for a in answer["reviewed"]["agents"]} == {
        "app": True,
        "docs": True,
    }
    state = status(repo)
    assert state["phase"] == "done"
    (wave,) = state["waves"]
    merged = {a["task"]: (a["status"], a["merged"]) for a in wave["agents"]}
    assert merged == {"app": ("done", True), "docs": ("done", True)}
    assert show(repo, "main", "src/app.py") == "x = 2\n"
    assert show(repo, "main", "docs/notes.md") == "notes v2\n"
    events_log = (repo / ".seawall" / step["session"] / "events.jsonl").read_text()
    denial = [json.loads(line) for line in events_log.splitlines() if '"scope_denied"' in line]
    assert denial and all(d.get("task") == "app" for d in denial), denial
