"""One agent's record in a wave: its checkpoints, its run, the files it may claim."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import anyio

from seawall.git.checkpoints import Checkpointer, CheckpointMode
from seawall.model import Isolation, Task
from seawall.sandbox.placeholders import drop_recorded
from seawall.scope.repostate import snapshot_path
from seawall.scope.worktree_link import restore_links
from seawall.session.agent_watch import AgentRun
from seawall.session.context import WaveContext
from seawall.session.user_files import dirty_paths_in_scope
from seawall.state.ledger import AgentRecord, WaveRecord
from seawall.telemetry import RepoStateChanged

__all__ = [
    "apply_run",
    "checkpointer",
    "dirty_in_scope",
    "drop_placeholders",
    "placeholder_record",
    "restore_worktree_links",
    "snapshot_unreported",
]


def checkpointer(ctx: WaveContext, wave: WaveRecord, agent: AgentRecord) -> Checkpointer:
    """The checkpointer of ``agent`` in ``wave``: its whole tree in a worktree, only its
    files in a shared tree."""
    in_place = wave.isolation is Isolation.NONE
    return Checkpointer(
        agent.workspace,
        session_id=ctx.state.session,
        task_id=agent.task,
        base=wave.base,
        mode=CheckpointMode.PATHS if in_place else CheckpointMode.TREE,
        dispatch=f"w{wave.number}",
    )


async def restore_worktree_links(
    ctx: WaveContext, wave: WaveRecord, agents: Sequence[AgentRecord]
) -> None:
    """Before seawall reads worktrees agents ran in: each ``.git`` link an agent changed
    is put back (what it left kept beside the wave's planted hooks) and reported, naming
    the agent, like any change to the repository's state."""
    if wave.isolation is not Isolation.WORKTREE:
        return
    save = snapshot_path(ctx.repo, ctx.state.session, wave.number).parent / "planted"
    pairs = [(record.task, Path(record.workspace)) for record in agents]
    changes = await anyio.to_thread.run_sync(lambda: restore_links(ctx.repo, pairs, save_dir=save))
    for change in changes:
        ctx.events.append(RepoStateChanged(wave=wave.number, change=change))
        ctx.progress.log(f"wave {wave.number}: {change.describe()}")


def dirty_in_scope(ctx: WaveContext, wave: WaveRecord, task: Task) -> tuple[str, ...]:
    """The changed files of the shared tree within ``task``'s scope (the user's own
    files recorded before the wave excepted)."""
    return dirty_paths_in_scope(
        ctx.repo, task.scope, session=ctx.state.session, baseline=ctx.baseline(wave)
    )


def apply_run(ctx: WaveContext, record: AgentRecord, run: AgentRun) -> None:
    """Copy what ``run`` measured into the agent's ledger record."""
    ctx.runs[run.task_id] = run
    record.run = run.for_ledger()
    record.checkpoint = run.checkpoint
    record.wip = run.wip
    record.touched = list(run.touched)
    counts = run.counts
    record.turns = counts.turns
    record.tool_calls = counts.tool_calls
    record.cost_usd = counts.cost_usd
    record.cost_estimated = counts.cost_estimated
    record.input_tokens = counts.input_tokens
    record.output_tokens = counts.output_tokens
    record.cache_read_tokens = counts.cache_read_tokens
    record.cache_write_tokens = counts.cache_write_tokens
    record.elapsed_s = counts.elapsed_s
    record.last_tool = counts.last_tool or ""
    record.exit_code = run.exit_code
    record.transcript = run.transcript
    record.final_text = run.final_text[-4000:]
    record.conversation = run.conversation
    record.continued = run.continued


async def snapshot_unreported(
    ctx: WaveContext, wave: WaveRecord, record: AgentRecord, task: Task, *, wip: str | None = None
) -> AgentRun:
    """Checkpoint the files of an agent the coordinator did not run (or lost), and
    with ``wip`` also a ``wip:`` snapshot with that reason."""
    await restore_worktree_links(ctx, wave, [record])
    points = checkpointer(ctx, wave, record)
    paths = dirty_in_scope(ctx, wave, task) if wave.isolation is Isolation.NONE else None
    await points.acheckpoint(paths)
    snapshot = await points.awip(wip, paths) if wip else None
    return AgentRun(
        task_id=task.id, checkpoint=points.tip, wip=snapshot, touched=tuple(paths or ())
    )


def placeholder_record(ctx: WaveContext, wave: int, task: str) -> Path:
    """Where the empty files made for ``task``'s in-place agent in ``wave`` are listed."""
    return ctx.paths.wave_dir(wave) / "placeholders" / f"{task}.txt"


async def drop_placeholders(ctx: WaveContext, wave: WaveRecord) -> None:
    """Remove the empty placeholders a killed supervisor left in the shared tree, and
    take them out of each agent's checkpoint: seawall made them, not the agent."""
    if wave.isolation is not Isolation.NONE:
        return
    tasks = ctx.tasks(wave)
    for record in wave.agents:
        listed = placeholder_record(ctx, wave.number, record.task)
        paths = await anyio.to_thread.run_sync(_drop_placeholders, listed, ctx.repo)
        if not paths:
            continue
        points = checkpointer(ctx, wave, record)
        await points.acheckpoint([*dirty_in_scope(ctx, wave, tasks[record.task]), *paths])
        record.checkpoint = points.tip or record.checkpoint
        shown = ", ".join(paths)
        ctx.progress.log(
            f"wave {wave.number}: {record.task}: seawall's unused empty placeholder(s) "
            f"removed: {shown}"
        )


def _drop_placeholders(listed: Path, repo: Path) -> list[str]:
    """The unused placeholders listed in ``listed`` removed, relative to ``repo``."""
    root = os.path.realpath(repo)
    return [os.path.relpath(path, root) for path in drop_recorded(str(listed))]
