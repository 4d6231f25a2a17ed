"""What seawall's hooks add per tool call in a real Claude Code run.

The real ``claude`` (installed by the test setup, see ``tests.fakes.agent_clis``) runs a
scripted model that makes ``CALLS`` Bash calls, three times per repeat:

- with the ``claude-code`` runner's defaults: seawall's settings file (PreToolUse,
  PostToolUse and Stop hooks) and ``--permission-mode dontAsk``;
- the same, with the hooks answered by a hook server as in a session (each hook call is
  the tiny client);
- the baseline, measured in the same run: the same CLI and script with no hooks, the
  Bash tool allowed by Claude Code itself (``--allowedTools Bash``).

The figure is the added wall clock per tool call (best of ``REPEATS`` runs each, both
divided by ``CALLS``); the ratio is the whole run with hooks against the run without.
Outside a seawall session the hooks still run their full checks (command gate, no
scope), which is the cheaper case; inside one they also read the scope manifest.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

import anyio

from seawall.adapters.runners.claude_code import ClaudeCodeRunner
from seawall.hooks.server import serve_hooks
from seawall.runner import AgentRequest, AgentResult
from tests.bench.harness import BenchResult, best_of
from tests.fakes.agent_clis import install_agent_clis
from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.model_script import Call, ModelTurn, Script

CALLS = 6
REPEATS = 3


def _run_once(
    runner: ClaudeCodeRunner, workspace: Path, marker: str, *, served: bool = False
) -> None:
    request = AgentRequest(
        task_id="bench", prompt=f"Task {marker}.", workspace=workspace, time_limit=300.0
    )

    async def run() -> AgentResult:
        if not served:
            return await runner.run(request, lambda event: None)
        async with serve_hooks() as socket:  # as a session's dispatch does
            return await runner.run(replace(request, hook_socket=socket), lambda event: None)

    result = anyio.run(run)
    if result.is_error or result.tool_calls != CALLS:
        raise RuntimeError(f"the benchmark run did not finish cleanly: {result}")


def run() -> list[BenchResult]:
    clis = install_agent_clis()
    turns = [
        ModelTurn(calls=[Call(name="Bash", input={"command": f"echo {n}"})]) for n in range(CALLS)
    ]
    with tempfile.TemporaryDirectory() as scratch, AnthropicServer() as server:
        root = Path(scratch)
        (root / "home").mkdir()
        workspace = root / "ws"
        workspace.mkdir()
        saved = dict(os.environ)
        os.environ.update(
            {
                "PATH": f"{clis.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                "HOME": str(root / "home"),
                "ANTHROPIC_BASE_URL": server.origin,
                "ANTHROPIC_API_KEY": "sk-ant-bench",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
        )
        try:
            server.add(Script(marker="BENCH-HOOKS", turns=[*turns, ModelTurn(text="STATUS: done")]))
            hooked = ClaudeCodeRunner()
            bare = ClaudeCodeRunner(
                permissions="none",
                extra_args=("--permission-mode", "dontAsk", "--allowedTools", "Bash"),
            )
            with_hooks = best_of(REPEATS, lambda: _run_once(hooked, workspace, "BENCH-HOOKS"))
            with_server = best_of(
                REPEATS, lambda: _run_once(hooked, workspace, "BENCH-HOOKS", served=True)
            )
            without = best_of(REPEATS, lambda: _run_once(bare, workspace, "BENCH-HOOKS"))
        finally:
            os.environ.clear()
            os.environ.update(saved)
    per_call = max(0.0, with_hooks - without) / CALLS
    per_served_call = max(0.0, with_server - without) / CALLS
    return [
        BenchResult(
            name="claude run with seawall's hooks answered by the session's hook server",
            figure=with_server,
            baseline=without,
            unit="s",
            baseline_name="the same run without hooks",
            note=f"{CALLS} tool calls; {per_served_call * 1000:.0f} ms added per tool call",
        ),
        BenchResult(
            name="claude run with seawall's hooks, each deciding in its own process",
            figure=with_hooks,
            baseline=without,
            unit="s",
            baseline_name="the same run without hooks",
            note=f"{CALLS} tool calls; {per_call * 1000:.0f} ms added per tool call",
        ),
        BenchResult(
            name="hook time added per tool call",
            figure=per_call,
            baseline=without / CALLS,
            unit="s",
            baseline_name="a whole tool call's share of the run without hooks",
        ),
    ]
