"""An interrupted agent continues its own conversation, with the real Claude Code and
Codex driven by scripted model servers: after a provider's limit, after a SIGKILL of the
coordinator, and when its work conflicted in the merge (the fix goes back to its author).
The server sees the earlier turns in the continued requests, and no turn is asked for
twice: the work is not paid for again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.anthropic_server import usage_limit as claude_usage_limit
from tests.fakes.model_script import Call, LoggedModelRequest, ModelTurn, Script
from tests.fakes.openai_server import OpenAIResponsesServer
from tests.fakes.openai_server import usage_limit as codex_usage_limit
from tests.integration.realcli import agent_clis, anthropic, claude_env, codex_env, openai
from tests.integration.sessionkit import agents_by_wave, make_repo, seawall, show, status

__all__ = ["agent_clis", "anthropic", "claude_env", "codex_env", "openai"]


def _plan(path: Path, kind: str, tasks: list[tuple[str, str, list[str]]], extra: str = "") -> Path:
    """Tasks of ``(id, marker, scope)``."""
    lines = ["[session]", f'name = "{kind}-continue"', 'agent = "agent"', extra]
    lines += ["[runners.agent]", f'kind = "{kind}"']
    for task_id, marker, scope in tasks:
        lines += [
            "[[task]]",
            f'id = "{task_id}"',
            f'prompt = "Work item {marker}: do your part."',
            f"scope = {json.dumps(scope)}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _write(file: str, content: str) -> ModelTurn:
    return ModelTurn(
        calls=[Call(name="Write", input={"file_path": f"{{cwd}}/{file}", "content": content})]
    )


def _patch(file: str, content: str) -> ModelTurn:
    body = "".join(f"+{line}\n" for line in content.splitlines())
    patch = f"*** Begin Patch\n*** Add File: {file}\n{body}*** End Patch\n"
    return ModelTurn(calls=[Call(name="apply_patch", input=patch)])


def _done(text: str) -> ModelTurn:
    return ModelTurn(text=f"{text}\nSTATUS: done — {text}")


def _shown(request: LoggedModelRequest) -> str:
    return json.dumps(request.body)


def _turns(requests: list[LoggedModelRequest]) -> list[int | None]:
    return [r.turn for r in requests]


def _agent(data: dict[str, Any], wave: int, task: str) -> dict[str, Any]:
    return dict(agents_by_wave(data)[wave][task])


def _paused_then_continued(data: dict[str, Any], task: str) -> dict[str, Any]:
    """The task's agent paused in wave 1 and done in wave 2, continuing the first one's
    conversation; the first one's record."""
    first, again = _agent(data, 0, task), _agent(data, 1, task)
    assert first["status"] == "paused" and first["conversation"], first
    assert again["status"] == "done" and again["continued"] == first["conversation"], again
    return first


@pytest.mark.slow
def test_claude_paused_mid_task_continues_its_conversation_after_the_reset(
    anthropic: AnthropicServer,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-scripted")
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    resets_at = int(time.time() + 20)
    # a writes a1.py, meets the limit at its second request, then (continued) a2.py
    turns = [_write("a1.py", "A1 = 1\n"), _write("a2.py", "A2 = 2\n"), _done("a")]
    anthropic.add(Script(marker="CONT-A", turns=turns, once={1: claude_usage_limit(resets_at)}))
    anthropic.add(Script(marker="CONT-B", turns=[_write("b.py", "B = 1\n"), _done("b")]))
    plan = _plan(
        tmp_path / "plan.toml",
        "claude-code",
        [("a", "CONT-A", ["a1.py", "a2.py"]), ("b", "CONT-B", ["b.py"])],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=240)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    data = status(repo)
    first = _paused_then_continued(data, "a")
    assert f"a: continues the conversation {first['conversation']}" in said
    requests = anthropic.answered("CONT-A")
    # turn 0 once, turn 1 refused, then turn 1 and 2 in the continued conversation
    assert _turns(requests) == [0, 1, 1, 2], _turns(requests)
    continued = _shown(requests[2])
    assert "call_t0_0" in continued and "CONTINUE:" in continued  # the earlier turns, and now
    assert time.time() >= resets_at
    assert not (repo / ".seawall" / "issues").exists()
    assert show(repo, "main", "a1.py") == "A1 = 1\n" and show(repo, "main", "a2.py") == "A2 = 2\n"
    assert show(repo, "main", "b.py") == "B = 1\n"
    state_md = next((repo / ".seawall").glob("*/STATE.md")).read_text()
    assert f"continued its conversation {first['conversation']}" in state_md


@pytest.mark.slow
def test_claude_limit_past_max_wait_halts_and_a_resume_continues_the_conversation(
    anthropic: AnthropicServer,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reset further ahead than ``max_wait`` halts with exit 6 naming it; a resume
    before the reset waits for it, then the paused agent's conversation goes on."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-scripted")
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    resets_at = int(time.time() + 10)
    turns = [_write("h1.py", "H1 = 1\n"), _write("h2.py", "H2 = 2\n"), _done("h")]
    anthropic.add(Script(marker="CONT-H", turns=turns, once={1: claude_usage_limit(resets_at)}))
    plan = _plan(
        tmp_path / "plan.toml",
        "claude-code",
        [("h", "CONT-H", ["h1.py", "h2.py"])],
        extra="max_wait = 0.05",  # minutes: the reset lies past it
    )
    halted = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=240)
    said = halted.stdout + halted.stderr
    assert halted.returncode == 6, said
    data = status(repo)
    assert data["halt"]["resets_at"] == resets_at and data["halt"]["provider"] == "anthropic"
    first = _agent(data, 0, "h")
    assert first["status"] == "paused" and first["conversation"], first
    assert not (repo / ".seawall" / "issues").exists()
    done = seawall("resume", "--repo", str(repo), cwd=repo, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.time() >= resets_at  # the resume waited for the reset
    again = _agent(status(repo), 1, "h")
    assert again["status"] == "done" and again["continued"] == first["conversation"], again
    requests = anthropic.answered("CONT-H")
    assert _turns(requests) == [0, 1, 1, 2], _turns(requests)
    assert "call_t0_0" in _shown(requests[2]) and "CONTINUE:" in _shown(requests[2])
    assert show(repo, "main", "h1.py") == "H1 = 1\n" and show(repo, "main", "h2.py") == "H2 = 2\n"


def _spawn_run(plan: Path, repo: Path, log: Path) -> subprocess.Popen[bytes]:
    """``seawall run`` in a process group of its own (its agents have theirs), its
    output in ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "seawall", "run", str(plan), "--repo", str(repo)],
            cwd=repo,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _kill_mid_agent(
    anthropic: AnthropicServer, plan: Path, repo: Path, marker: str, log: Path
) -> None:
    """Run ``plan`` and SIGKILL the coordinator while the agent of ``marker`` waits for
    its second model answer (its first has been given)."""
    run = _spawn_run(plan, repo, log)
    try:
        deadline = time.time() + 120
        while _turns(anthropic.answered(marker)) != [0, 1] and time.time() < deadline:
            assert run.poll() is None, log.read_text()
            time.sleep(0.2)
        assert _turns(anthropic.answered(marker)) == [0, 1]
        time.sleep(1.5)  # the agent's live file names its conversation within a second
        os.killpg(run.pid, signal.SIGKILL)  # the coordinator; the agent is left running
        run.wait(timeout=30)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()


@pytest.mark.slow
def test_claude_continues_its_conversation_after_a_sigkill_of_the_coordinator(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    turns = [_write("k1.py", "K1 = 1\n"), _write("k2.py", "K2 = 2\n"), _done("k")]
    # its second request hangs: the coordinator is killed while the agent waits for it
    slow = ModelTurn(text="...", delay=120)
    anthropic.add(Script(marker="CONT-K", turns=turns, once={1: slow}))
    plan = _plan(tmp_path / "plan.toml", "claude-code", [("k", "CONT-K", ["k1.py", "k2.py"])])
    _kill_mid_agent(anthropic, plan, repo, "CONT-K", tmp_path / "run.log")
    done = seawall("resume", "--repo", str(repo), cwd=repo, timeout=240)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    data = status(repo)
    first, again = _agent(data, 0, "k"), _agent(data, 1, "k")
    assert first["conversation"] and again["continued"] == first["conversation"], (first, again)
    requests = anthropic.answered("CONT-K")
    # turn 0 was never asked for again: only the continuation was paid for
    assert _turns(requests) == [0, 1, 1, 2], _turns(requests)
    continued = _shown(requests[2])
    assert "call_t0_0" in continued and "CONTINUE:" in continued
    assert "the session stopped before you finished" in continued
    assert show(repo, "main", "k1.py") == "K1 = 1\n" and show(repo, "main", "k2.py") == "K2 = 2\n"


@pytest.mark.slow
def test_claude_a_conversation_gone_from_its_store_starts_the_agent_afresh(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """The killed agent's session file is gone when the resume continues it: Claude Code
    finds no conversation, and the agent starts afresh at once with the carry-forward
    prompt, said on the console and in STATE.md."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    turns = [_write("g1.py", "G1 = 1\n"), _write("g2.py", "G2 = 2\n"), _done("g")]
    anthropic.add(Script(marker="CONT-G", turns=turns, once={1: ModelTurn(delay=120)}))
    plan = _plan(tmp_path / "plan.toml", "claude-code", [("g", "CONT-G", ["g1.py", "g2.py"])])
    _kill_mid_agent(anthropic, plan, repo, "CONT-G", tmp_path / "run.log")
    store = Path(claude_env["HOME"]) / ".claude" / "projects"
    for path in store.glob("*/*.jsonl"):
        path.unlink()
    done = seawall("resume", "--repo", str(repo), cwd=repo, timeout=240)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    data = status(repo)
    first, again = _agent(data, 0, "g"), _agent(data, 1, "g")
    assert first["conversation"] and again["continued"] == "", (first, again)
    lost = f"conversation {first['conversation']} not continued: No conversation found"
    assert lost in said
    state_md = next((repo / ".seawall").glob("*/STATE.md")).read_text()
    assert lost in state_md and "started afresh with the carry-forward prompt" in state_md
    requests = anthropic.answered("CONT-G")
    # the fresh agent's conversation starts over; its prompt carries the work forward
    assert _turns(requests) == [0, 1, 0, 1, 2], _turns(requests)
    assert "CARRIED-FORWARD TASK g" in _shown(requests[2])
    assert show(repo, "main", "g1.py") == "G1 = 1\n" and show(repo, "main", "g2.py") == "G2 = 2\n"


@pytest.mark.slow
def test_claude_a_merge_conflicts_fix_goes_back_to_its_authors_conversation(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"shared.md": "one\ntwo\nthree\n"})
    read = ModelTurn(calls=[Call(name="Read", input={"file_path": "{cwd}/shared.md"})])
    c_turns = [read, _write("shared.md", "one\nC\nthree\n"), _done("c")]
    anthropic.add(Script(marker="CONF-C", turns=c_turns))
    # d's conversation: it reads and writes, reports; continued for the fix, it reads the
    # file on the new base and writes the reconciled one
    d_turns = [read, _write("shared.md", "one\nD\nthree\n")]
    fix = [read, _write("shared.md", "one\nC\nD\nthree\n"), _done("d fixed")]
    anthropic.add(Script(marker="CONF-D", turns=[*d_turns, *fix], once={2: _done("d")}))
    plan = _plan(
        tmp_path / "plan.toml",
        "claude-code",
        [("c", "CONF-C", ["shared.md"]), ("d", "CONF-D", ["shared.md"])],
        extra='isolation = "worktree"',
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    data = status(repo)
    author = _agent(data, 0, "d")
    fixer = _agent(data, 1, "d-fix-w1")
    assert author["conversation"] and fixer["continued"] == author["conversation"], fixer
    assert "(the agent of d)" in said
    requests = anthropic.answered("CONF-D")
    assert _turns(requests) == [0, 1, 2, 2, 3, 4], _turns(requests)
    fixing = _shown(requests[3])
    assert "call_t1_0" in fixing and "CONFLICT FIX" in fixing and "CONTINUE:" in fixing
    assert show(repo, "main", "shared.md") == "one\nC\nD\nthree\n"


@pytest.mark.slow
def test_claude_a_rejected_status_goes_back_to_the_same_conversation(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """An agent whose edit failed and who reported done anyway is FAILED (its STATUS is
    rejected); its fix continues its own conversation, told the failure."""
    repo = make_repo(tmp_path / "repo", {"app.py": "X = 1\n"})
    read = ModelTurn(calls=[Call(name="Read", input={"file_path": "{cwd}/app.py"})])
    # the write is refused (Claude Code wants the file read first), yet it reports done
    turns = [_write("app.py", "X = 2\n"), read, _write("app.py", "X = 2\n"), _done("read first")]
    anthropic.add(Script(marker="CONT-F", turns=turns, once={1: _done("app")}))
    plan = _plan(tmp_path / "plan.toml", "claude-code", [("app", "CONT-F", ["app.py"])])
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    data = status(repo)
    first, again = _agent(data, 0, "app"), _agent(data, 1, "app")
    assert first["status"] == "failed" and first["conversation"], first
    assert again["status"] == "done" and again["continued"] == first["conversation"], again
    requests = anthropic.answered("CONT-F")
    assert _turns(requests) == [0, 1, 1, 2, 3], _turns(requests)
    fixing = _shown(requests[2])
    assert "your attempt ended as FAILED" in fixing and "call_t0_0" in fixing
    assert show(repo, "main", "app.py") == "X = 2\n"


@pytest.mark.slow
def test_codex_paused_mid_task_continues_its_thread_after_the_reset(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    # Codex prints the reset to the minute, read as that minute's end
    now = time.time()
    minute_end = (int(now) // 60 + 1) * 60
    if minute_end - now < 15:
        minute_end += 60
    resets_at = minute_end - 1
    limit = codex_usage_limit(resets_at)
    turns = [_patch("a1.py", "A1 = 1"), _patch("a2.py", "A2 = 2"), _done("a")]
    openai.add(Script(marker="CCONT-A", turns=turns, once={1: limit}))
    openai.add(Script(marker="CCONT-B", turns=[_patch("b.py", "B = 1"), _done("b")]))
    plan = _plan(
        tmp_path / "plan.toml",
        "codex",
        [("a", "CCONT-A", ["a1.py", "a2.py"]), ("b", "CCONT-B", ["b.py"])],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    data = status(repo)
    _paused_then_continued(data, "a")
    again = _agent(data, 1, "a")
    requests = openai.answered("CCONT-A")
    assert _turns(requests) == [0, 1, 1, 2], _turns(requests)
    continued = _shown(requests[2])
    assert "call_t0_0" in continued and "CONTINUE:" in continued
    # the continued run counts only its own responses, not the thread's earlier ones
    assert again["turns"] == 2, again
    assert time.time() >= minute_end  # the second dispatch waited for the reset
    assert _agent(data, 0, "b")["status"] == "done"  # the other agent went on
    assert not (repo / ".seawall" / "issues").exists()
    assert show(repo, "main", "a1.py") == "A1 = 1\n" and show(repo, "main", "a2.py") == "A2 = 2\n"
    assert show(repo, "main", "b.py") == "B = 1\n"
