"""STATE.md: the ledger rendered for people. Never read back; ``state.json`` is the truth."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from coordinator.state.ledger import AgentRecord, SessionState, WaveRecord

__all__ = ["checks_line", "history_line", "render_state_md", "run_notes"]

_MERMAID_ID = re.compile(r"[^A-Za-z0-9_]")


def history_line(wave: WaveRecord, agent: AgentRecord) -> str:
    """One Wave History line: ``- W2 · api-auth · SPIRAL (src/auth.py changed 4×) → issue #12``."""
    status = (agent.status or "running").upper()
    detail = ""
    if agent.spiral and agent.spiral.get("summary"):
        detail = f" ({agent.spiral['summary']})"
    elif agent.trip:
        detail = f" ({agent.trip.get('breaker', 'breaker')}: {agent.trip.get('detail', '')})"
    elif agent.status == "partial" and agent.remaining:
        detail = f" (remaining: {_one_line(agent.remaining)})"
    elif agent.status == "failed" and (agent.summary or agent.error_signature):
        detail = f" ({_one_line(agent.summary or agent.error_signature)})"
    elif agent.summary:
        detail = f" — {_one_line(agent.summary)}"
    suffix = f" {agent.issue.suffix()}" if agent.issue else ""
    merged = " · merged" if agent.merged else ""
    recovery = f" · {agent.recovery}" if agent.recovery else ""
    line = f"- W{wave.number} · {agent.task} · {status}{detail}{merged}{recovery}{suffix}"
    notes = run_notes(agent.run or {})
    return "\n".join([line, *(f"  - {note}" for note in notes)])


def run_notes(run: Mapping[str, Any]) -> list[str]:
    """What a run record says about how the agent ended that its status does not: the
    calls its CLI's permission layer refused, and the tail of its stderr when it exited
    non-zero. One line each, for the console, STATE.md and carryover bodies."""
    notes: list[str] = []
    denials = [str(d) for d in run.get("denials") or ()]
    if denials:
        shown = ", ".join(_keep_end(d, 80) for d in denials[:5])
        more = f" (+{len(denials) - 5} more)" if len(denials) > 5 else ""
        notes.append(
            f"the agent CLI refused {len(denials)} call(s) without permission: {shown}{more}"
        )
    tail = str(run.get("stderr_tail") or "").strip()
    code = run.get("exit_code")
    if tail and isinstance(code, int) and code != 0:  # a clean or stopped end: stderr is noise
        lines = [line for line in tail.splitlines() if line.strip()][-3:]
        notes.append(f"stderr (exit {code}): " + " ⏎ ".join(_one_line(x, 160) for x in lines))
    return notes


def _keep_end(text: str, limit: int) -> str:
    """``text`` on one line, cut at the front: the end of a path names the file."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head, _, rest = flat.partition(" ")
    return f"{head} …{rest[-(limit - len(head) - 2) :]}" if rest else "…" + flat[-limit:]


def _one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render_state_md(state: SessionState) -> str:
    lines = [
        f"# Session {state.session}",
        "",
        f"- plan: `{state.plan_path}`" if state.plan_path else "- plan: (embedded)",
        f"- target branch: `{state.target_branch}` (started at `{state.start_commit[:12]}`)",
        f"- phase: **{state.phase}**",
        f"- spend: ${state.cost_usd:.2f}",
    ]
    if state.breaker.get("tripped"):
        lines += [
            "",
            "## Breaker tripped",
            "",
            f"- trigger: {state.breaker.get('trigger')}",
            f"- detail: {state.breaker.get('detail')}",
            "- next: fix the cause, then `seawall resume`, or `seawall kill` to end the session",
        ]
    if state.halt:
        lines += [
            "",
            "## Halted",
            "",
            f"- reason: {state.halt.get('reason')}",
            f"- detail: {state.halt.get('detail')}",
            f"- next: {state.halt.get('next') or '`seawall resume` when the cause is gone'}",
        ]
        if state.halt.get("stderr"):
            lines += ["", "```", str(state.halt["stderr"]).rstrip(), "```"]
    lines += ["", "## Wave History", ""]
    if not state.waves:
        lines.append("(no wave has run yet)")
    for wave in state.waves:
        lines.append(
            f"### Wave {wave.number} · {wave.isolation} · {wave.enforcement} · {wave.phase}"
        )
        if wave.fallback:
            lines.append(f"> worktree fallback: {wave.fallback}")
        lines.append("")
        lines.extend(history_line(wave, agent) for agent in wave.agents)
        for resolution in wave.resolutions:
            lines.append(
                f"  - conflict `{resolution.get('path')}`: {resolution.get('rule')} "
                f"({', '.join(resolution.get('agents', []))})"
            )
        for dropped in wave.dropped:
            lines.append(f"  - dropped `{dropped.get('task')}`: {dropped.get('reason')}")
        checks = _checks_line(wave)
        if checks:
            lines.append(f"  - checks: {checks}")
        lines.append("")
    if state.pending:
        lines += ["## Pending", ""]
        lines += [f"- {task['id']} ({task.get('kind', 'implement')})" for task in state.pending]
        lines.append("")
    lines += ["## Waves", "", "```mermaid", "flowchart LR"]
    lines.extend(_mermaid(state))
    lines += ["```", ""]
    return "\n".join(lines)


def _checks_line(wave: WaveRecord) -> str | None:
    if not wave.checks:
        return None
    return checks_line(wave) or str(wave.checks.get("verdict") or "passed")


def checks_line(wave: WaveRecord) -> str | None:
    """One line on a wave's checks for the console and STATE.md; None when they passed
    (or there are none)."""
    checks = wave.checks or {}
    verdict = checks.get("verdict")
    failure = checks.get("failure") or {}
    what = (
        f"`{failure.get('command')}` exits {failure.get('returncode')}"
        if failure
        else "the checks fail"
    )
    if verdict == "failed-merged":
        return f'merged with failing checks ({what}) under checks_policy = "warn"'
    if verdict == "known-failures":
        return (
            f"merged with failing checks ({what}): the base {wave.base[:12]} fails them "
            'the same way (checks_policy = "baseline")'
        )
    if verdict == "base-fails":
        return (
            f"not merged: the checks fail on the wave base {wave.base[:12]} too ({what}; "
            'checks_policy = "block")'
        )
    if checks.get("no_tests"):
        return "the checks found no tests to run"
    return None


def _mermaid(state: SessionState) -> list[str]:
    out: list[str] = []
    previous: str | None = None
    for wave in state.waves:
        wave_id = f"W{wave.number}"
        out.append(f'  subgraph {wave_id}["Wave {wave.number} ({wave.isolation})"]')
        for agent in wave.agents:
            node = _MERMAID_ID.sub("_", f"{wave_id}_{agent.task}")
            out.append(f'    {node}["{agent.task}: {agent.status or "running"}"]')
        out.append("  end")
        if previous:
            out.append(f"  {previous} --> {wave_id}")
        previous = wave_id
    if not out:
        out.append('  empty["no waves yet"]')
    return out
