"""CodexRunner driving the real Codex CLI against a scripted Responses API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from seawall.adapters.runners.codex import CodexRunner
from seawall.events import Event, ToolCall, ToolResult, Turn, Usage
from seawall.replay import ReplayFormat, detect_format
from seawall.runner import AgentRequest
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.fakes.openai_server import OpenAIResponsesServer
from tests.integration.realcli import agent_clis, codex_env, openai
from tests.integration.runnerkit import anyio_backend

__all__ = ["agent_clis", "anyio_backend", "codex_env", "openai"]

pytestmark = pytest.mark.anyio

ADD_B = "*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch\n"
BAD_PATCH = "*** Begin Patch\n*** Update File: missing.txt\n@@\n-old\n+new\n*** End Patch\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def request(workspace: Path, marker: str, **fields: object) -> AgentRequest:
    base: dict[str, object] = {
        "task_id": "cx",
        "prompt": f"Task {marker}: make the change.",
        "workspace": workspace,
        "max_turns": 20,
        "time_limit": 90.0,
    }
    return AgentRequest(**(base | fields))  # type: ignore[arg-type]


async def test_clean_edit_counts_real_turns_and_prices_the_usage(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], workspace: Path
) -> None:
    openai.add(
        Script(
            marker="CX-EDIT",
            turns=[
                ModelTurn(calls=[Call(name="exec_command", input={"cmd": "echo hi > a.txt"})]),
                ModelTurn(calls=[Call(name="apply_patch", input=ADD_B)]),
                ModelTurn(text="Both files added.\nSTATUS: done — a and b"),
            ],
        )
    )
    events: list[Event] = []
    result = await CodexRunner().run(request(workspace, "CX-EDIT"), events.append)
    assert (workspace / "a.txt").read_text() == "hi\n"
    assert (workspace / "b.txt").read_text() == "bee\n"
    assert not result.is_error, result
    assert result.turns == 3
    assert result.tool_calls == 2
    assert "STATUS: done" in result.final_text
    usages = [e for e in events if isinstance(e, Usage)]
    assert len(usages) == 3  # one per model response, not one total
    assert sum(u.input_tokens for u in usages) == 3 * 1200
    assert result.cost_usd > 0  # priced from the usage: Codex reports no cost
    assert "Success. Updated the following files" in openai.shown("CX-EDIT")


@pytest.mark.slow  # Codex holds an empty write_stdin poll about 5 s
async def test_failed_patches_and_polls_are_seen_live(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], workspace: Path
) -> None:
    poll = Call(
        name="write_stdin", input={"session_id": "{session}", "chars": "", "yield_time_ms": 250}
    )
    openai.add(
        Script(
            marker="CX-HIDDEN",
            turns=[
                ModelTurn(calls=[Call(name="apply_patch", input=BAD_PATCH)]),
                ModelTurn(calls=[Call(name="apply_patch", input=BAD_PATCH)]),
                ModelTurn(
                    calls=[
                        Call(
                            name="exec_command",
                            input={"cmd": "sleep 30; echo late", "yield_time_ms": 250},
                        )
                    ]
                ),
                ModelTurn(calls=[poll]),
                ModelTurn(calls=[poll]),
                ModelTurn(text="Done.\nSTATUS: done — patched"),
            ],
        )
    )
    events: list[Event] = []
    result = await CodexRunner().run(request(workspace, "CX-HIDDEN"), events.append)
    calls = [e for e in events if isinstance(e, ToolCall)]
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    patches = [c for c in calls if c.name == "apply_patch"]
    assert len(patches) == 2
    for patch in patches:
        assert patch.arguments["changes"] == [{"path": "missing.txt", "kind": "update"}]
        assert results[patch.call_id].is_error
        assert "verification failed" in results[patch.call_id].text
    polls = [c for c in calls if c.name == "write_stdin"]
    assert len(polls) == 2
    assert all(not results[p.call_id].is_error for p in polls), [results[p.call_id] for p in polls]
    assert result.turns == 6 == len([e for e in events if isinstance(e, Turn)])
    assert not (workspace / "missing.txt").exists()


async def test_a_model_error_is_a_failed_turn(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], workspace: Path
) -> None:
    openai.add(Script(marker="CX-ERR", turns=[ModelTurn(text="context too long", status=400)]))
    result = await CodexRunner().run(request(workspace, "CX-ERR"), lambda e: None)
    assert result.is_error
    assert "context too long" in result.final_text


async def test_the_sandbox_keeps_writes_inside_the_workspace(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], workspace: Path
) -> None:
    outside = workspace.parent / "outside.txt"
    escape = Call(name="exec_command", input={"cmd": f"echo x > {outside}"})
    inside = Call(name="exec_command", input={"cmd": "echo y > inside.txt"})
    scratch = Call(name="exec_command", input={"cmd": 'echo t > "$TMPDIR/t" && cat "$TMPDIR/t"'})
    openai.add(
        Script(
            marker="CX-JAIL",
            turns=[
                ModelTurn(calls=[escape]),
                ModelTurn(calls=[inside]),
                ModelTurn(calls=[scratch]),  # its own temporary directory is writable
                ModelTurn(text="STATUS: done"),
            ],
        )
    )
    events: list[Event] = []
    await CodexRunner().run(request(workspace, "CX-JAIL"), events.append)
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.is_error for r in results] == [True, False, False], results
    assert not outside.exists()
    assert (workspace / "inside.txt").read_text() == "y\n"
    assert CodexRunner().barrier.startswith("Codex sandbox")
    assert "post-wave check only" in CodexRunner(sandbox="danger-full-access").barrier


async def test_replay_reads_the_rollout_file_a_real_run_wrote(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], workspace: Path
) -> None:
    """Three rejected patches, which ``exec --json`` never shows, are in the rollout:
    ``seawall replay`` recognises the file, the breaker trips on the third failure in a
    row and error echo names the same error for the same patch."""
    bad = Call(name="apply_patch", input=BAD_PATCH)
    openai.add(
        Script(
            marker="CX-ROLL",
            turns=[ModelTurn(calls=[bad]) for _ in range(3)] + [ModelTurn(text="STATUS: done")],
        )
    )
    await CodexRunner(rollout="off").run(request(workspace, "CX-ROLL"), lambda e: None)
    rollouts = sorted((Path(codex_env["CODEX_HOME"]) / "sessions").glob("*/*/*/rollout-*.jsonl"))
    assert len(rollouts) == 1, rollouts
    assert detect_format(rollouts[0]) is ReplayFormat.CODEX_ROLLOUT
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [sys.executable, "-m", "seawall", "replay", "--json", str(rollouts[0])],
            cwd=workspace,
            check=False,
        )
    assert done.returncode == 3, done.stderr
    records = [json.loads(row) for row in done.stdout.decode().splitlines()]
    summary = records[-1]
    assert summary["format"] == "codex-rollout" and summary["malformed"] == 0, summary
    patches = [r for r in records if r["kind"] == "call" and r["name"] == "apply_patch"]
    failed = [r for r in records if r["kind"] == "result" and r["error"]]
    assert len(patches) == 3 and len(failed) == 3, records
    assert all("verification failed" in r["evidence"] for r in failed)
    trips = [r for r in records if r["kind"] == "trip"]
    assert [t["name"] for t in trips] == ["breaker/consecutive-failures"], trips
    assert trips[0]["line"] == failed[-1]["line"] and trips[0]["step"] == 3
    findings = [r for r in records if r["kind"] == "finding"]
    assert any(f["name"] == "error-echo" for f in findings), findings
