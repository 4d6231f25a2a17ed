"""Planning the next wave: the ready tasks, split by the wave cap and by colliding
scopes, on a base commit pinned on the target branch."""

from __future__ import annotations

import time
from collections.abc import Sequence

import anyio

from seawall.errors import GitError, SeawallError
from seawall.git.repo import pin_base
from seawall.model import Isolation, Plan, RunnerSpec, SessionConfig, Task, Wave
from seawall.plan.waves import make_wave
from seawall.runner import AgentRunner, build_runner
from seawall.sandbox.selection import sandbox_choice
from seawall.scope.collisions import CollisionReport, plan_collisions
from seawall.session.context import WaveContext
from seawall.session.tasks import ready_of, ready_tasks, remove_pending
from seawall.state.ledger import WaveRecord
from seawall.telemetry import ScopeCollision, WavePlanned

__all__ = ["choose_wave", "plan_next", "record_wave", "wave_barriers", "waves_of_a_run"]


def choose_wave(
    ready: Sequence[Task], config: SessionConfig, number: int
) -> tuple[Wave, CollisionReport]:
    """Wave ``number`` of the ``ready`` tasks: the first ``max_agents_per_wave``, less
    those whose scopes collide with an earlier one in place (they wait for a later wave),
    with its isolation, enforcement and their reasons; and the collision check."""
    first = make_wave(tuple(ready[: config.max_agents_per_wave]), config, number=number)
    report = plan_collisions(first, policy=config.overlap)
    chosen = report.waves[0]
    wave = make_wave(
        chosen.tasks,
        config,
        number=number,
        isolation=chosen.isolation,
        isolation_reason=chosen.isolation_reason,
    )
    return wave, report


def waves_of_a_run(plan: Plan) -> list[tuple[Wave, CollisionReport]]:
    """The waves a session of ``plan`` runs when every agent finishes its task, each
    chosen by ``choose_wave`` as the session chooses it (``seawall plan`` shows them)."""
    pending = list(plan.tasks)
    waves: list[tuple[Wave, CollisionReport]] = []
    while ready := ready_of(pending):
        wave, report = choose_wave(ready, plan.session, len(waves) + 1)
        waves.append((wave, report))
        taken = set(wave.task_ids)
        pending = [task for task in pending if task.id not in taken]
    return waves


def wave_barriers(plan: Plan, wave: Wave) -> dict[str, str]:
    """What keeps the agents of ``wave`` in scope while they run, by runner: the sandbox
    dispatch gives them (``sandbox_choice``, the choice ``agent_sandbox`` builds it from)
    and the runner's own live barrier (its hooks), in a few words."""
    out: dict[str, str] = {}
    for name in sorted({task.agent or plan.session.agent for task in wave.tasks}):
        spec = plan.runners.get(name) or RunnerSpec(name=name, kind=name)
        try:
            runner = build_runner(spec)  # as the session builds it
        except SeawallError as exc:  # an adapter whose extra is missing still plans
            out[name] = f"unknown ({exc})"
            continue
        choice, missing = sandbox_choice(
            in_place=wave.isolation is Isolation.NONE,
            enforcement=wave.enforcement,
            accept_hooks_only=plan.session.accept_hooks_only,
            starts_processes=runner.starts_processes,
        )
        parts = [choice.describe(missing)]
        if type(runner).barrier is not AgentRunner.barrier:
            parts.append(runner.barrier)
        out[name] = "; ".join(parts)
    return out


async def plan_next(ctx: WaveContext) -> WaveRecord | None:
    """Record the next wave in the ledger; None when no pending task is ready."""
    ready = ready_tasks(ctx.state)
    if not ready:
        return None
    config = ctx.config
    number = len(ctx.state.waves) + 1
    wave_plan, report = choose_wave(ready, config, number)
    if report.colliding:
        ctx.events.append(
            ScopeCollision(wave=number, action=report.action, lines=tuple(report.lines()))
        )
        ctx.progress.log("; ".join(report.lines()))
    return await record_wave(ctx, wave_plan)


async def record_wave(ctx: WaveContext, wave_plan: Wave) -> WaveRecord:
    """Record ``wave_plan`` in the ledger on a base pinned on the target branch now (its
    tasks leave the queue); a rolling session records each dispatch this way."""
    number = wave_plan.number
    pin = await anyio.to_thread.run_sync(pin_base, ctx.repo)
    target = ctx.state.target_branch
    if pin.branch != target:
        raise GitError(
            f"the session advances {target!r} but {pin.branch!r} is "
            f"checked out; `git switch {target}` and `seawall resume`"
        )
    wave = WaveRecord(
        number=number,
        tasks=list(wave_plan.tasks),
        isolation=wave_plan.isolation,
        enforcement=wave_plan.enforcement,
        max_turns=wave_plan.max_turns,
        isolation_reason=wave_plan.isolation_reason,
        enforcement_reason=wave_plan.enforcement_reason,
        base=pin.commit,
        started_at=round(time.time(), 3),
    )
    ctx.state.waves.append(wave)
    remove_pending(ctx.state, wave_plan.task_ids)
    await ctx.save()
    ctx.events.append(
        WavePlanned(
            wave=number,
            tasks=tuple(wave_plan.task_ids),
            isolation=wave_plan.isolation,
            enforcement=wave_plan.enforcement,
            base=wave.base,
            reason=wave.isolation_reason,
        )
    )
    return wave
