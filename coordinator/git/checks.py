"""Running the session's checks on an integration commit, and bisecting a failure.

Checks run in a temporary worktree at the commit (under ``.seawall/checks/``), so the
user's working tree is never touched. When the fully merged wave fails, the merge
sequence is bisected (about log2 N check runs) to the first merge that breaks the checks;
:func:`integrate_wave` drops that agent, merges the rest again and repeats.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from coordinator.errors import GitError
from coordinator.git.merge import AgentChange, AgentMerge, MergeResult, merge_wave
from coordinator.git.repo import SEAWALL_DIR, ensure_excluded, open_repository, workdir
from coordinator.git.worktree_admin import add_worktree, remove_worktrees

__all__ = [
    "BisectResult",
    "CheckResult",
    "CheckRun",
    "WaveIntegration",
    "bisect_merges",
    "integrate_wave",
    "run_checks",
]

_OUTPUT_TAIL = 4000


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    command: str
    returncode: int | None  # None: the command timed out
    output: str  # the tail of stdout and stderr
    seconds: float

    @property
    def passed(self) -> bool:
        return self.returncode == 0


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRun:
    """The checks of one commit. Stops at the first failing command."""

    commit: str
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    @property
    def failure(self) -> CheckResult | None:
        return next((result for result in self.results if not result.passed), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class BisectResult:
    """The first merge whose commit fails the checks, or ``None`` if the base fails too."""

    culprit: str | None
    runs: tuple[CheckRun, ...]

    @property
    def preexisting(self) -> bool:
        return self.culprit is None


@dataclass(frozen=True, slots=True, kw_only=True)
class WaveIntegration:
    """The wave's final merge, the check run on it, and the agents dropped for breaking it."""

    merge: MergeResult
    checks: CheckRun | None
    dropped: Mapping[str, CheckRun]
    check_runs: int

    @property
    def passed(self) -> bool:
        return self.checks is None or self.checks.passed


def run_checks(
    repo_path: str | os.PathLike[str],
    commit: str,
    commands: Sequence[str],
    *,
    timeout: float | None = None,
) -> CheckRun:
    """Run shell ``commands`` in order in a temporary worktree at ``commit``."""
    repo = open_repository(repo_path)
    root = workdir(repo)
    ensure_excluded(repo)
    parent = root / SEAWALL_DIR / "checks"
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"check-{os.getpid()}-", dir=parent))
    folder.rmdir()
    added = add_worktree(root, folder, ["--detach", str(folder), commit])
    if not added.ok:
        remove_worktrees(root, [folder])
        raise GitError(f"cannot check out {commit[:12]} for the checks: {added.stderr.strip()}")
    try:
        results: list[CheckResult] = []
        for command in commands:
            result = _run_one(command, folder, commit, timeout)
            results.append(result)
            if not result.passed:
                break
        return CheckRun(commit=commit, results=tuple(results))
    finally:
        remove_worktrees(root, [folder])


def _run_one(command: str, cwd: Path, commit: str, timeout: float | None) -> CheckResult:
    """Run one shell command in its own process group; a timeout kills the whole group.

    ``SEAWALL_CHECK_DIR`` and ``SEAWALL_CHECK_COMMIT`` tell the command where it runs, for
    projects whose tools would otherwise find an installed copy of the main tree.
    """
    start = time.monotonic()
    env = dict(os.environ, SEAWALL_CHECK_DIR=str(cwd), SEAWALL_CHECK_COMMIT=commit)
    with subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    ) as process:
        try:
            output, _ = process.communicate(timeout=timeout)
            returncode: int | None = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            output += f"\ntimed out after {timeout} s"
            returncode = None
    return CheckResult(
        command=command,
        returncode=returncode,
        output=output[-_OUTPUT_TAIL:],
        seconds=time.monotonic() - start,
    )


def bisect_merges(
    repo_path: str | os.PathLike[str],
    result: MergeResult,
    commands: Sequence[str],
    *,
    timeout: float | None = None,
) -> BisectResult:
    """Find the first merge of ``result`` whose commit fails ``commands``.

    Assumes the final integration commit fails. Runs about log2 N checks; when the
    first merge is blamed, the base is checked too, and a failing base means the
    failure was there before the wave (``culprit`` is ``None``).
    """
    sequence: tuple[AgentMerge, ...] = result.sequence
    runs: list[CheckRun] = []

    def fails(commit: str) -> bool:
        run = run_checks(repo_path, commit, commands, timeout=timeout)
        runs.append(run)
        return not run.passed

    low, high = 0, len(sequence) - 1
    while low < high:
        middle = (low + high) // 2
        if fails(_commit_of(sequence[middle])):
            high = middle
        else:
            low = middle + 1
    if not sequence or (low == 0 and fails(result.base)):
        return BisectResult(culprit=None, runs=tuple(runs))
    return BisectResult(culprit=sequence[low].task_id, runs=tuple(runs))


def _commit_of(agent: AgentMerge) -> str:
    assert agent.commit is not None
    return agent.commit


def integrate_wave(
    repo_path: str | os.PathLike[str],
    *,
    base: str,
    changes: Sequence[AgentChange],
    session_id: str,
    wave: int,
    commands: Sequence[str],
    drop: Mapping[str, str] | None = None,
    timeout: float | None = None,
    on_merged: Callable[[AgentMerge], None] | None = None,
) -> WaveIntegration:
    """Merge the wave, run the checks, and drop merges that break them until they pass.

    Stops when the checks pass, when the failure is already at the base (nothing to
    drop), or when every agent is dropped. At most ``len(changes)`` rounds.
    """
    dropped_reasons = dict(drop or {})
    dropped: dict[str, CheckRun] = {}
    runs = 0
    for _round in range(len(changes) + 1):
        merged = merge_wave(
            repo_path, base=base, changes=changes, session_id=session_id, wave=wave,
            drop=dropped_reasons, on_merged=on_merged,
        )  # fmt: skip
        if not commands:
            return WaveIntegration(merge=merged, checks=None, dropped=dropped, check_runs=runs)
        checks = run_checks(repo_path, merged.integration, commands, timeout=timeout)
        runs += 1
        if checks.passed or not merged.sequence:
            return WaveIntegration(merge=merged, checks=checks, dropped=dropped, check_runs=runs)
        found = bisect_merges(repo_path, merged, commands, timeout=timeout)
        runs += len(found.runs)
        if found.culprit is None:
            return WaveIntegration(merge=merged, checks=checks, dropped=dropped, check_runs=runs)
        culprit_run = next(
            (run for run in found.runs if run.commit == merged.agent(found.culprit).commit),
            checks,
        )
        failing = culprit_run.failure
        dropped[found.culprit] = culprit_run
        dropped_reasons[found.culprit] = (
            f"its merge breaks the check `{failing.command}`" if failing else "breaks the checks"
        )
    raise AssertionError("unreachable: every round drops one agent")  # pragma: no cover
