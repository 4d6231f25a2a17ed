"""Git layer benchmarks, each against the git CLI doing the same work in the same run.

(a) 32 agents, each changing a few files of a 5,000-file repository: create their
    worktrees, merge them all and clean up, against a shell script doing the same with
    ``git worktree add``, ``git merge`` and ``git worktree remove``. Target ratio <= 1.0.
(b) Reading the history of one agent with 1,000 checkpoints, against
    ``git log --name-only`` of the same commits. Target ratio <= 2.
(c) One whole-tree checkpoint of a 5,000-file worktree, against building the same tree
    with the CLI and a temporary index (``git add -A`` + ``git write-tree``).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import anyio

from coordinator.git import (
    AgentChange,
    Checkpointer,
    CheckpointMode,
    advance_target,
    agent_branch,
    agent_history,
    checkpoint_ref,
    merge_wave,
    prepare_workspaces,
    prune_worktrees,
)
from coordinator.model import Isolation
from tests.bench.harness import BenchResult, best_of

FILES = 5000
AGENTS = 32
CHECKPOINTS = 1000


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=env
    )
    return done.stdout


def _make_repo(root: Path, files: int) -> str:
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "bench@example.com")
    _git(root, "config", "user.name", "Bench")
    for n in range(files):
        path = root / f"pkg{n // 100:02d}" / f"mod{n % 100:03d}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# module {n}\nVALUE = {n}\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    return _git(root, "rev-parse", "HEAD").strip()


def _agent_edit(worktree: Path, agent: int) -> None:
    """The agent's work (not timed): three files of its own, committed on its branch."""
    for k in range(3):
        n = agent * 100 + k * 7
        path = worktree / f"pkg{n // 100:02d}" / f"mod{n % 100:03d}.py"
        path.write_text(path.read_text() + f"CHANGED_BY = {agent}\n")
    _git(worktree, "commit", "-q", "-am", f"agent {agent}")


def _seawall_wave(root: Path, base: str, wave: int) -> dict[str, float]:
    tasks = [f"t{n}" for n in range(AGENTS)]
    phases: dict[str, float] = {}
    start = time.perf_counter()

    async def prepare() -> tuple[str, ...]:
        made = await prepare_workspaces(
            root, session_id="bench", wave=wave, base=base, task_ids=tasks,
            isolation=Isolation.WORKTREE,
        )  # fmt: skip
        return tuple(workspace.path for workspace in made)

    paths = anyio.run(prepare)
    phases["create"] = time.perf_counter() - start
    for n, path in enumerate(paths):
        _agent_edit(Path(path), n)
    os.sync()
    start = time.perf_counter()
    changes = [
        AgentChange(task_id=task, commit=agent_branch("bench", wave, task)) for task in tasks
    ]
    result = merge_wave(root, base=base, changes=changes, session_id="bench", wave=wave)
    advance_target(root, branch="main", expected_old=base, new=result.integration)
    phases["merge"] = time.perf_counter() - start
    start = time.perf_counter()
    report = prune_worktrees(root, paths=paths)
    phases["cleanup"] = time.perf_counter() - start
    assert len(report.removed) == AGENTS and not report.kept
    return phases


def _sh(root: Path, lines: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(["sh", "-ec", "\n".join(lines)], cwd=root, check=True, capture_output=True)
    return time.perf_counter() - start


def _cli_wave(root: Path, base: str, wave: int) -> dict[str, float]:
    del wave  # the CLI script reuses its branch names; they are deleted at the end
    phases = {
        "create": _sh(
            root, [f"git worktree add -q -b cli{n} .cli/w{n} {base}" for n in range(AGENTS)]
        )
    }
    for n in range(AGENTS):
        _agent_edit(root / ".cli" / f"w{n}", n)
    os.sync()
    phases["merge"] = _sh(root, [f"git merge -q --no-edit cli{n}" for n in range(AGENTS)])
    phases["cleanup"] = _sh(
        root,
        [f"git worktree remove .cli/w{n} && git branch -q -d cli{n}" for n in range(AGENTS)],
    )
    return phases


def _phases(phases: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items())


def bench_wave(tmp: Path, rounds: int = 2) -> BenchResult:
    """Alternate which side goes first (the file system is shared and noisy) and keep
    each phase's best time over the rounds."""
    roots = {"seawall": tmp / "ours", "git CLI": tmp / "cli"}
    for root in roots.values():
        _make_repo(root, FILES)
    (roots["git CLI"] / ".git" / "info" / "exclude").write_text("/.cli/\n")
    sides = {"seawall": _seawall_wave, "git CLI": _cli_wave}
    best: dict[str, dict[str, float]] = {"seawall": {}, "git CLI": {}}
    for round_ in range(rounds):
        order = list(sides) if round_ % 2 else list(reversed(sides))
        for side in order:
            root = roots[side]
            os.sync()  # the other side's writes must not be flushed during this one
            phases = sides[side](root, _git(root, "rev-parse", "HEAD").strip(), round_ + 1)
            for phase, seconds in phases.items():
                best[side][phase] = min(seconds, best[side].get(phase, seconds))
    return BenchResult(
        name=f"wave of {AGENTS} agents on {FILES} files (worktrees, merge, cleanup)",
        figure=sum(best["seawall"].values()),
        baseline=sum(best["git CLI"].values()),
        unit="s",
        baseline_name="git CLI script (worktree add, merge, worktree remove)",
        target="<= 1.0",
        note=(
            f"best phases of {rounds} alternating rounds; seawall: {_phases(best['seawall'])}; "
            f"git CLI: {_phases(best['git CLI'])}"
        ),
    )


def bench_history(tmp: Path) -> BenchResult:
    root = tmp / "history"
    base = _make_repo(root, 200)
    agent = Checkpointer(
        root, session_id="bench", task_id="t1", base=base, mode=CheckpointMode.PATHS
    )
    for n in range(CHECKPOINTS):
        path = root / f"pkg00/mod{n % 40:03d}.py"
        path.write_text(f"# edit {n}\n")
        agent.checkpoint([str(path)])
    ref = checkpoint_ref("bench", "t1")

    def ours() -> None:
        history = agent_history(root, session_id="bench", task_id="t1", base=base)
        assert len(history.checkpoints) == CHECKPOINTS

    def cli() -> None:
        _git(root, "log", "--name-only", "--format=%H", ref, f"^{base}")

    return BenchResult(
        name=f"history of one agent with {CHECKPOINTS} checkpoints",
        figure=best_of(3, ours),
        baseline=best_of(3, cli),
        unit="s",
        baseline_name="git log --name-only",
        target="<= 2",
        note="seawall also reads blob ids and follows renames",
    )


def bench_checkpoint(tmp: Path) -> BenchResult:
    root = tmp / "checkpoint"
    base = _make_repo(root, FILES)
    agent = Checkpointer(
        root, session_id="bench", task_id="t1", base=base, mode=CheckpointMode.TREE
    )
    index_file = Path(tempfile.mkdtemp(dir=tmp)) / "index"
    env = dict(os.environ, GIT_INDEX_FILE=str(index_file))
    _git(root, "read-tree", "HEAD", env=env)
    counter = iter(range(10**6))

    def edit() -> None:
        (root / "pkg07" / "mod042.py").write_text(f"# edit {next(counter)}\n")

    def ours() -> None:
        edit()
        assert agent.checkpoint() is not None

    def cli() -> None:
        edit()
        _git(root, "add", "-A", env=env)
        _git(root, "write-tree", env=env)

    return BenchResult(
        name=f"whole-tree checkpoint of a {FILES}-file worktree",
        figure=best_of(5, ours),
        baseline=best_of(5, cli),
        unit="s",
        baseline_name="GIT_INDEX_FILE=tmp git add -A && git write-tree",
    )


def bench_checkpoint_paths(tmp: Path) -> BenchResult:
    root = tmp / "checkpoint-paths"
    base = _make_repo(root, FILES)
    agent = Checkpointer(
        root, session_id="bench", task_id="t1", base=base, mode=CheckpointMode.PATHS
    )
    index_file = Path(tempfile.mkdtemp(dir=tmp)) / "index"
    env = dict(os.environ, GIT_INDEX_FILE=str(index_file))
    _git(root, "read-tree", base, env=env)
    target = root / "pkg07" / "mod042.py"
    counter = iter(range(10**6))

    def ours() -> None:
        target.write_text(f"# edit {next(counter)}\n")
        assert agent.checkpoint(["pkg07/mod042.py"]) is not None

    parent = [base]

    def cli() -> None:
        target.write_text(f"# edit {next(counter)}\n")
        _git(root, "update-index", "--add", "pkg07/mod042.py", env=env)
        tree = _git(root, "write-tree", env=env).strip()
        commit = _git(root, "commit-tree", tree, "-p", parent[0], "-m", "checkpoint").strip()
        _git(root, "update-ref", "refs/seawall/cli", commit)
        parent[0] = commit

    return BenchResult(
        name="in-place checkpoint of one touched file",
        figure=best_of(20, ours),
        baseline=best_of(20, cli),
        unit="s",
        baseline_name="temporary index + update-index, write-tree, commit-tree, update-ref",
    )


def run() -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="seawall-bench-git-") as name:
        tmp = Path(name)
        return [
            bench_wave(tmp),
            bench_history(tmp),
            bench_checkpoint(tmp),
            bench_checkpoint_paths(tmp),
        ]
