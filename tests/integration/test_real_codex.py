"""CodexRunner driving the real Codex CLI against a scripted Responses API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from seawall.adapters.runners.codex import CodexRunner
from seawall.events import Event, ToolCall, ToolResult, Turn, Usage, edited_paths
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


LOCAL_MODEL = "local-coder"
"""A model Codex has no metadata for (any custom or local provider's): Codex gives it no
``apply_patch`` tool, and it edits through ``exec_command``."""


def heredoc(patch: str, *, cd: str = "") -> Call:
    """``apply_patch <<'PATCH'`` ... ``PATCH`` as an ``exec_command``, after ``cd``."""
    prefix = f"cd {cd} && " if cd else ""
    return Call(name="exec_command", input={"cmd": f"{prefix}apply_patch <<'PATCH'\n{patch}PATCH"})


SHELL_EDITS = (
    "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n"
    "*** Add File: sub/new.txt\n+new\n*** End Patch\n"
)
ARGUMENT_FORM = 'apply_patch "*** Begin Patch\n*** Add File: c.txt\n+cee\n*** End Patch\n"'
IN_SUB = "*** Begin Patch\n*** Add File: in_sub.txt\n+x\n*** End Patch\n"


def shell_patch_script(marker: str) -> Script:
    """Edits in the shell forms: two heredocs that apply, one Codex rejects, and the
    argument form, which the shell runs and cannot find."""
    return Script(
        marker=marker,
        turns=[
            ModelTurn(calls=[heredoc(SHELL_EDITS)]),
            ModelTurn(calls=[heredoc(BAD_PATCH)]),
            ModelTurn(calls=[Call(name="exec_command", input={"cmd": ARGUMENT_FORM})]),
            ModelTurn(calls=[heredoc(IN_SUB, cd="sub")]),
            ModelTurn(text="Patched.\nSTATUS: done — patched"),
        ],
    )


async def test_a_model_codex_does_not_know_edits_through_the_shell_and_those_are_edits(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    openai.add(shell_patch_script("CX-SHELL"))
    events: list[Event] = []
    runner = CodexRunner(model=LOCAL_MODEL)
    result = await runner.run(request(workspace, "CX-SHELL"), events.append)
    offered = {tool.get("name") for tool in openai.answered("CX-SHELL")[0].body["tools"]}
    assert "exec_command" in offered and "apply_patch" not in offered, offered
    assert (workspace / "a.txt").read_text() == "two\n"
    assert (workspace / "sub" / "new.txt").read_text() == "new\n"
    assert (workspace / "sub" / "in_sub.txt").read_text() == "x\n"
    assert not (workspace / "c.txt").exists()
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["apply_patch"] * 4, calls
    assert [edited_paths(c) for c in calls] == [
        ("a.txt", "sub/new.txt"),
        ("missing.txt",),
        ("c.txt",),
        ("sub/in_sub.txt",),
    ]
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    outcome = [results[c.call_id] for c in calls]
    assert [r.is_error for r in outcome] == [False, True, True, False], outcome
    assert "verification failed" in outcome[1].text
    assert outcome[2].exit_code == 127 and "apply_patch: command not found" in outcome[2].text
    assert all(r.name == "apply_patch" for r in outcome)
    assert result.tool_calls == 4 and not result.is_error


async def test_without_the_rollout_the_stream_shows_the_shell_edits_it_has(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], workspace: Path
) -> None:
    """``exec --json`` shows an applied heredoc as a ``file_change`` and the argument
    form as a command: both are edits; a patch Codex rejected it does not show at all."""
    (workspace / "a.txt").write_text("one\n")
    openai.add(shell_patch_script("CX-SHELL-STREAM"))
    events: list[Event] = []
    runner = CodexRunner(model=LOCAL_MODEL, rollout="off")
    await runner.run(request(workspace, "CX-SHELL-STREAM"), events.append)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["file_change", "apply_patch", "file_change"], calls
    assert [edited_paths(c) for c in calls] == [
        (str(workspace / "a.txt"), str(workspace / "sub" / "new.txt")),
        ("c.txt",),
        (str(workspace / "sub" / "in_sub.txt"),),
    ]
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    assert [results[c.call_id].is_error for c in calls] == [False, True, False]
    assert results[calls[1].call_id].exit_code == 127
