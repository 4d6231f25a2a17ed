"""The end of a wave on the repository: merge in sequence, check, advance the target.

The target branch moves only after the whole wave merged and the checks passed, with a
compare-and-swap on the ref; the integration commit is recorded in the ledger before the
branch moves, so a resume after a crash can tell whether the advance happened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from seawall.git.baseline import Baseline
from seawall.git.checks import CheckRun, WaveIntegration, integrate_wave
from seawall.git.merge import AgentChange, AgentMerge, FixTask
from seawall.git.repo import open_repository, run_git
from seawall.git.target import advance_target, restore_agent_files
from seawall.model import ChecksPolicy, Isolation, Status
from seawall.scope.matcher import ScopeMatcher
from seawall.session.user_files import put_back_user_files
from seawall.state.ledger import (
    AgentRecord,
    BaselineChecks,
    CheckFailure,
    ChecksRecord,
    Dropped,
    Resolution,
    WaveRecord,
)

__all__ = [
    "MergePlan",
    "branch_tip",
    "checks_record",
    "merge_plan",
    "restore_in_place",
    "run_integration",
]

MERGEABLE = frozenset({Status.DONE, Status.NO_TESTS_NEEDED, Status.PARTIAL, Status.PAUSED})


@dataclass(frozen=True, slots=True, kw_only=True)
class MergePlan:
    changes: tuple[AgentChange, ...]
    refused: tuple[tuple[str, str], ...] = ()  # (task, why) of branches not merged


def merge_plan(repo: Path, wave: WaveRecord, *, strict: bool) -> MergePlan:
    """Which agents merge, in agent order.

    In strict enforcement an agent's out-of-scope files are cut from what it merges
    (its in-scope work still merges); the full work stays on its checkpoint ref. An
    agent whose work deletes files it never touched (outside its scope, not among the
    paths it reported, not deleted by a commit of its own: files missing from a
    checkout, not an agent's deletions) is refused whatever the enforcement.
    """
    changes: list[AgentChange] = []
    refused: list[tuple[str, str]] = []
    scopes = {task.id: task.scope for task in wave.tasks}
    for agent in wave.agents:
        status = agent.status or Status.FAILED
        if status not in MERGEABLE or agent.checkpoint is None:
            continue
        untouched = untouched_deletions(repo, wave.base, agent, scopes.get(agent.task, ()))
        if untouched:
            shown = ", ".join(untouched[:5]) + (" ..." if len(untouched) > 5 else "")
            refused.append(
                (
                    agent.task,
                    f"its work deletes {len(untouched)} file(s) it never touched ({shown}); "
                    f"refused, not merged (its work stays on {checkpoint_ref_of(agent)})",
                )
            )
            continue
        commit = agent.checkpoint
        if strict and agent.scope_violations:
            commit = without_paths(repo, wave.base, commit, agent.scope_violations)
        changes.append(
            AgentChange(task_id=agent.task, commit=commit, title=agent.summary or str(status))
        )
    return MergePlan(changes=tuple(changes), refused=tuple(refused))


def checkpoint_ref_of(agent: AgentRecord) -> str:
    return agent.checkpoint[:12] if agent.checkpoint else "its checkpoint ref"


def untouched_deletions(
    repo: Path, base: str, agent: AgentRecord, scope: Sequence[str]
) -> list[str]:
    """Files of ``base`` the agent's latest checkpoint lacks that the agent never
    touched: outside its scope, not reported, not deleted by one of its own commits."""

    assert agent.checkpoint is not None
    repository = open_repository(repo)
    base_tree = repository.revparse_single(base).peel(pygit2.Commit).tree
    work = repository.revparse_single(agent.checkpoint).peel(pygit2.Commit).tree
    deleted = {
        delta.old_file.path
        for delta in base_tree.diff_to_tree(work).deltas
        if delta.status == pygit2.enums.DeltaStatus.DELETED
    }
    if not deleted:
        return []
    matcher = ScopeMatcher(tuple(scope), workspace=repo, session="")
    allowed = set(agent.touched) | _deleted_by_commits(repository, base_tree, agent.branch)
    return sorted(p for p in deleted if p not in allowed and not matcher.matches_relative(p))


def _deleted_by_commits(
    repository: pygit2.Repository, base_tree: pygit2.Tree, branch: str | None
) -> set[str]:
    reference = repository.references.get(f"refs/heads/{branch}") if branch else None
    if reference is None:
        return set()
    tip = reference.peel(pygit2.Commit).tree
    return {
        delta.old_file.path
        for delta in base_tree.diff_to_tree(tip).deltas
        if delta.status == pygit2.enums.DeltaStatus.DELETED
    }


def without_paths(repo: Path, base: str, commit: str, paths: Sequence[str]) -> str:
    """A commit like ``commit`` whose ``paths`` are as in ``base`` (a child of ``commit``)."""
    repository = open_repository(repo)
    source = repository.revparse_single(commit).peel(pygit2.Commit)
    base_tree = repository.revparse_single(base).peel(pygit2.Commit).tree
    index = pygit2.Index()
    index.read_tree(source.tree)
    for path in paths:
        try:
            entry = base_tree[path]
        except KeyError:
            if path in index:
                index.remove(path)
            continue
        index.add(pygit2.IndexEntry(path, entry.id, entry.filemode))
    tree = index.write_tree(repository)
    signature = pygit2.Signature("seawall", "seawall@localhost")
    message = "scope: out-of-scope changes left out of the merge\n\n" + "\n".join(paths)
    return str(repository.create_commit(None, signature, signature, message, tree, [source.id]))


def run_integration(
    repo: Path,
    wave: WaveRecord,
    plan: MergePlan,
    *,
    session: str,
    checks: Sequence[str],
    timeout: float | None,
    on_merged: Callable[[AgentMerge], None] | None = None,
    policy: ChecksPolicy = ChecksPolicy.BLOCK,
) -> WaveIntegration:
    return integrate_wave(
        repo,
        base=wave.base,
        changes=plan.changes,
        session_id=session,
        wave=wave.number,
        commands=checks,
        timeout=timeout,
        on_merged=on_merged,
        policy=policy,
        onto=wave.onto,
    )


def record_integration(wave: WaveRecord, result: WaveIntegration) -> tuple[FixTask, ...]:
    """Copy the merge outcome into the wave's ledger record; return the conflict fix tasks."""
    merge = result.merge
    # a merge the checks refused is not kept: a resume merges and checks again
    wave.integration = merge.integration if result.mergeable else None
    by_task = {agent.task_id: agent for agent in merge.agents}
    for agent in wave.agents:
        merged = by_task.get(agent.task)
        agent.merged = bool(merged and merged.merged and result.mergeable)
    wave.resolutions = [
        Resolution(
            path=r.path,
            rule=str(r.rule),
            agents=(r.kept_task, r.other_task),
            kept=r.kept_task,
            fix_task=r.fix_task,
        )
        for r in merge.resolutions
    ]
    wave.dropped = [
        Dropped(task=a.task_id, reason=a.reason) for a in merge.agents if a.status == "dropped"
    ]
    wave.checks = checks_record(result)
    return merge.fix_tasks


def checks_record(result: WaveIntegration) -> ChecksRecord | None:
    """The ledger's account of a wave's checks: policy, verdict, and what failed where."""
    if result.checks is None:
        return None
    baseline = result.baseline
    return ChecksRecord(
        passed=result.checks.passed,
        policy=result.policy,
        verdict=result.verdict,
        runs=result.check_runs,
        commit=result.checks.commit,
        failure=_failure(result.checks),
        no_tests=result.checks.no_baseline,
        baseline=None
        if baseline is None
        else BaselineChecks(
            commit=baseline.commit,
            failure=_failure(baseline),
            no_tests=baseline.no_baseline,
        ),
    )


def _failure(run: CheckRun) -> CheckFailure | None:
    failure = run.failure
    if failure is None:
        return None
    return CheckFailure(
        command=failure.command,
        returncode=failure.returncode,
        output=failure.output[-2000:],
    )


def branch_tip(repo: Path, branch: str) -> str | None:
    repository = open_repository(repo)
    ref = repository.references.get(f"refs/heads/{branch}")
    if ref is None:
        return None
    return str(ref.peel(pygit2.Commit).id)


def in_place_paths(wave: WaveRecord) -> list[str]:
    if wave.isolation is not Isolation.NONE:
        return []
    return sorted(
        {path for agent in wave.agents for path in agent.touched if not Path(path).is_absolute()}
    )


def advance(repo: Path, wave: WaveRecord, branch: str, *, baseline: Baseline | None = None) -> None:
    """Move ``branch`` from the wave base to its integration, updating the main tree.

    User files that predate an in-place wave and that an unmerged agent's revert left
    missing are written back from their copy (``baseline``)."""
    assert wave.integration is not None
    paths = in_place_paths(wave)
    if wave.integration == wave.start:
        restore_in_place(repo, wave.start, paths)
    elif _half_advanced(repo, wave):
        _finish_half_advance(repo, wave, branch)
    else:
        advance_target(
            repo, branch=branch, expected_old=wave.start, new=wave.integration, agent_paths=paths
        )
    if baseline is not None:
        put_back_user_files(repo, baseline, paths)


def _half_advanced(repo: Path, wave: WaveRecord) -> bool:
    """A crash between updating the main tree and moving the branch leaves the index
    (and the files) at the integration while the branch is still at the base."""
    assert wave.integration is not None
    repository = open_repository(repo)
    repository.index.read()
    integration = repository.revparse_single(wave.integration).peel(pygit2.Commit)
    return bool(repository.index.write_tree() == integration.tree.id)


def _finish_half_advance(repo: Path, wave: WaveRecord, branch: str) -> None:
    """Complete an advance whose tree update happened: move the branch, compare-and-swap."""

    assert wave.integration is not None
    message = "seawall: advance after merged wave (resumed)"
    ref = f"refs/heads/{branch}"
    run_git(["update-ref", "-m", message, ref, wave.integration, wave.start], cwd=repo)


def restore_in_place(repo: Path, base: str, paths: Sequence[str]) -> None:
    """Put in-place agents' files back to ``base``, on disk and in the index (their work
    stays on their checkpoint refs)."""
    if paths:
        restore_agent_files(repo, base, paths)
