"""Time per Claude Code hook call, process start included, against ``python -c pass``.

The hooks run once per tool call of every agent, so their cost is mostly interpreter
start-up plus imports. Each figure is the median of several runs in a temporary
repository with a live scope manifest; the baseline is the same interpreter doing
nothing, measured in the same run, each baseline run right before a hook run (the
shared machine's load changes from one second to the next). The calls a session's
agents make go to the session's hook server (``SEAWALL_HOOK_SOCKET``); a call with no
session server (a lead's hooks, hooks a user installed) goes to the resident decision
server its first call starts. Those figures have the goal; a call decided in its own
process (``SEAWALL_HOOK_RESIDENT=off``) is measured for comparison.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from seawall.model import Enforcement, Isolation, Task, Wave
from seawall.scope.manifest import build_manifest, write_manifest
from tests.bench.harness import BenchResult

RUNS = 15
SEAWALL = str(Path(sys.executable).with_name("seawall"))


def _median(func: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _paired(func: Callable[[], object], baseline: Callable[[], object]) -> tuple[float, float]:
    """Medians of ``func`` and of ``baseline``, each baseline run right before a run."""
    pairs = [(_median(baseline, 1), _median(func, 1)) for _ in range(RUNS)]
    return statistics.median(p[1] for p in pairs), statistics.median(p[0] for p in pairs)


def _hook(event: str, payload: Mapping[str, object], env: dict[str, str]) -> Callable[[], object]:
    data = json.dumps(payload)

    def call() -> object:
        done = subprocess.run(
            [SEAWALL, "hook", event], input=data, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done

    return call


def run() -> list[BenchResult]:
    import compileall

    import seawall

    # as installed: every module compiled once (an editable checkout may lack the files)
    compileall.compile_dir(Path(seawall.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        (repo / "src/app").mkdir(parents=True)
        wave = Wave(
            number=1,
            tasks=(Task(id="t1", prompt="a", scope=("src/app/",)),),
            isolation=Isolation.NONE,
            enforcement=Enforcement.STRICT,
            max_turns=15,
        )
        write_manifest(build_manifest(session="bench", wave=wave, repo=repo))
        base_env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp}
        agent_env = {**base_env, "SEAWALL_SESSION": "bench", "SEAWALL_TASK_ID": "t1"}
        agent_env["CLAUDE_PROJECT_DIR"] = str(repo)
        bash = {
            "session_id": "b", "transcript_path": f"{tmp}/t.jsonl", "cwd": tmp,
            "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
            "tool_input": {"command": "cd src/app && pytest -q | tee out.log && git status"},
        }  # fmt: skip
        edit = {**bash, "tool_name": "Edit", "tool_input": {"file_path": f"{tmp}/src/app/x.py"}}
        post = {**bash, "hook_event_name": "PostToolUse", "tool_response": {"stdout": "ok"}}

        def bare() -> object:
            return subprocess.run([sys.executable, "-c", "pass"], check=True)

        served = _served_figures(repo, agent_env, bash, edit, post, bare)
        baseline = _median(bare)
        results = [_in_process(repo, agent_env, bash, baseline), version_figure(bare), *served]
        results += _resident_figures(repo, base_env, agent_env, bash, edit, post, bare)
        return results


def _resident_figures(
    repo: Path,
    base_env: dict[str, str],
    agent_env: dict[str, str],
    bash: Mapping[str, object],
    edit: Mapping[str, object],
    post: Mapping[str, object],
    bare: Callable[[], object],
) -> list[BenchResult]:
    """Calls with no session server (a lead's hooks, hooks a user installed): answered by
    the resident decision server the first call starts, and, for comparison, decided in
    the hook's own process (``SEAWALL_HOOK_RESIDENT=off``)."""
    home = tempfile.mkdtemp(prefix="sw-bench-")
    try:
        resident = {"SEAWALL_HOOK_RESIDENT": home}
        agent, gate = {**agent_env, **resident}, {**base_env, **resident}
        alone = {**agent_env, "SEAWALL_HOOK_RESIDENT": "off"}
        figures = {
            "pre-tool-use Bash, no session server (resident)": _hook("pre-tool-use", bash, agent),
            "pre-tool-use Edit, no session server (resident)": _hook("pre-tool-use", edit, agent),
            "pre-tool-use Bash, no session (gate only, resident)": _hook(
                "pre-tool-use", bash, gate
            ),
            "post-tool-use Bash, no session server (resident)": _hook("post-tool-use", post, agent),
        }
        note = f"median of {RUNS}, the client's process start included"
        results = [
            _against_bare(name, func, bare, note=note, target="<= 3x")
            for name, func in figures.items()
        ]
        results.append(
            _against_bare(
                "pre-tool-use Bash decided in the hook's own process (resident off)",
                _hook("pre-tool-use", bash, alone),
                bare,
                note=f"median of {RUNS}; each call imports the decision code",
            )
        )
        return results
    finally:
        _stop_resident(Path(home))


def _stop_resident(home: Path) -> None:
    """End the resident server the figures started (its pid is in its lock file)."""
    import signal

    for lock in home.glob("*.lock"):
        text = lock.read_text(encoding="ascii").strip()
        if text.isdigit():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(text), signal.SIGTERM)
    shutil.rmtree(home, ignore_errors=True)


def _against_bare(
    name: str,
    func: Callable[[], object],
    bare: Callable[[], object],
    *,
    note: str,
    target: str = "",
) -> BenchResult:
    """One call's figure, warmed once (file cache, the server's imports), paired with
    ``python -c pass`` run alternately in the same loop."""
    func()
    figure, base = _paired(func, bare)
    return BenchResult(
        name=name,
        figure=figure * 1000,
        baseline=base * 1000,
        unit="ms/call",
        baseline_name="python -c pass",
        target=target,
        note=note,
    )


def version_figure(bare: Callable[[], object]) -> BenchResult:
    """``seawall --version``: a constant, printed before any command module loads."""

    def version() -> object:
        return subprocess.run([SEAWALL, "--version"], check=True, capture_output=True)

    return _against_bare(
        "seawall --version", version, bare, note=f"median of {RUNS}", target="<= 2x"
    )


def _served_figures(
    repo: Path,
    env: dict[str, str],
    bash: Mapping[str, object],
    edit: Mapping[str, object],
    post: Mapping[str, object],
    bare: Callable[[], object],
) -> list[BenchResult]:
    """The calls of a session's agents: answered by the session's hook server."""
    from anyio.from_thread import start_blocking_portal

    from seawall.hooks.server import serve_hooks

    results = []
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(serve_hooks()) as socket,
    ):
        served = {**env, "SEAWALL_HOOK_SOCKET": str(socket)}
        figures = {
            "pre-tool-use Bash, agent in session, hook server": _hook("pre-tool-use", bash, served),
            "pre-tool-use Edit, agent in session, hook server": _hook("pre-tool-use", edit, served),
            "post-tool-use Bash, agent in session, hook server": _hook(
                "post-tool-use", post, served
            ),
        }
        note = f"median of {RUNS}, the client's process start included"
        results += [
            _against_bare(name, func, bare, note=note, target="<= 3x")
            for name, func in figures.items()
        ]
    return results


def _in_process(
    repo: Path, env: dict[str, str], payload: Mapping[str, object], baseline: float
) -> BenchResult:
    """The pre-tool-use decision alone, without process start and imports."""
    from seawall.hooks.context import resolve_context
    from seawall.hooks.pre_tool_use import check_call

    tool_input = payload["tool_input"]
    assert isinstance(tool_input, Mapping)

    def decide() -> object:
        ctx = resolve_context(payload, env)
        return check_call(ctx, "Bash", tool_input)

    figure = _median(lambda: [decide() for _ in range(100)], runs=5) / 100
    return BenchResult(
        name="pre-tool-use Bash decision in process (no start-up, no breaker)",
        figure=figure * 1000,
        baseline=baseline * 1000,
        unit="ms/call",
        baseline_name="python -c pass",
        note="the hook's own work; the rest of a call is interpreter start-up and imports",
    )
