"""Git layer benchmarks, each against the git CLI doing the same work in the same run.

(a) 32 agents, each changing a few files of one folder of a 5,000-file repository:
    create their worktrees (sparse: each holds its folder and the top-level files),
    merge them all and clean up, against a shell script doing the same with ``git
    worktree add``, ``git merge`` and ``git worktree remove``, once with full checkouts
    (target ratio <= 0.5) and once with ``git sparse-checkout`` (target <= 1.0).
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

from seawall.git import (
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
from seawall.git.sparse import sparse_dirs
from seawall.model import Isolation
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


def _folder(agent: int) -> str:
    """The one folder agent ``agent`` works in (see :func:`_agent_edit`)."""
    return f"pkg{agent:02d}"


class _Seawall:
    """The wave through seawall's API with sparse worktrees, one phase at a time."""

    name = "seawall"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tasks = [f"t{n}" for n in range(AGENTS)]
        self.paths: tuple[str, ...] = ()
        self.base = ""
        self.wave = 0

    def create(self) -> None:
        self.wave += 1
        self.base = _git(self.root, "rev-parse", "HEAD").strip()

        sparse = {task: sparse_dirs([f"{_folder(n)}/"]) for n, task in enumerate(self.tasks)}

        async def prepare() -> tuple[str, ...]:
            made = await prepare_workspaces(
                self.root, session_id="bench", wave=self.wave, base=self.base,
                task_ids=self.tasks, isolation=Isolation.WORKTREE, sparse=sparse,
            )  # fmt: skip
            return tuple(workspace.path for workspace in made)

        self.paths = anyio.run(prepare)

    def edit(self) -> None:
        for n, path in enumerate(self.paths):
            _agent_edit(Path(path), n)

    def merge(self) -> None:
        changes = [
            AgentChange(task_id=task, commit=agent_branch("bench", self.wave, task))
            for task in self.tasks
        ]
        result = merge_wave(
            self.root, base=self.base, changes=changes, session_id="bench", wave=self.wave
        )
        advance_target(self.root, branch="main", expected_old=self.base, new=result.integration)

    def cleanup(self) -> None:
        report = prune_worktrees(self.root, paths=self.paths)
        assert len(report.removed) == AGENTS and not report.kept


class _Cli:
    """The same wave as a shell script of git commands, one phase at a time, with full
    checkouts or (``sparse``) each worktree holding its agent's folder in cone mode."""

    def __init__(self, root: Path, *, sparse: bool) -> None:
        self.root = root
        self.sparse = sparse
        self.name = "git CLI, sparse" if sparse else "git CLI"
        (root / ".git" / "info" / "exclude").write_text("/.cli/\n")

    def _sh(self, lines: list[str]) -> None:
        script = "\n".join(lines)
        subprocess.run(["sh", "-ec", script], cwd=self.root, check=True, capture_output=True)

    def create(self) -> None:
        base = _git(self.root, "rev-parse", "HEAD").strip()
        if not self.sparse:
            self._sh([f"git worktree add -q -b cli{n} .cli/w{n} {base}" for n in range(AGENTS)])
            return
        self._sh(
            [
                f"git worktree add -q --no-checkout -b cli{n} .cli/w{n} {base}"
                f" && git -C .cli/w{n} sparse-checkout set --cone {_folder(n)}"
                f" && git -C .cli/w{n} checkout -q"
                for n in range(AGENTS)
            ]
        )

    def edit(self) -> None:
        for n in range(AGENTS):
            _agent_edit(self.root / ".cli" / f"w{n}", n)

    def merge(self) -> None:
        self._sh([f"git merge -q --no-edit cli{n}" for n in range(AGENTS)])

    def cleanup(self) -> None:
        self._sh(
            [f"git worktree remove .cli/w{n} && git branch -q -d cli{n}" for n in range(AGENTS)]
        )


def _phases(phases: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items())


def bench_wave(tmp: Path, rounds: int = 2) -> list[BenchResult]:
    """Interleave the three sides phase by phase, rotating which goes first (the file
    system is shared and noisy), and keep each phase's best time over the rounds."""
    for name in ("ours", "cli", "cli-sparse"):
        _make_repo(tmp / name, FILES)
    sides: list[_Seawall | _Cli] = [
        _Seawall(tmp / "ours"),
        _Cli(tmp / "cli", sparse=False),
        _Cli(tmp / "cli-sparse", sparse=True),
    ]
    best: dict[str, dict[str, float]] = {side.name: {} for side in sides}
    for round_ in range(rounds):
        shift = round_ % len(sides)
        order = sides[shift:] + sides[:shift]
        for phase in ("create", "edit", "merge", "cleanup"):
            for side in order:
                os.sync()  # the other side's writes must not be flushed during this one
                start = time.perf_counter()
                getattr(side, phase)()
                seconds = time.perf_counter() - start
                if phase != "edit":  # the agents' own work is not the coordinator's
                    times = best[side.name]
                    times[phase] = min(seconds, times.get(phase, seconds))
    ours = best["seawall"]
    results = []
    for other, how, target in (
        ("git CLI", "full checkouts", "<= 0.5"),
        ("git CLI, sparse", "sparse checkouts", "<= 1.0"),
    ):
        results.append(
            BenchResult(
                name=f"wave of {AGENTS} sparse agents on {FILES} files (worktrees, merge, cleanup)",
                figure=sum(ours.values()),
                baseline=sum(best[other].values()),
                unit="s",
                baseline_name=f"git CLI script with {how} (worktree add, merge, worktree remove)",
                target=target,
                note=(
                    f"best of {rounds} interleaved rounds; seawall: {_phases(ours)}; "
                    f"{other}: {_phases(best[other])}; load average {os.getloadavg()[0]:.1f}"
                ),
            )
        )
    return results


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
            *bench_wave(tmp),
            bench_history(tmp),
            bench_checkpoint(tmp),
            bench_checkpoint_paths(tmp),
        ]
