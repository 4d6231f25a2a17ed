"""Preparing a planned wave: one workspace per agent (or the shared tree), the user's
files recorded before an in-place wave, the scope manifest, and a snapshot of the
repository's hooks, configuration and refs for the post-wave check."""

from __future__ import annotations

from pathlib import Path

import anyio

from seawall.git.baseline import record_baseline
from seawall.git.sparse import task_sparse_dirs
from seawall.git.workspaces import ensure_ready, prepare_workspaces
from seawall.isolation import explain_enforcement
from seawall.model import Isolation, Task, Wave
from seawall.prompting import render_agent_prompt
from seawall.runtime.fault_injection import kill_point
from seawall.scope.manifest import (
    build_manifest,
    manifest_digest,
    manifest_path,
    write_manifest,
)
from seawall.scope.matcher import ScopeMatcher
from seawall.scope.repostate import save_snapshot, snapshot, snapshot_path
from seawall.session.base_checks import halt_on_red_base
from seawall.session.context import WaveContext
from seawall.session.continuation import take_continuation
from seawall.session.user_files import adopted_record, refuse_user_files, user_files_in_scopes
from seawall.state.ledger import AgentRecord, WavePhase, WaveRecord
from seawall.state.render import adopted_lines
from seawall.telemetry import WorktreeFallback, WorktreeRecreated

__all__ = ["ensure_workspaces", "prepare", "prompt_for", "wave_manifest"]


async def prepare(ctx: WaveContext, wave: WaveRecord) -> None:
    """Create the wave's workspaces and manifest; the wave is then ``prepared``. A base
    that fails the checks (``seawall.session.base_checks``) halts the session first: the
    wave stays planned."""
    if await halt_on_red_base(ctx, wave):
        return
    tasks = list(ctx.tasks(wave).values())
    workspaces = await prepare_workspaces(
        ctx.repo,
        session_id=ctx.state.session,
        wave=wave.number,
        base=wave.base,
        task_ids=[task.id for task in tasks],
        isolation=wave.isolation,
        worktrees_under=ctx.config.worktree_root,
        sparse={task.id: task_sparse_dirs(task, ctx.config) for task in tasks},
    )
    wave.agents = []
    by_id = {task.id: task for task in tasks}
    for workspace in workspaces:
        # a retry moves to the task's next model (a paused attempt is not an attempt)
        attempts = ctx.state.task(workspace.task_id).attempts
        model = by_id[workspace.task_id].model_for(attempts) or ""
        agent = AgentRecord(
            task=workspace.task_id,
            workspace=workspace.path,
            branch=workspace.branch,
            model=model,
        )
        take_continuation(ctx, agent, by_id[workspace.task_id])
        wave.agents.append(agent)
        if workspace.fallback_reason and wave.fallback is None:
            wave.fallback = workspace.fallback_reason
    if wave.fallback is not None:
        _fall_back_in_place(ctx, wave)
    if wave.isolation is Isolation.NONE:
        await _take_user_files(ctx, wave, tasks)
    _write_manifest(ctx, wave, tasks)
    wave.phase = WavePhase.PREPARED
    await ctx.save()
    kill_point("after-workspaces")


async def _take_user_files(ctx: WaveContext, wave: WaveRecord, tasks: list[Task]) -> None:
    """Before an in-place wave is dispatched: the user's untracked files inside a task's
    scope refuse the wave (``UserFilesInScopeError``, naming each file and task) unless
    ``adopt_user_files``; adopted ones, and ignored ones, are copied onto a ref and
    named with the command that writes them back."""
    baseline = await anyio.to_thread.run_sync(record_baseline, ctx.repo)
    scopes = {task.id: task.scope for task in tasks}
    found = user_files_in_scopes(ctx.repo, baseline, scopes, session=ctx.state.session)
    if found and not ctx.config.adopt_user_files:
        raise refuse_user_files(found, wave.number)
    taken = await anyio.to_thread.run_sync(
        lambda: ctx.baselines.take(
            wave.number, base=wave.base, scopes=list(scopes.values()), baseline=baseline
        )
    )
    matchers = [
        ScopeMatcher(tuple(scope), workspace=ctx.repo, session=ctx.state.session)
        for scope in scopes.values()
    ]
    covered = [p for p in taken.files() if any(m.matches_relative(p) for m in matchers)]
    wave.adopted = adopted_record(
        ctx.repo, taken, covered, session=ctx.state.session, wave=wave.number
    )
    if wave.adopted is not None:
        for line in adopted_lines(wave.number, wave.adopted):
            ctx.progress.log(line)


async def ensure_workspaces(ctx: WaveContext, wave: WaveRecord) -> None:
    """Before agents run in a resumed wave, make every worktree whole again (a folder
    deleted, a checkout a kill interrupted): no agent has run in them yet."""
    if wave.isolation is not Isolation.WORKTREE:
        return
    waiting = [(a.workspace, a.branch) for a in wave.agents if a.run is None]
    tasks = ctx.tasks(wave)
    sparse = {
        a.workspace: task_sparse_dirs(tasks[a.task], ctx.config)
        for a in wave.agents
        if a.task in tasks
    }
    remade = await ensure_ready(ctx.repo, waiting, base=wave.base, sparse=sparse)
    for path in remade:
        ctx.events.append(WorktreeRecreated(wave=wave.number, path=path))
        ctx.progress.log(f"wave {wave.number}: worktree {path} was not whole; made again")


def prompt_for(ctx: WaveContext, wave: WaveRecord, task: Task, *, workspace: str = "") -> str:
    """The prompt of ``task`` in ``wave``, with what its unfinished dependencies left
    (and, given a ``workspace``, the line that names where all its work happens)."""
    return render_agent_prompt(
        task,
        max_turns=task.max_turns or wave.max_turns,
        scope=task.scope,
        session=ctx.state.session,
        wave=wave.number,
        extra_context=_dependency_context(ctx, task),
        workspace=workspace,
    )


def wave_manifest(ctx: WaveContext, wave: WaveRecord) -> tuple[Path | None, str]:
    """The wave's manifest and its digest, for the agent's hooks (None and "": not
    written)."""
    path = manifest_path(ctx.repo, ctx.state.session, wave.number)
    if not path.exists():
        return None, ""
    return path, manifest_digest(path)


def _dependency_context(ctx: WaveContext, task: Task) -> str:
    origin = ctx.state.tasks.get(task.id)
    deps = origin.origin.depends_on if origin and origin.origin else ()
    missing = []
    for dep in deps:
        record = ctx.state.tasks.get(dep)
        if record is not None and record.abandoned:
            issue = f" (carried over as issue #{record.issue.number})" if record.issue else ""
            missing.append(f"- {dep} was not completed{issue}")
    if not missing:
        return ""
    return "Dependencies that were NOT completed:\n" + "\n".join(missing)


def _fall_back_in_place(ctx: WaveContext, wave: WaveRecord) -> None:
    enforcement = explain_enforcement(
        isolation=Isolation.NONE, config_enforcement=ctx.config.enforcement
    )
    wave.isolation = Isolation.NONE
    wave.enforcement = enforcement.value
    wave.enforcement_reason = enforcement.reason
    ctx.progress.log(
        f"warning: wave {wave.number}: worktrees could not be created, "
        f"running in place: {wave.fallback}"
    )
    ctx.events.append(WorktreeFallback(wave=wave.number, reason=wave.fallback))


def _write_manifest(ctx: WaveContext, wave: WaveRecord, tasks: list[Task]) -> None:
    manifest = build_manifest(
        session=ctx.state.session,
        wave=Wave(
            number=wave.number,
            tasks=tuple(tasks),
            isolation=wave.isolation,
            enforcement=wave.enforcement,
            max_turns=wave.max_turns,
        ),
        repo=ctx.repo,
        workspaces={agent.task: Path(agent.workspace) for agent in wave.agents},
        commands=ctx.config.commands,
        base=wave.base,
        limits=ctx.breaker_limits(),
    )
    write_manifest(manifest)
    # hooks, configuration and refs before agents run, for the post-wave check
    path = snapshot_path(ctx.repo, ctx.state.session, wave.number)
    save_snapshot(snapshot(ctx.repo, session=ctx.state.session), path)
