"""The end of a wave on the repository: merge in sequence, check, advance the target.

The target branch moves only after the whole wave merged and the checks passed, with a
compare-and-swap on the ref; the integration commit is recorded in the ledger before the
branch moves, so a resume after a crash can tell whether the advance happened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from coordinator.git.checks import CheckRun, WaveIntegration, integrate_wave
from coordinator.git.merge import AgentChange, AgentMerge
from coordinator.git.repo import dirty_paths, open_repository
from coordinator.git.target import advance_target, restore_agent_files
from coordinator.model import ChecksPolicy, Status
from coordinator.state.ledger import WaveRecord

__all__ = [
    "MergePlan",
    "branch_tip",
    "checks_record",
    "merge_plan",
    "restore_in_place",
    "run_integration",
]

MERGEABLE = frozenset({Status.DONE, Status.NO_TESTS_NEEDED, Status.PARTIAL})


@dataclass(frozen=True, slots=True, kw_only=True)
class MergePlan:
    changes: tuple[AgentChange, ...]


def merge_plan(repo: Path, wave: WaveRecord, *, strict: bool) -> MergePlan:
    """Which agents merge, in agent order.

    In strict enforcement an agent's out-of-scope files are cut from what it merges
    (its in-scope work still merges); the full work stays on its checkpoint ref.
    """
    changes: list[AgentChange] = []
    for agent in wave.agents:
        status = Status(agent.status) if agent.status else Status.FAILED
        if status not in MERGEABLE or agent.checkpoint is None:
            continue
        commit = agent.checkpoint
        if strict and agent.scope_violations:
            commit = without_paths(repo, wave.base, commit, agent.scope_violations)
        changes.append(
            AgentChange(
                task_id=agent.task, commit=commit, title=f"{agent.task}: {agent.summary or status}"
            )
        )
    return MergePlan(changes=tuple(changes))


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


def dirty_paths_in_scope(repo: Path, scope: Sequence[str], *, session: str) -> tuple[str, ...]:
    """Files of the main working tree with uncommitted changes that ``scope`` covers."""
    from coordinator.scope.matcher import ScopeMatcher

    repository = open_repository(repo)
    matcher = ScopeMatcher(tuple(scope), workspace=repo, session=session)
    return tuple(sorted(p for p in dirty_paths(repository) if matcher.matches_relative(p)))


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


def record_integration(wave: WaveRecord, result: WaveIntegration) -> list[dict[str, Any]]:
    """Copy the merge outcome into the wave's ledger record; return the conflict fix tasks."""
    merge = result.merge
    # a merge the checks refused is not kept: a resume merges and checks again
    wave.integration = merge.integration if result.mergeable else None
    by_task = {agent.task_id: agent for agent in merge.agents}
    for agent in wave.agents:
        merged = by_task.get(agent.task)
        agent.merged = bool(merged and merged.merged and result.mergeable)
    wave.resolutions = [
        {
            "path": r.path,
            "rule": str(r.rule),
            "agents": [r.kept_task, r.other_task],
            "kept": r.kept_task,
            "fix_task": r.fix_task,
        }
        for r in merge.resolutions
    ]
    wave.dropped = [
        {"task": a.task_id, "reason": a.reason} for a in merge.agents if a.status == "dropped"
    ]
    wave.checks = checks_record(result)
    return [
        {
            "id": fix.id,
            "source": fix.source_task,
            "against": list(fix.against_tasks),
            "files": list(fix.files),
            "commit": fix.source_commit,
            "hunks": fix.hunks,
            "prompt": fix.prompt(),
        }
        for fix in merge.fix_tasks
    ]


def checks_record(result: WaveIntegration) -> dict[str, Any] | None:
    """The ledger's account of a wave's checks: policy, verdict, and what failed where."""
    if result.checks is None:
        return None
    return {
        "passed": result.checks.passed,
        "policy": str(result.policy),
        "verdict": str(result.verdict),
        "runs": result.check_runs,
        "commit": result.checks.commit,
        "failure": _failure(result.checks),
        "no_tests": result.checks.no_baseline,
        "baseline": None
        if result.baseline is None
        else {
            "commit": result.baseline.commit,
            "failure": _failure(result.baseline),
            "no_tests": result.baseline.no_baseline,
        },
    }


def _failure(run: CheckRun) -> dict[str, Any] | None:
    failure = run.failure
    if failure is None:
        return None
    return {
        "command": failure.command,
        "returncode": failure.returncode,
        "output": failure.output[-2000:],
    }


def branch_tip(repo: Path, branch: str) -> str | None:
    repository = open_repository(repo)
    ref = repository.references.get(f"refs/heads/{branch}")
    if ref is None:
        return None
    return str(ref.peel(pygit2.Commit).id)


def in_place_paths(wave: WaveRecord) -> list[str]:
    if wave.isolation != "none":
        return []
    return sorted(
        {path for agent in wave.agents for path in agent.touched if not Path(path).is_absolute()}
    )


def advance(repo: Path, wave: WaveRecord, branch: str) -> None:
    """Move ``branch`` from the wave base to its integration, updating the main tree."""
    assert wave.integration is not None
    paths = in_place_paths(wave)
    if wave.integration == wave.start:
        restore_in_place(repo, wave.start, paths)
        return
    if _half_advanced(repo, wave):
        _finish_half_advance(repo, wave, branch)
        return
    advance_target(
        repo, branch=branch, expected_old=wave.start, new=wave.integration, agent_paths=paths
    )


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
    from coordinator.git.repo import run_git

    assert wave.integration is not None
    message = "seawall: advance after merged wave (resumed)"
    ref = f"refs/heads/{branch}"
    run_git(["update-ref", "-m", message, ref, wave.integration, wave.start], cwd=repo)


def restore_in_place(repo: Path, base: str, paths: Sequence[str]) -> None:
    """Put in-place agents' files back to ``base``, on disk and in the index (their work
    stays on their checkpoint refs)."""
    if paths:
        restore_agent_files(repo, base, paths)


def absorb_agent_commits(repo: Path, wave: WaveRecord, branch: str, session: str) -> str | None:
    """Take back commits agents made on ``branch`` during an in-place wave.

    The branch returns to the wave base (compare-and-swap) and the index to the base
    tree; the working tree keeps the files, which become uncommitted changes again. The
    commits stay reachable on ``refs/seawall/<session>/w<n>-commits``, which is returned;
    None when the branch did not move. A branch that moved elsewhere (not a descendant
    of the base) is left alone: the merge then refuses with a clear error.
    """
    from coordinator.git.repo import run_git

    tip = branch_tip(repo, branch)
    if tip is None or tip == wave.base:
        return None
    repository = open_repository(repo)
    if not repository.descendant_of(tip, wave.base):
        return None
    keep = f"refs/seawall/{session}/w{wave.number}-commits"
    run_git(["update-ref", keep, tip], cwd=repo)
    message = "seawall: agent commits in a shared tree taken back into the wave"
    run_git(["update-ref", "-m", message, f"refs/heads/{branch}", wave.base, tip], cwd=repo)
    run_git(["read-tree", wave.base], cwd=repo)
    return keep


def set_aside_unattributed(
    repo: Path,
    wave: WaveRecord,
    session: str,
    *,
    claimed: set[str],
    scopes: Sequence[Sequence[str]],
) -> tuple[str, list[str]] | None:
    """Save and revert changes of the shared tree that no agent of the wave may own.

    Returns the ref holding them and their paths, or None when there are none.
    """
    from coordinator.git.checkpoints import Checkpointer, CheckpointMode
    from coordinator.scope.matcher import ScopeMatcher

    repository = open_repository(repo)
    matchers = [ScopeMatcher(tuple(scope), workspace=repo, session=session) for scope in scopes]
    stray = [
        path
        for path in sorted(dirty_paths(repository))
        if path not in claimed and not any(m.matches_relative(path) for m in matchers)
    ]
    if not stray:
        return None
    keeper = Checkpointer(
        repo,
        session_id=session,
        task_id=f"unattributed-w{wave.number}",
        base=wave.base,
        mode=CheckpointMode.PATHS,
        dispatch=f"w{wave.number}",
    )
    keeper.wip("changes outside every agent's scope in a shared tree", stray)
    restore_agent_files(repo, wave.base, stray)
    return keeper.ref, stray
