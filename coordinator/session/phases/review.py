"""Reviewing a dispatched wave: the shared tree of an in-place wave settled to what its
agents did within their scopes, the repository's state checked, then each agent's
status, spiral verdict and scope violations recorded."""

from __future__ import annotations

from pathlib import Path

import anyio

from seawall.breakers.signature import error_signature
from seawall.git.history import AgentHistory, agent_history
from seawall.git.spiral import detect_spiral
from seawall.model import Enforcement, Isolation, Status, Task
from seawall.scope.repostate import AgentTrace, check_wave_state
from seawall.scope.verify import link_targets, verify_changes
from seawall.session.agent_records import (
    drop_placeholders,
    restore_worktree_links,
)
from seawall.session.agent_watch import AgentRun
from seawall.session.context import WaveContext
from seawall.session.evidence import accepts_no_change, verdict_note
from seawall.session.user_files import kept_paths, restore_command, set_aside_unattributed
from seawall.session.verdict import apply_review
from seawall.state.ledger import AgentRecord, SpiralRecord, WavePhase, WaveRecord
from seawall.state.render import scope_notes
from seawall.telemetry import (
    RepoStateChanged,
    ScopeViolation,
    UnattributedChanges,
)

__all__ = ["review", "settle_in_place"]


async def settle_in_place(ctx: WaveContext, wave: WaveRecord) -> None:
    """Before review, make the shared tree of an in-place wave say only what its
    agents did within their scopes.

    The target branch is never moved here: a commit on it while the wave ran (the
    user's, or an agent's git write in a shared tree) halts the merge, naming both tips
    (``seawall resume --rebase``). Empty placeholders seawall made for absent scope
    files and a killed supervisor left are removed first. Changes outside every agent's
    scope that seawall saw an agent make are saved on
    ``refs/seawall/<session>/unattributed-w<n>`` and set aside, so nothing is lost;
    changes no agent was seen making are the user's or the lead's: left where they are
    and reported (``seawall.session.user_files``).
    """
    if wave.isolation is not Isolation.NONE:
        return
    await drop_placeholders(ctx, wave)
    session = ctx.state.session
    tasks = ctx.tasks(wave)
    claimed = {path for record in wave.agents for path in record.touched}
    seen = {
        path
        for record in wave.agents
        for run in (ctx.runs.get(record.task) or record.run,)
        if run is not None
        for path in run.shell_writes
    }
    scopes = [tasks[record.task].scope for record in wave.agents]
    kept = kept_paths(ctx.repo, plan_path=ctx.state.plan_path)
    baseline = ctx.baseline(wave)
    aside = await anyio.to_thread.run_sync(
        lambda: set_aside_unattributed(
            ctx.repo,
            wave,
            session,
            claimed=claimed,
            seen=seen,
            scopes=scopes,
            baseline=baseline,
            kept=kept,
        )
    )
    if aside is not None:
        command = restore_command(ctx.repo, session, wave.number)
        wave.set_aside = aside.record(command)
        ctx.events.append(UnattributedChanges(wave=wave.number, set_aside=wave.set_aside))
        for line in aside.lines(wave.number, command):
            ctx.progress.log(line)
    await ctx.save()


async def review(ctx: WaveContext, wave: WaveRecord) -> None:
    """Judge every agent of the wave; the wave is then ``reviewed``."""
    tasks = ctx.tasks(wave)
    enforcement = wave.enforcement
    await restore_worktree_links(ctx, wave, wave.agents)  # first: what follows reads worktrees
    if enforcement is not Enforcement.OFF:
        await anyio.to_thread.run_sync(_check_repo_state, ctx, wave)
    for record in wave.agents:
        run = ctx.runs.get(record.task) or record.run or AgentRun(task_id=record.task)
        history = await anyio.to_thread.run_sync(_history, ctx, wave, record)
        verdict = detect_spiral(history, ctx.config.spiral)
        spiral = None
        if verdict.is_spiral:
            spiral = SpiralRecord(
                summary=verdict.summary(),
                files=verdict.files,
                commits=verdict.commits,
                evidence=tuple(signal.describe() for signal in verdict.signals),
            )
        changed = sorted(history.changed_paths)
        links = await anyio.to_thread.run_sync(_links, ctx, record, changed)
        record.scope_violations = _scope_violations(
            ctx, tasks[record.task], changed, Path(record.workspace), enforcement, links
        )
        for path in (p for p in record.scope_violations if p in links):
            ctx.progress.log(
                f"W{wave.number} {record.task}: {path} is a link to {links[path]}, "
                "outside its scope (a link is judged by its target)"
            )
        apply_review(
            record,
            run,
            changed_paths=changed,
            spiral=spiral,
            may_change_nothing=accepts_no_change(tasks[record.task]),
        )
        note = verdict_note(str(record.status), record.reason)
        if note is not None:
            ctx.progress.log(f"W{wave.number} {record.task}: {note}")
        for line in scope_notes(wave, record):
            ctx.progress.log(f"W{wave.number} {record.task}: {line}")
        if record.scope_violations:
            ctx.events.append(
                ScopeViolation(
                    wave=wave.number,
                    agent=record.task,
                    files=tuple(record.scope_violations),
                    action="left out of the merge"
                    if enforcement is Enforcement.STRICT
                    else "merged, reported",
                )
            )
        _record_task(ctx, record)
    wave.phase = WavePhase.REVIEWED
    await ctx.save()


def _check_repo_state(ctx: WaveContext, wave: WaveRecord) -> None:
    """Hooks, configuration, refs and pushes an agent changed: reported, and put back
    in strict (what was planted is kept, never deleted)."""
    name = f"w{wave.number}-transcript.jsonl"
    traces = [
        AgentTrace.of(a.task, a.workspace, ctx.paths.agent_dir(a.task) / name) for a in wave.agents
    ]
    strict = wave.enforcement is Enforcement.STRICT
    changes = check_wave_state(
        ctx.repo,
        session=ctx.state.session,
        wave=wave.number,
        agents=traces,
        restore_changes=strict,
        target_branch=ctx.state.target_branch,
    )
    for change in changes:
        ctx.events.append(RepoStateChanged(wave=wave.number, change=change))
        ctx.progress.log(f"wave {wave.number}: {change.describe()}")


def _history(ctx: WaveContext, wave: WaveRecord, record: AgentRecord) -> AgentHistory:
    return agent_history(
        ctx.repo,
        session_id=ctx.state.session,
        task_id=record.task,
        base=wave.base,
        branch=record.branch,
        dispatch=f"w{wave.number}",
    )


def _links(ctx: WaveContext, record: AgentRecord, changed: list[str]) -> dict[str, str]:
    """The text of each symbolic link among the agent's changed paths (in its work)."""
    if record.checkpoint is None or not changed:
        return {}
    return link_targets(ctx.repo, record.checkpoint, changed)


def _scope_violations(
    ctx: WaveContext,
    task: Task,
    changed: list[str],
    workspace: Path,
    enforcement: Enforcement,
    links: dict[str, str],
) -> list[str]:
    verdict = verify_changes(
        task.id,
        changed,
        scope=task.scope,
        enforcement=enforcement,
        session=ctx.state.session,
        workspace=workspace,
        links=links,
    )
    return list(verdict.out_of_scope)


def _record_task(ctx: WaveContext, record: AgentRecord) -> None:
    task = ctx.state.task(record.task)
    task.status = record.status
    if record.status is Status.PAUSED:  # the provider refused it: not an attempt
        task.pauses += 1
        ctx.state.cost_usd = round(ctx.state.cost_usd + record.cost_usd, 6)
        return
    task.pauses = 0
    task.attempts += 1
    if record.status == Status.SPIRAL:
        task.spirals += 1
    if record.status in (Status.FAILED, Status.BLOCKED):
        task.failures += 1
    if record.error_signature:
        task.signatures.append(error_signature(record.error_signature))
    ctx.state.cost_usd = round(ctx.state.cost_usd + record.cost_usd, 6)
