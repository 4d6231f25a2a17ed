"""Running the session's checks on an integration commit, and gating the merge on them.

Checks run in a temporary worktree at the commit (under ``.seawall/checks/``), so the
user's working tree is never touched. What a failing check does depends on the policy:

- ``block``: the merge sequence is bisected (about log2 N check runs) to the first merge
  that breaks the checks; :func:`integrate_wave` drops that agent, merges the rest again
  and repeats. When the base itself fails, nothing of the wave may merge.
- ``baseline``: only failures the base does not have count; they are bisected and dropped
  the same way, and the wave merges with the failures it inherited.
- ``warn``: the wave merges whatever the checks say.

A base on which a test runner finds no tests (pytest's exit code 5) has no baseline: it
does not fail, it has nothing to compare with.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from seawall.errors import GitError
from seawall.git.merge import AgentChange, AgentMerge, MergeResult, merge_wave
from seawall.git.repo import SEAWALL_DIR, ensure_excluded, open_repository, workdir
from seawall.git.worktree_admin import add_worktree, remove_worktrees
from seawall.model import ChecksPolicy, CheckVerdict
from seawall.runtime.processes import end_group

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
_KILL_GRACE = 2.0  # seconds a timed-out check gets after SIGTERM
_NO_TESTS = 5  # pytest: "no tests were collected"
_PYTEST_FAILURE = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    command: str
    returncode: int | None  # None: the command timed out
    output: str  # the tail of stdout and stderr
    seconds: float

    @property
    def passed(self) -> bool:
        return self.returncode == 0

    @property
    def no_tests(self) -> bool:
        """A test runner that found no tests to run (pytest's exit code 5)."""
        return self.returncode == _NO_TESTS and (
            "pytest" in self.command or "no tests ran" in self.output
        )

    def failing_tests(self) -> frozenset[str]:
        """The test ids pytest's summary names as failed or in error (empty if none)."""
        return frozenset(_PYTEST_FAILURE.findall(self.output))


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

    @property
    def no_baseline(self) -> bool:
        """Every failing command of this run found no tests: there is nothing to compare."""
        failing = [result for result in self.results if not result.passed]
        return bool(failing) and all(result.no_tests for result in failing)

    @property
    def fails(self) -> bool:
        """Failed for real: a run that only found no tests does not fail."""
        return not self.passed and not self.no_baseline

    def new_failures(self, baseline: CheckRun | None) -> tuple[CheckResult, ...]:
        """This run's failures that ``baseline`` does not have.

        A command that passed (or found no tests) at the baseline and fails here is new; a
        command failing in both is new only when pytest names a failing test here that it
        did not name at the baseline.
        """
        before = {} if baseline is None else {r.command: r for r in baseline.results}
        new: list[CheckResult] = []
        for result in self.results:
            if result.passed:
                continue
            old = before.get(result.command)
            if (
                old is None
                or old.passed
                or old.no_tests
                or result.failing_tests() - old.failing_tests()
            ):
                new.append(result)
        return tuple(new)


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
    """The wave's final merge, the check run on it, the agents dropped for breaking it,
    and the verdict: whether (and how) the merge may go ahead."""

    merge: MergeResult
    checks: CheckRun | None
    dropped: Mapping[str, CheckRun]
    check_runs: int
    policy: ChecksPolicy = ChecksPolicy.BLOCK
    verdict: CheckVerdict = CheckVerdict.NONE
    baseline: CheckRun | None = None  # the base's own run, when it was checked

    @property
    def passed(self) -> bool:
        return self.checks is None or self.checks.passed

    @property
    def mergeable(self) -> bool:
        """Whether the target branch may move to the merge."""
        return self.verdict is not CheckVerdict.BASE_FAILS


def run_checks(
    repo_path: str | os.PathLike[str],
    commit: str,
    commands: Sequence[str],
    *,
    timeout: float | None = None,
    keep_going: bool = False,
) -> CheckRun:
    """Run shell ``commands`` in order in a temporary worktree at ``commit``; the first
    failure ends the run unless ``keep_going``."""
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
            if not result.passed and not keep_going:
                break
        return CheckRun(commit=commit, results=tuple(results))
    finally:
        remove_worktrees(root, [folder])


def _run_one(command: str, cwd: Path, commit: str, timeout: float | None) -> CheckResult:
    """Run one shell command in its own process group; a timeout ends the whole group.

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
            end_group(process.pid, grace=_KILL_GRACE)
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
    baseline: CheckRun | None = None,
) -> BisectResult:
    """Find the first merge of ``result`` whose commit fails ``commands``.

    Assumes the final integration commit fails. Runs about log2 N checks. Without a
    ``baseline``, a commit fails when any check fails for real; when the first merge is
    blamed, the base is checked too, and a failing base means the failure was there
    before the wave (``culprit`` is ``None``). With a ``baseline`` (the base's own run), a
    commit fails only with failures the baseline does not have, so the base never does.
    """
    sequence: tuple[AgentMerge, ...] = result.sequence
    runs: list[CheckRun] = []

    def fails(commit: str) -> bool:
        run = run_checks(repo_path, commit, commands, timeout=timeout, keep_going=bool(baseline))
        runs.append(run)
        return bool(run.new_failures(baseline)) if baseline is not None else run.fails

    low, high = 0, len(sequence) - 1
    while low < high:
        middle = (low + high) // 2
        if fails(_commit_of(sequence[middle])):
            high = middle
        else:
            low = middle + 1
    if not sequence or (baseline is None and low == 0 and fails(result.base)):
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
    policy: ChecksPolicy = ChecksPolicy.BLOCK,
    onto: str | None = None,
) -> WaveIntegration:
    """Merge the wave, run the checks, and gate the merge on them by ``policy``.

    ``block`` and ``baseline`` drop merges that break the checks until they pass (or, for
    ``baseline``, until only the base's own failures are left); ``block`` stops with
    ``BASE_FAILS`` when the failure is already at the base. ``warn`` drops nobody. At most
    ``len(changes)`` rounds. ``onto``: see :func:`merge_wave`; the checks' base is then
    ``onto``.
    """
    gate = _Gate(repo_path, commands, timeout, policy, onto or base)
    dropped_reasons = dict(drop or {})
    dropped: dict[str, CheckRun] = {}
    for _round in range(len(changes) + 1):
        merged = merge_wave(
            repo_path, base=base, changes=changes, session_id=session_id, wave=wave,
            drop=dropped_reasons, on_merged=on_merged, onto=onto,
        )  # fmt: skip
        checks, verdict, found = gate.judge(merged)
        if verdict is not None:
            return WaveIntegration(
                merge=merged, checks=checks, dropped=dropped, check_runs=gate.runs,
                policy=policy, verdict=verdict, baseline=gate.baseline,
            )  # fmt: skip
        assert checks is not None and found is not None and found.culprit is not None
        culprit_commit = merged.agent(found.culprit).commit
        culprit_run = next((run for run in found.runs if run.commit == culprit_commit), checks)
        failing = culprit_run.failure
        dropped[found.culprit] = culprit_run
        dropped_reasons[found.culprit] = (
            f"its merge breaks the check `{failing.command}`" if failing else "breaks the checks"
        )
    raise AssertionError("unreachable: every round drops one agent")  # pragma: no cover


class _Gate:
    """The checks of one wave by one policy: judges each round's merge, counting runs."""

    def __init__(
        self,
        repo_path: str | os.PathLike[str],
        commands: Sequence[str],
        timeout: float | None,
        policy: ChecksPolicy,
        base: str,
    ) -> None:
        self.repo_path = repo_path
        self.commands = commands
        self.timeout = timeout
        self.policy = policy
        self.base = base
        self.runs = 0
        self.baseline: CheckRun | None = None  # the base's own run, once it was checked

    def _run(self, commit: str, *, keep_going: bool) -> CheckRun:
        self.runs += 1
        return run_checks(
            self.repo_path, commit, self.commands, timeout=self.timeout, keep_going=keep_going
        )

    def judge(
        self, merged: MergeResult
    ) -> tuple[CheckRun | None, CheckVerdict | None, BisectResult | None]:
        """The check run of ``merged`` and its verdict; no verdict (and the bisection that
        found the merge to drop) when a merge must be dropped and the wave merged again."""
        if not self.commands:
            return None, CheckVerdict.NONE, None
        baseline_mode = self.policy is ChecksPolicy.BASELINE
        checks = self._run(merged.integration, keep_going=baseline_mode)
        if not checks.fails:  # passed, or a test runner found no tests to run
            return checks, CheckVerdict.PASSED, None
        if self.policy is ChecksPolicy.WARN:
            return checks, CheckVerdict.FAILED_MERGED, None
        if baseline_mode:
            if self.baseline is None:
                self.baseline = self._run(self.base, keep_going=True)
            if not checks.new_failures(self.baseline):
                return checks, CheckVerdict.KNOWN_FAILURES, None
        elif not merged.sequence:  # nothing merged: the integration is the base
            self.baseline = checks
            return checks, CheckVerdict.BASE_FAILS, None
        found = bisect_merges(
            self.repo_path,
            merged,
            self.commands,
            timeout=self.timeout,
            baseline=self.baseline if baseline_mode else None,
        )
        self.runs += len(found.runs)
        if found.culprit is None:
            self.baseline = next((run for run in found.runs if run.commit == self.base), None)
            return checks, CheckVerdict.BASE_FAILS, None
        return checks, None, found
