"""A provider's limit met by the real Claude Code and Codex, driven by scripted model
servers: the agent is paused, the session halts with exit 6 naming the reset, nothing
is carried over; Codex's cached input counts toward the token budget. (Waiting for a
reset and continuing the paused agent's conversation: test_real_continuation.py.)"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.anthropic_server import usage_limit as claude_usage_limit
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.fakes.openai_server import OpenAIResponsesServer
from tests.fakes.openai_server import usage_limit as codex_usage_limit
from tests.integration.realcli import agent_clis, anthropic, claude_env, codex_env, openai
from tests.integration.sessionkit import agents_by_wave, make_repo, seawall, show, status

__all__ = ["agent_clis", "anthropic", "claude_env", "codex_env", "openai"]


def _plan(path: Path, kind: str, tasks: list[tuple[str, str, str]], extra: str = "") -> Path:
    """Tasks of ``(id, marker, file)``: each writes its own file."""
    lines = [
        "[session]",
        f'name = "{kind}-limit"',
        'agent = "agent"',
        extra,
        "[runners.agent]",
        f'kind = "{kind}"',
    ]
    for task_id, marker, file in tasks:
        lines += [
            "[[task]]",
            f'id = "{task_id}"',
            f'prompt = "Work item {marker}: write {file}."',
            f"scope = {json.dumps([file])}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _claude_writes(marker: str, file: str, *, first: tuple[ModelTurn, ...] = ()) -> Script:
    write = Call(name="Write", input={"file_path": f"{{cwd}}/{file}", "content": "X = 1\n"})
    return Script(
        marker=marker,
        first=first,
        turns=[ModelTurn(calls=[write]), ModelTurn(text=f"Wrote {file}.\nSTATUS: done")],
    )


def _codex_adds(marker: str, file: str, *, cached: int = 0) -> Script:
    patch = f"*** Begin Patch\n*** Add File: {file}\n+X = 1\n*** End Patch\n"
    return Script(
        marker=marker,
        turns=[
            ModelTurn(calls=[Call(name="apply_patch", input=patch)], cached_tokens=cached),
            ModelTurn(text=f"Added {file}.\nSTATUS: done", cached_tokens=cached),
        ],
    )


@pytest.mark.slow
def test_codex_usage_limit_hours_ahead_halts_with_exit_6_naming_the_reset(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    resets_at = int(time.time() + 3 * 3600)
    openai.add(Script(marker="CLIM-A", turns=[codex_usage_limit(resets_at)]))
    openai.add(_codex_adds("CLIM-B", "b.py"))
    plan = _plan(
        tmp_path / "plan.toml", "codex", [("a", "CLIM-A", "a.py"), ("b", "CLIM-B", "b.py")]
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=240)
    said = done.stdout + done.stderr
    assert done.returncode == 6, said
    data = status(repo)
    halt = data["halt"]
    assert halt["reason"] == "rate-limited" and halt["provider"] == "openai", halt
    # Codex prints the reset to the minute: the halt names that minute's end
    minute_end = (resets_at // 60 + 1) * 60
    assert halt["resets_at"] == pytest.approx(minute_end, abs=60), halt
    shown = datetime.fromtimestamp(halt["resets_at"], UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert shown in said and "openai" in said
    assert agents_by_wave(data)[0]["a"]["status"] == "paused"
    assert not (repo / ".seawall" / "issues").exists()
    assert show(repo, "main", "b.py") == "X = 1\n"  # the other agent's work landed


@pytest.mark.slow
def test_claude_usage_limit_hours_ahead_halts_with_exit_6_naming_the_reset(
    anthropic: AnthropicServer,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-scripted")
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    resets_at = int(time.time() + 5 * 3600)
    anthropic.add(_claude_writes("HLIM-A", "a.py", first=(claude_usage_limit(resets_at),)))
    anthropic.add(_claude_writes("HLIM-B", "b.py"))
    plan = _plan(
        tmp_path / "plan.toml", "claude-code", [("a", "HLIM-A", "a.py"), ("b", "HLIM-B", "b.py")]
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=240)
    said = done.stdout + done.stderr
    assert done.returncode == 6, said
    halt = status(repo)["halt"]
    assert halt["provider"] == "anthropic" and halt["resets_at"] == resets_at, halt
    assert datetime.fromtimestamp(resets_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") in said
    assert len(anthropic.answered("HLIM-A")) == 1  # refused once, not retried
    assert not (repo / ".seawall" / "issues").exists()
    assert show(repo, "main", "b.py") == "X = 1\n"


@pytest.mark.slow
def test_codex_cached_input_is_shown_and_counts_toward_the_token_budget(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    openai.add(_codex_adds("CACHE-1", "one.py", cached=1100))
    plan = _plan(
        tmp_path / "plan.toml",
        "codex",
        [("one", "CACHE-1", "one.py"), ("two", "CACHE-NEVER", "two.py")],
        extra="[session.budgets]\ntokens = 2500",
    )
    plan.write_text(plan.read_text() + 'depends_on = ["one"]\n')
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=240)
    data = status(repo)
    agent = agents_by_wave(data)[0]["one"]
    assert agent["status"] == "done", (agent, done.stdout, done.stderr)
    # two responses of 1,200 input tokens (1,100 of them read from the cache), 80 output
    assert agent["cache_read_tokens"] == 2200 and agent["input_tokens"] == 200, agent
    assert agent["tokens"] == 2 * (1200 + 80)
    # uncached input and output alone (360) are far below the budget; all of them are not
    assert data["breaker"]["tripped"] is True, data["breaker"]
    assert "2560 of a 2500-token budget" in data["breaker"]["detail"]
    assert not openai.answered("CACHE-NEVER")
    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    assert "2,560 tokens (2,200 cached)" in state_md


@pytest.mark.slow
def test_claude_api_key_429_after_its_own_retries_is_a_pause_not_a_failure(
    anthropic: AnthropicServer,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With an API key, Claude Code retries a 429 itself and ends its run with the API's
    error only when its retries are spent (its default of ten backs off for minutes; the
    test lets it retry twice). seawall reads that result as the provider's rate limit: the
    agent is paused, not failed, nothing is carried over, and with ``on_limit = "halt"``
    the session halts with exit code 6 naming the provider."""
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "2")
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    limit = ModelTurn(
        status=429,
        error={"type": "rate_limit_error", "message": "Number of requests exceeds your limit"},
        headers={"retry-after": "1"},
    )
    anthropic.add(_claude_writes("KEY-A", "a.py", first=(limit,) * 3))
    plan = _plan(
        tmp_path / "plan.toml", "claude-code", [("a", "KEY-A", "a.py")], 'on_limit = "halt"'
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=240)
    output = done.stdout + done.stderr
    assert done.returncode == 6, output
    data = status(repo)
    assert agents_by_wave(data)[0]["a"]["status"] == "paused", output
    assert data["halt"]["reason"] == "rate-limited" and data["halt"]["provider"], data["halt"]
    assert len(anthropic.answered("KEY-A")) == 3  # the request and Claude Code's two retries
    assert not (repo / ".seawall" / "issues").exists()
