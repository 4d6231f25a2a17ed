"""The rolling schedule: each task starts as soon as what it needs has landed.

A rolling session (``[session] schedule = "rolling"``) has no barrier between waves.
A pending task is dispatched as soon as (a) every task it depends on has landed (its
dispatch merged, or was settled: abandoned with a carryover), (b) fewer than
``max_agents`` agents run, and (c) its scope collides with no running agent's. Each
dispatch is recorded as a wave of one agent (``W<n>`` numbers dispatches): its own base
pinned on the target branch as it stands then, its own isolation decided from what runs
beside it, and its own review, merge and recovery through the very phases a wave uses
(``wave_steps.land_wave``), one finished agent at a time, in the order they finished.

Isolation per dispatch: an agent that would run alone (nothing running, nothing else
ready) takes the spec's table for one agent (in place unless the plan or the task's
collision risk says worktree) and then holds the tree: nothing else is dispatched until
it landed, so an in-place agent never shares the tree with another agent or a merge.
Whenever anything runs beside it, an agent gets a worktree. ``isolation = "none"`` set
explicitly runs the agents one at a time, each alone in the tree.

A halt (a breaker, a budget, checks failing at the base) stops new dispatches; agents
already running finish and are recorded, and ``seawall resume`` reviews and merges them.
A resumed session first completes what the dead coordinator left open: a merge that
advanced the branch is recognised (never merged twice), agents that never reported are
salvaged, prepared dispatches run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from seawall.isolation import IsolationResolution
from seawall.model import Isolation, Task
from seawall.plan.waves import make_wave
from seawall.scope.collisions import OverlapKind, check_pair
from seawall.scope.repostate import load_snapshot, save_snapshot, snapshot, snapshot_path
from seawall.session.context import WaveContext
from seawall.session.halts import halt_on_session_time
from seawall.session.integrate import branch_tip
from seawall.session.phases.dispatch import dispatch, salvage
from seawall.session.phases.planning import record_wave
from seawall.session.phases.prepare import prepare
from seawall.session.rolling_batch import land_together
from seawall.session.tasks import ready_tasks
from seawall.session.user_stop import kill_if_asked
from seawall.session.wave_steps import land_wave
from seawall.state.ledger import SessionPhase, SessionState, WavePhase, WaveRecord

__all__ = ["dispatch_ready", "in_flight", "land_finished", "landed_ready", "roll"]


async def roll(ctx: WaveContext) -> bool:
    """Run a rolling session until no task is left (False) or it stopped (True: halted
    or killed; ``ctx.state.phase`` says which)."""
    return await _Roller(ctx).run()


def in_flight(state: SessionState) -> set[str]:
    """The tasks of dispatches that have not landed yet."""
    return {
        task.id for wave in state.waves if wave.phase is not WavePhase.DONE for task in wave.tasks
    }


def landed_ready(state: SessionState) -> list[Task]:
    """Pending tasks every dependency of which has landed (or was settled), in queue order."""
    running = in_flight(state)
    return [task for task in ready_tasks(state) if not running.intersection(task.depends_on)]


class _Roller:
    """One process's run of a rolling session: the running dispatches and the queue of
    finished ones waiting to land, in the order they finished."""

    def __init__(self, ctx: WaveContext) -> None:
        self.ctx = ctx
        self.running: dict[int, WaveRecord] = {}
        self.alone: int | None = None  # the in-place dispatch that holds the tree
        self.landing: list[WaveRecord] = []  # finished, being reviewed and merged
        self.send: MemoryObjectSendStream[WaveRecord]
        self.receive: MemoryObjectReceiveStream[WaveRecord]
        self.send, self.receive = anyio.create_memory_object_stream[WaveRecord](math.inf)

    def _going(self) -> bool:
        return self.ctx.state.phase is SessionPhase.RUNNING

    async def run(self) -> bool:
        ctx = self.ctx
        async with ctx.progress.ticking(), anyio.create_task_group() as group:
            await self._reopen(group)
            while self._going():
                await self._dispatch_ready(group)
                if not self.running:
                    break
                await self._land(await self.receive.receive(), group)
            # stopped: the agents still running end and are recorded; resume lands them
        await ctx.save()
        return not self._going()

    # -- dispatch ---------------------------------------------------------------------

    async def _dispatch_ready(self, group: TaskGroup) -> None:
        if self.alone is not None:
            return
        for wave in await dispatch_ready(self.ctx, [*self.running.values(), *self.landing]):
            self._start(group, wave)

    def _start(self, group: TaskGroup, wave: WaveRecord) -> None:
        self.running[wave.number] = wave
        if wave.isolation is Isolation.NONE:
            self.alone = wave.number
        group.start_soon(self._run, wave)

    async def _run(self, wave: WaveRecord) -> None:
        await dispatch(self.ctx, wave)
        await self.send.send(wave)

    # -- landing ----------------------------------------------------------------------

    async def _land(self, wave: WaveRecord, group: TaskGroup | None = None) -> None:
        """Review, merge and recover a finished dispatch (the same phases as a wave) and
        every other that finished meanwhile, in the order they finished: together, with
        one run of the checks, when the plan has checks (``rolling_batch``). The slots
        they free are filled first with the tasks that do not wait for them."""
        ctx = self.ctx
        batch = [wave]
        while True:
            try:
                batch.append(self.receive.receive_nowait())
            except anyio.WouldBlock:
                break
        for each in batch:
            self.running.pop(each.number, None)
        if not self._going():
            return  # stopped while they ran: resume lands them
        self.landing = batch
        if group is not None:
            await self._dispatch_ready(group)  # none in place: the tree is being merged
        await land_finished(ctx, batch)
        self.landing = []
        if self.alone in {each.number for each in batch}:
            self.alone = None
        await kill_if_asked(ctx)

    async def _reopen(self, group: TaskGroup) -> None:
        """Complete the dispatches an earlier coordinator left open: merges first (the
        one whose integration the branch already holds before any other), then agents
        that never reported, then dispatches that were planned or prepared."""
        ctx = self.ctx
        tip = await anyio.to_thread.run_sync(branch_tip, ctx.repo, ctx.state.target_branch)
        rank = {WavePhase.MERGED: 0, WavePhase.REVIEWED: 1, WavePhase.DISPATCHED: 2}
        open_waves = [w for w in ctx.state.waves if w.phase is not WavePhase.DONE]
        landing = sorted(
            (w for w in open_waves if w.phase in rank),
            key=lambda w: (w.integration != tip, rank[w.phase], w.ended_at, w.number),
        )
        for wave in landing:
            if not self._going():
                return
            if wave.phase is WavePhase.DISPATCHED:
                await salvage(ctx, wave)
            await self._land(wave)
        for wave in open_waves:
            if not self._going():
                return
            if wave.phase is WavePhase.PLANNED:
                await prepare(ctx, wave)
            if wave.phase is WavePhase.PREPARED:
                if await halt_on_session_time(ctx, wave):
                    return
                self._start(group, wave)


async def dispatch_ready(ctx: WaveContext, busy: Sequence[WaveRecord]) -> list[WaveRecord]:
    """Record and prepare a dispatch for each task that may start now beside ``busy``
    (the dispatches running or being landed): its dependencies landed, a slot free, no
    scope colliding; each on the target branch as it stands, its isolation decided from
    what runs beside it. None while an in-place dispatch holds the tree; none past the
    session's time (it halts)."""
    if any(wave.isolation is Isolation.NONE for wave in busy):
        return []
    free = ctx.config.max_agents - len(busy)
    chosen = _choose(ctx, landed_ready(ctx.state), free, busy) if free > 0 else []
    if not chosen or await halt_on_session_time(ctx, None):
        return []
    beside = len(busy) + len(chosen)
    started: list[WaveRecord] = []
    for task in chosen:
        number = len(ctx.state.waves) + 1
        resolved = _isolation(ctx, task, number, beside)
        wave_plan = make_wave(
            (task,),
            ctx.config,
            number=number,
            isolation=resolved.value,
            isolation_reason=resolved.reason,
        )
        wave = await record_wave(ctx, wave_plan)
        await prepare(ctx, wave)
        if wave.phase is not WavePhase.PREPARED:  # the base failed the checks: halted
            break
        started.append(wave)
    return started


def _choose(
    ctx: WaveContext, ready: list[Task], free: int, busy: Sequence[WaveRecord]
) -> list[Task]:
    """Up to ``free`` ready tasks whose scopes collide with no busy agent's nor with each
    other's (the pre-dispatch collision check, against what runs)."""
    if ctx.config.isolation is Isolation.NONE:
        # every agent in place: one at a time, alone in the tree
        return ready[:1] if not busy else []
    taken = [task for wave in busy for task in wave.tasks]
    chosen: list[Task] = []
    for task in ready:
        if len(chosen) == free:
            break
        if any(check_pair(task, other).kind is not OverlapKind.DISJOINT for other in taken):
            continue
        chosen.append(task)
        taken.append(task)
    return chosen


def _isolation(ctx: WaveContext, task: Task, number: int, beside: int) -> IsolationResolution:
    """The isolation of one dispatch, from what will run beside it."""
    alone = make_wave((task,), ctx.config, number=number)
    if alone.isolation is Isolation.WORKTREE:
        return IsolationResolution(Isolation.WORKTREE, alone.isolation_reason)
    if beside == 1:
        reason = f"{alone.isolation_reason}; runs alone, the tree held until it lands"
        return IsolationResolution(Isolation.NONE, reason)
    others = beside - 1
    return IsolationResolution(
        Isolation.WORKTREE,
        f"rolling: runs beside {others} other agent(s); in place only alone in the tree",
    )


async def land_finished(ctx: WaveContext, batch: Sequence[WaveRecord]) -> None:
    """Review, merge and recover finished dispatches, in the order given (the order they
    finished): together, with one run of the checks, when the plan has checks
    (``rolling_batch``), else one after the other. A halt leaves the rest for resume."""
    for each in batch:
        if each.phase is WavePhase.DISPATCHED:
            await anyio.to_thread.run_sync(_accept_session_moves, ctx, each)
    if len(batch) > 1 and ctx.config.checks:
        await land_together(ctx, batch)
        return
    for each in batch:
        if ctx.state.phase is SessionPhase.RUNNING:
            await land_wave(ctx, each)


def _accept_session_moves(ctx: WaveContext, wave: WaveRecord) -> None:
    """Before the repository-state check of one dispatch: what the session itself did
    while the agent ran (the target branch advanced by earlier landings, the worktrees
    of other dispatches made and removed) is no change of this agent's."""
    path = snapshot_path(ctx.repo, ctx.state.session, wave.number)
    if not path.exists():
        return
    before = load_snapshot(path)
    now = snapshot(ctx.repo, session=ctx.state.session)
    refs = dict(before.refs)
    ref = f"refs/heads/{ctx.state.target_branch}"
    tip = now.refs.get(ref)
    if tip is not None and any(w.target_after == tip for w in ctx.state.waves):
        refs[ref] = tip
    own = {Path(agent.workspace).name for agent in wave.agents}

    def others(key: str) -> bool:
        parts = key.split("/")
        return len(parts) > 2 and parts[0] == "worktrees" and parts[1] not in own

    files = {key: value for key, value in before.files.items() if not others(key)}
    files.update({key: value for key, value in now.files.items() if others(key)})
    save_snapshot(replace(before, refs=refs, files=files), path)
