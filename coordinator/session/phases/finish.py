"""The end of a session: every spiral or failure without its issue gets one, the
branch is published when the plan asks, and the session is ``done``."""

from __future__ import annotations

import anyio

from seawall.carryover import (
    CarryoverResult,
    LedgerEntry,
    covered_tasks,
    file_missing,
    ledger_entries,
    plan_identity,
)
from seawall.codec import to_data
from seawall.model import Status
from seawall.publishing.pull_request import PublishResult, publish_session, render_summary
from seawall.session.context import WaveContext
from seawall.state.ledger import IssueRef, SessionPhase
from seawall.telemetry import Published, SessionFinished

__all__ = ["finish_session"]


async def finish_session(ctx: WaveContext) -> None:
    """File what is missing, publish, and mark the session done."""
    state = ctx.state
    if _has_unfiled(ctx):

        def file_all() -> list[tuple[LedgerEntry, CarryoverResult]]:
            ledger = to_data(state)
            return file_missing(
                ctx.filer(),
                ledger_entries(ledger),
                plan=plan_identity(ctx.plan),
                covered_tasks=covered_tasks(ledger),
            )

        for entry, result in await anyio.to_thread.run_sync(file_all):
            if result.number is None or result.skipped == "error":
                continue
            ref = IssueRef(number=result.number, url=result.url or "", existing=not result.created)
            state.task(entry.task).issue = ref
            for wave in state.waves:
                if wave.number == entry.wave:
                    wave.agent(entry.task).issue = ref
    if state.pending:
        ctx.progress.log(f"{len(state.pending)} task(s) still pending")
    if ctx.config.publish is not None:
        await _publish(ctx)
    state.phase = SessionPhase.DONE
    await ctx.save()
    ctx.events.append(SessionFinished(cost_usd=state.cost_usd, waves=len(state.waves)))


async def _publish(ctx: WaveContext) -> None:
    """Push the branch and find or open its pull request (idempotent; never raises)."""
    config = ctx.config.publish
    assert config is not None
    state = ctx.state
    summary = render_summary(state)

    def publish() -> PublishResult:
        return publish_session(
            ctx.tracker(),
            config,
            repo=ctx.repo,
            session_dir=ctx.paths.root,
            target_branch=state.target_branch,
            title=config.title or f"seawall: {state.name}",
            summary=summary,
            retry=ctx.retry,
        )

    result = await anyio.to_thread.run_sync(publish)
    request = result.request
    ctx.events.append(
        Published(
            branch=result.branch,
            base=result.base,
            commit=result.commit,
            number=request.number if request else None,
            url=request.url if request else None,
            created=result.created,
            error=result.error,
        )
    )
    if request is not None:
        verb = "opened" if result.created else "found open"
        ctx.progress.log(f"published {result.branch}: {verb} #{request.number} {request.url}")
    else:
        ctx.progress.log(f"warning: publishing {result.branch} failed: {result.error}")


def _has_unfiled(ctx: WaveContext) -> bool:
    state = ctx.state
    return any(
        a.status in (Status.SPIRAL, Status.FAILED)
        and a.issue is None
        and state.task(a.task).issue is None
        and state.task(a.task).status not in (Status.DONE, Status.NO_TESTS_NEEDED)
        for wave in state.waves
        for a in wave.agents
    )
