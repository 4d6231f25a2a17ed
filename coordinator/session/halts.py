"""What the merge gate and the dispatch do when the environment, not a task, is at fault.

Failing checks are reported wherever people and lead agents look; a base that fails the
checks itself (``block``) and agents whose program could not start halt the session with
a precise reason, leaving the wave where ``seawall resume`` continues it. A target branch
someone else moved is a normal event: ``seawall resume --rebase`` merges the wave onto
its new tip.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coordinator.state.ledger import SessionPhase, WavePhase, WaveRecord
from coordinator.state.render import checks_line

if TYPE_CHECKING:
    from coordinator.session.steps import WaveSteps

__all__ = ["halt_on_base_checks", "halt_on_start_failures", "rebase_wave", "report_checks"]


def report_checks(steps: WaveSteps, wave: WaveRecord) -> None:
    """Say what the checks came to: an event always, a console line when they failed."""
    checks = wave.checks or {}
    if not checks:
        return
    steps.events.append(
        "checks",
        wave=wave.number,
        policy=checks.get("policy"),
        verdict=checks.get("verdict"),
        commit=checks.get("commit"),
        failure=(checks.get("failure") or {}).get("command"),
        baseline=checks.get("baseline"),
        dropped=[d["task"] for d in wave.dropped],
    )
    line = checks_line(wave)
    if line is not None:
        steps.progress.log(f"wave {wave.number}: {line}")


def halt_on_base_checks(steps: WaveSteps, wave: WaveRecord) -> None:
    """The base fails the checks itself (``block``): nothing of the wave merges and the
    session halts; the wave stays reviewed, so `seawall resume` merges it again."""
    detail = f"wave {wave.number}: {checks_line(wave)}"
    steps.state.phase = SessionPhase.HALTED
    steps.state.halt = {
        "reason": "checks-fail-at-base",
        "detail": detail,
        "wave": wave.number,
        "next": "fix the base (commit the fix, then `seawall resume --rebase`) or the "
        "environment the checks run in (then `seawall resume`)",
    }
    steps.events.append("session_halted", wave=wave.number, reason="checks-fail-at-base")
    steps.progress.log(f"{detail}; halted. Next: {steps.state.halt['next']}")


async def halt_on_start_failures(steps: WaveSteps, wave: WaveRecord) -> bool:
    """Agents that could not start (or died before their first event) are the
    environment's failure, not their task's: the session halts, nothing is filed or
    re-dispatched, and the wave goes back to prepared so `seawall resume` runs just those
    agents again once the program is fixed. False when every agent started."""
    failed = [a for a in wave.agents if a.run and a.run.get("start_failure")]
    if not failed:
        return False
    agents: list[dict[str, Any]] = []
    for record in failed:
        run = record.run or {}
        agents.append(
            {
                "task": record.task,
                "reason": run.get("start_failure", ""),
                "exit_code": run.get("exit_code"),
                "stderr": run.get("stderr_tail", ""),
            }
        )
        steps.events.append("agent_start_failed", wave=wave.number, **agents[-1])
        record.run = None
    first = agents[0]
    detail = f"W{wave.number} {first['task']}: {first['reason']}"
    if len(agents) > 1:
        detail += f" (and {len(agents) - 1} more agent(s))"
    wave.phase = WavePhase.PREPARED
    steps.state.phase = SessionPhase.HALTED
    steps.state.halt = {
        "reason": "agent-start",
        "detail": detail,
        "wave": wave.number,
        "agents": agents,
        "stderr": first["stderr"],
        "next": "fix the agent program (see its stderr), then `seawall resume`",
    }
    steps.events.append("session_halted", wave=wave.number, reason="agent-start")
    steps.progress.log(f"{detail}; halted: the environment's failure, not the task's")
    for agent in agents:
        tail = str(agent["stderr"]).strip() or "(nothing on stderr)"
        steps.progress.log(f"{agent['task']} stderr:\n{tail}")
    await steps.session.save()
    # only once the ledger says the wave is prepared again: a crash before this point
    # finds the run records and halts the same way
    for record in failed:
        steps.run_file(wave, record.task).unlink(missing_ok=True)
    return True


def rebase_wave(steps: WaveSteps, wave: WaveRecord, tip: str) -> None:
    """Merge ``wave`` onto ``tip``, the target branch's new tip, instead of its base: the
    agents' changes against the base are merged onto it (conflicts by the policy, against
    "the target branch"), the checks run there, and the branch moves from ``tip``."""
    steps.events.append(
        "wave_rebased", wave=wave.number, base=wave.base, previous=wave.start, onto=tip
    )
    steps.progress.log(
        f"wave {wave.number}: {steps.state.target_branch} moved from {wave.start[:12]} to "
        f"{tip[:12]}; merging the wave onto the new tip"
    )
    wave.onto = tip
    wave.integration = None
