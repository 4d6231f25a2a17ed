"""The base checked before anyone spends: a session whose checks gate the merge
(``checks_policy = "block"``) runs them on each new base before the first dispatch
from it, and a base that fails halts at once (``checks-fail-at-base``, exit code 7)
with nothing prepared or dispatched.

A base is checked once: one that passed is recorded in the ledger
(``SessionState.green_bases``), and a wave's merge that passed its checks is a green
base for the next wave already, so a session pays one extra run of the checks, at its
start. ``baseline`` (failures the base already has are known, not blocking) and
``warn`` never halt on the base, and do not check it first. After such a halt, the
wave (never prepared) is moved onto the target branch's tip when the user committed
on top of its base (the fix), so ``seawall resume`` checks and dispatches from there.
"""

from __future__ import annotations

import anyio

from seawall.git.checks import run_checks
from seawall.git.repo import open_repository
from seawall.model import CheckFailure, ChecksPolicy, CheckVerdict
from seawall.session.context import WaveContext
from seawall.session.integrate import branch_tip
from seawall.state.ledger import (
    BaselineChecks,
    ChecksRecord,
    Halt,
    HaltReason,
    SessionPhase,
    WaveRecord,
)
from seawall.telemetry import ChecksRun, SessionHalted

__all__ = ["halt_on_red_base"]


async def halt_on_red_base(ctx: WaveContext, wave: WaveRecord) -> bool:
    """Check ``wave``'s base before it is prepared; True (the session halted) when the
    base fails the checks under ``block``. False without checks, under another policy,
    or for a base known to pass."""
    config = ctx.config
    if not config.checks or config.checks_policy is not ChecksPolicy.BLOCK:
        return False
    if wave.checks is not None and wave.checks.verdict is CheckVerdict.BASE_FAILS:
        await anyio.to_thread.run_sync(_follow_user_commits, ctx, wave)  # after that halt
    base = wave.base
    if _known_green(ctx, base):
        return False
    ctx.progress.log(f"wave {wave.number}: checking the base {base[:12]} before dispatch")
    timeout = config.budgets.agent_minutes * 60.0
    run = await anyio.to_thread.run_sync(
        lambda: run_checks(ctx.repo, base, config.checks, timeout=timeout)
    )
    if not run.fails:
        wave.checks = None
        ctx.state.green_bases.append(base)
        await ctx.save()
        return False
    result = run.failure
    failure = (
        CheckFailure(command=result.command, returncode=result.returncode, output=result.output)
        if result is not None
        else None
    )
    wave.checks = ChecksRecord(
        passed=False,
        policy=ChecksPolicy.BLOCK,
        verdict=CheckVerdict.BASE_FAILS,
        runs=1,
        commit=base,
        failure=failure,
        baseline=BaselineChecks(commit=base, failure=failure),
    )
    what = (
        f"`{failure.command}` exits {failure.returncode}"
        if failure is not None
        else "the checks fail"
    )
    detail = (
        f"wave {wave.number}: the checks fail on the base {base[:12]} before any agent ran "
        f"({what}); nothing was dispatched"
    )
    ctx.events.append(
        ChecksRun(
            wave=wave.number,
            policy=ChecksPolicy.BLOCK,
            verdict=CheckVerdict.BASE_FAILS,
            commit=base,
            failure=failure.command if failure else None,
            baseline=wave.checks.baseline,
        )
    )
    ctx.state.phase = SessionPhase.HALTED
    ctx.state.halt = Halt(
        reason=HaltReason.CHECKS_FAIL_AT_BASE,
        detail=detail,
        wave=wave.number,
        next="fix the base (commit the fix on "
        f"{ctx.state.target_branch}, then `seawall resume`) or the environment the checks "
        "run in; when the tasks are meant to make these checks pass, set checks_policy = "
        '"baseline" in [session]',
    )
    ctx.events.append(SessionHalted(wave=wave.number, reason="checks-fail-at-base"))
    ctx.progress.log(f"{detail}; halted. Next: {ctx.state.halt.next}")
    await ctx.save()
    return True


def _known_green(ctx: WaveContext, commit: str) -> bool:
    if commit in ctx.state.green_bases:
        return True
    return any(
        w.checks is not None and w.checks.passed and w.checks.commit == commit
        for w in ctx.state.waves
    )


def _follow_user_commits(ctx: WaveContext, wave: WaveRecord) -> None:
    """A wave not prepared yet starts from the target branch's tip when the user
    committed on top of its base since it was planned."""
    tip = branch_tip(ctx.repo, ctx.state.target_branch)
    if tip is None or tip == wave.base or wave.onto is not None:
        return
    if open_repository(ctx.repo).descendant_of(tip, wave.base):
        wave.base = tip
