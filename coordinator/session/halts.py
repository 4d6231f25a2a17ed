"""What the merge gate and the dispatch do when the environment, not a task, is at fault.

Failing checks are reported wherever people and lead agents look; a base that fails the
checks itself (``block``), agents whose program could not start and a session past its
``budgets.session_minutes`` halt
the session with a precise reason, leaving the wave where ``seawall resume`` continues
it. A target branch
someone else moved is a normal event: ``seawall resume --rebase`` merges the wave onto
its new tip.
"""

from __future__ import annotations

from seawall.session.context import WaveContext
from seawall.state.ledger import (
    Halt,
    HaltedAgent,
    HaltReason,
    SessionPhase,
    WavePhase,
    WaveRecord,
)
from seawall.state.render import checks_line
from seawall.state.runs import AgentRun
from seawall.telemetry import AgentStartFailed, ChecksRun, SessionHalted, WaveRebased

__all__ = [
    "halt_on_base_checks",
    "halt_on_session_time",
    "halt_on_start_failures",
    "rebase_wave",
    "report_checks",
]


def report_checks(ctx: WaveContext, wave: WaveRecord) -> None:
    """Say what the checks came to: an event always, a console line when they failed."""
    checks = wave.checks
    if checks is None:
        return
    ctx.events.append(
        ChecksRun(
            wave=wave.number,
            policy=checks.policy,
            verdict=checks.verdict,
            commit=checks.commit,
            failure=checks.failure.command if checks.failure else None,
            baseline=checks.baseline,
            dropped=tuple(d.task for d in wave.dropped),
        )
    )
    line = checks_line(wave)
    if line is not None:
        ctx.progress.log(f"wave {wave.number}: {line}")


def halt_on_base_checks(ctx: WaveContext, wave: WaveRecord) -> None:
    """The base fails the checks itself (``block``): nothing of the wave merges and the
    session halts; the wave stays reviewed, so `seawall resume` merges it again."""
    detail = f"wave {wave.number}: {checks_line(wave)}"
    ctx.state.phase = SessionPhase.HALTED
    halt = Halt(
        reason=HaltReason.CHECKS_FAIL_AT_BASE,
        detail=detail,
        wave=wave.number,
        next="fix the base (commit the fix, then `seawall resume --rebase`) or the "
        "environment the checks run in (then `seawall resume`)",
    )
    ctx.state.halt = halt
    ctx.events.append(SessionHalted(wave=wave.number, reason="checks-fail-at-base"))
    ctx.progress.log(f"{detail}; halted. Next: {halt.next}")


async def halt_on_start_failures(ctx: WaveContext, wave: WaveRecord) -> bool:
    """Agents that could not start (or died before their first event) are the
    environment's failure, not their task's: the session halts, nothing is filed or
    re-dispatched, and the wave goes back to prepared so `seawall resume` runs just those
    agents again once the program is fixed. False when every agent started."""
    failed = [a for a in wave.agents if a.run and a.run.start_failure]
    if not failed:
        return False
    agents: list[HaltedAgent] = []
    for record in failed:
        run = record.run or AgentRun(task_id=record.task)
        agents.append(
            HaltedAgent(
                task=record.task,
                reason=run.start_failure,
                exit_code=run.exit_code,
                stderr=run.stderr_tail,
            )
        )
        ctx.events.append(
            AgentStartFailed(
                wave=wave.number,
                task=record.task,
                reason=run.start_failure,
                exit_code=run.exit_code,
                stderr=run.stderr_tail,
            )
        )
        record.run = None
    first = agents[0]
    detail = f"W{wave.number} {first.task}: {first.reason}"
    if len(agents) > 1:
        detail += f" (and {len(agents) - 1} more agent(s))"
    wave.phase = WavePhase.PREPARED
    ctx.state.phase = SessionPhase.HALTED
    ctx.state.halt = Halt(
        reason=HaltReason.AGENT_START,
        detail=detail,
        wave=wave.number,
        agents=tuple(agents),
        stderr=first.stderr,
        next="fix the agent program (see its stderr), then `seawall resume`",
    )
    ctx.events.append(SessionHalted(wave=wave.number, reason="agent-start"))
    ctx.progress.log(f"{detail}; halted: the environment's failure, not the task's")
    for agent in agents:
        tail = agent.stderr.strip() or "(nothing on stderr)"
        ctx.progress.log(f"{agent.task} stderr:\n{tail}")
    await ctx.save()
    # only once the ledger says the wave is prepared again: a crash before this point
    # finds the run records and halts the same way
    for record in failed:
        ctx.run_file(wave, record.task).unlink(missing_ok=True)
    return True


def rebase_wave(ctx: WaveContext, wave: WaveRecord, tip: str) -> None:
    """Merge ``wave`` onto ``tip``, the target branch's new tip, instead of its base: the
    agents' changes against the base are merged onto it (conflicts by the policy, against
    "the target branch"), the checks run there, and the branch moves from ``tip``."""
    ctx.events.append(WaveRebased(wave=wave.number, base=wave.base, previous=wave.start, onto=tip))
    ctx.progress.log(
        f"wave {wave.number}: {ctx.state.target_branch} moved from {wave.start[:12]} to "
        f"{tip[:12]}; merging the wave onto the new tip"
    )
    wave.onto = tip
    wave.integration = None


async def halt_on_session_time(ctx: WaveContext, wave: WaveRecord | None) -> bool:
    """Halt before more work starts once the session has run its
    ``budgets.session_minutes`` (see ``seawall.session.clock`` for what is
    counted); False while time is left or without the budget."""
    limit = ctx.config.budgets.session_minutes
    if limit is None:
        return False
    ctx.clock.tick(ctx.state)
    elapsed = ctx.clock.elapsed(ctx.state)
    if elapsed < limit * 60.0:
        return False
    number = wave.number if wave is not None else 0
    where = (
        f"wave {wave.number} is prepared and not dispatched"
        if wave is not None and wave.phase is WavePhase.PREPARED
        else "no new wave was started"
    )
    detail = (
        f"budgets.session_minutes: the session has run {elapsed / 60.0:.1f} of its "
        f"{limit:g} minutes; {where}"
    )
    ctx.state.phase = SessionPhase.HALTED
    halt = Halt(
        reason=HaltReason.SESSION_TIME,
        detail=detail,
        wave=number,
        budget="session_minutes",
        elapsed_s=round(elapsed, 1),
        limit_s=limit * 60.0,
        next=f"`seawall resume` runs it for another {limit:g} minutes, or `seawall kill`",
    )
    ctx.state.halt = halt
    ctx.events.append(
        SessionHalted(
            wave=number,
            reason="session-time",
            elapsed_s=round(elapsed, 1),
            limit_s=limit * 60.0,
        )
    )
    ctx.progress.log(f"{detail}; halted. Next: {halt.next}")
    await ctx.save()
    return True
