"""The ray runner's per-agent overhead, against the local command runner in the same run.

A wave of no-op command agents (read the prompt, print ``STATUS: done``) runs in real
worktrees of a small repository, once with ``CommandRunner`` and once with ``RayRunner``
wrapping the same command on a local Ray (2 CPUs, half a CPU per agent so the whole
wave runs at once), each agent under its worktree's Landlock sandbox where the kernel
has it (the Ray wave is also run without, for what the sandbox adds on a worker).
Worktree creation is outside the timing; the wave's wall clock
divided by its size is the per-agent figure. The first Ray wave pays for worker
start-up, so each figure is the best of a few waves; ``ray.init`` is reported on its own.

Run: ``python -m tests.bench.run ray`` (needs the ``ray`` extra).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import anyio.to_thread

from seawall.adapters.runners.command import CommandRunner
from seawall.adapters.runners.ray import RayRunner
from seawall.git import prepare_workspaces
from seawall.model import Isolation, RunnerSpec
from seawall.runner import AgentRequest, AgentRunner
from seawall.sandbox.launch import available
from seawall.sandbox.policy import workspace_policy
from tests.bench.harness import BenchResult

AGENTS = 4
WAVES = 3
NOOP = (sys.executable, "-c", "import sys; sys.stdin.read(); print('STATUS: done')")


def _make_repo(root: Path) -> str:
    root.mkdir(parents=True)
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.email", "bench@example.com"),
        ("config", "user.name", "Bench"),
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
    for n in range(200):
        (root / f"mod{n:03d}.py").write_text(f"VALUE = {n}\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "base"], cwd=root, check=True)
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


async def _wave(
    repo: Path, base: str, runner: AgentRunner, session: str, size: int, *, sandboxed: bool
) -> float:
    """Seconds for one wave of ``size`` no-op agents (worktrees made beforehand), each
    under the Landlock sandbox of its worktree when ``sandboxed`` (as a session runs
    them where the kernel has Landlock)."""
    tasks = [f"t{n}" for n in range(size)]
    workspaces = await prepare_workspaces(
        repo,
        session_id=session,
        wave=1,
        base=base,
        task_ids=tasks,
        isolation=Isolation.WORKTREE,
        max_parallel=1,  # as the session does: concurrent `git worktree add` races
    )
    failures: list[str] = []

    async def one(path: str, task: str) -> None:
        policy = workspace_policy(Path(path)) if sandboxed else None
        request = AgentRequest(
            task_id=task, prompt="nothing", workspace=Path(path), session=session, sandbox=policy
        )
        result = await runner.run(request, lambda event: None)
        if result.is_error or "STATUS: done" not in result.final_text:
            failures.append(f"{task}: {result}")

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for workspace in workspaces:
            group.start_soon(one, workspace.path, workspace.task_id)
    elapsed = time.perf_counter() - started
    if failures:
        raise RuntimeError("a no-op agent failed: " + "; ".join(failures))
    return elapsed


async def _measure(root: Path) -> dict[str, float]:
    """Best per-agent seconds of each runner, for a wave of ``AGENTS`` and for one agent."""
    repo = root / "repo"
    base = _make_repo(repo)
    runners: dict[str, AgentRunner] = {
        "local": CommandRunner(NOOP),
        "ray": RayRunner(RunnerSpec(name="noop", kind="command", argv=NOOP), num_cpus=0.5),
    }
    sandboxed = available()
    figures: dict[str, float] = {}
    for name, runner in runners.items():
        for size in (AGENTS, 1):
            waves = [
                await _wave(repo, base, runner, f"{name}{size}x{n}", size, sandboxed=sandboxed)
                for n in range(WAVES)
            ]
            figures[f"{name}/{size}"] = min(waves) / size
    if sandboxed:  # what the sandbox adds on the worker
        waves = [
            await _wave(repo, base, runners["ray"], f"bare{n}", AGENTS, sandboxed=False)
            for n in range(WAVES)
        ]
        figures[f"ray-bare/{AGENTS}"] = min(waves) / AGENTS
    return figures


BUNDLE_FILES = 5_000


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _big_repo(root: Path) -> Path:
    repo = root / "big"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "b@example.com")
    _git(repo, "config", "user.name", "Bench")
    for n in range(BUNDLE_FILES):
        folder = repo / f"pkg{n // 100:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{n:04d}.py").write_text(f"VALUE = {n}\n" + "# padding\n" * 20)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


def _merge_a_wave(repo: Path) -> None:
    for n in range(4):  # a wave merged four small changes
        (repo / "pkg00" / f"mod{n:04d}.py").write_text(f"VALUE = {n + 1}\n")
    _git(repo, "commit", "-qam", "wave 1")


async def _bundles(repo: Path) -> tuple[float, float, int, int]:
    """Seconds and bytes of the history bundle a wave ships: the first wave's (the whole
    history) and the next wave's (only the commits merged since), on a 5,000-file repo."""
    from seawall.adapters.runners.ray.local import LocalWorktree

    runner = RayRunner(RunnerSpec(name="noop", kind="command", argv=NOOP))
    the_ray = await runner.link.connect()
    figures: list[float] = []
    sizes: list[int] = []
    for wave in (1, 2):
        if wave == 2:
            await anyio.to_thread.run_sync(_merge_a_wave, repo)
        head = await anyio.to_thread.run_sync(_git, repo, "rev-parse", "HEAD")
        (workspace,) = await prepare_workspaces(
            repo, session_id="bundles", wave=wave, base=head, task_ids=["t"],
            isolation=Isolation.WORKTREE,
        )  # fmt: skip
        request = AgentRequest(task_id="t", prompt="-", workspace=Path(workspace.path))
        local = LocalWorktree.open(request)
        before = runner.link.bundled_bytes
        started = time.perf_counter()
        await runner.link.base_bundles(the_ray, local)
        figures.append(time.perf_counter() - started)
        sizes.append(runner.link.bundled_bytes - before)
    return figures[0], figures[1], sizes[0], sizes[1]


def run() -> list[BenchResult]:
    try:
        import ray
    except ImportError:
        print("  skipped: the ray extra is not installed (from a checkout: pip install '.[ray]')")
        return []

    started = time.perf_counter()
    owned = not ray.is_initialized()
    if owned:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    init_s = time.perf_counter() - started
    try:
        with tempfile.TemporaryDirectory(prefix="seawall-bench-ray-") as scratch:
            figures = anyio.run(_measure, Path(scratch))
            big = _big_repo(Path(scratch))
            first_s, next_s, first_b, next_b = anyio.run(_bundles, big)
    finally:
        if owned:
            ray.shutdown()
    results = [
        BenchResult(
            name=f"ray runner, per agent of a no-op wave of {size}",
            figure=figures[f"ray/{size}"],
            baseline=figures[f"local/{size}"],
            unit="s",
            baseline_name="local command runner",
            note=(
                f"overhead {figures[f'ray/{size}'] - figures[f'local/{size}']:.3f} s/agent; "
                f"best of {WAVES} waves; ray.init {init_s:.1f} s once per process"
            ),
        )
        for size in (AGENTS, 1)
    ]
    if f"ray-bare/{AGENTS}" in figures:
        results.append(
            BenchResult(
                name=f"ray runner, the sandbox on the worker, per agent of a wave of {AGENTS}",
                figure=figures[f"ray/{AGENTS}"],
                baseline=figures[f"ray-bare/{AGENTS}"],
                unit="s",
                baseline_name="the same wave unsandboxed",
                note="policy and manifest re-rooted on the worker, Landlock by the supervisor",
            )
        )
    results.append(
        BenchResult(
            name=f"history bundle of the next wave, {BUNDLE_FILES:,}-file repository",
            figure=next_s,
            baseline=first_s,
            unit="s",
            baseline_name="the first wave's whole-history bundle",
            note=f"{next_b:,} bytes against {first_b:,} bytes shipped",
        )
    )
    return results
