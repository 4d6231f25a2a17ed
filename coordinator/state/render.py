"""STATE.md: the ledger rendered for people. ``state.json`` is the truth: STATE.md is
never read back as data (a resume reuses its wave sections only where digests prove
them current, see ``state.sections``).

A status the agent did not report (no STATUS line) is marked ``*`` with the ground it
was inferred on. The wave graph and the per-agent timeline are in the HTML report
(``seawall report``); STATE.md stays plain text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from seawall.model import CheckVerdict, Enforcement, Task
from seawall.state.ledger import (
    AdoptedRecord,
    AgentRecord,
    Resolution,
    SessionState,
    SetAsideRecord,
    WaveRecord,
)
from seawall.state.refusals import Refusals
from seawall.state.runs import AgentRun

__all__ = [
    "adopted_lines",
    "agent_figures",
    "checks_line",
    "checks_summary",
    "history_line",
    "merge_outcome",
    "pending_note",
    "refused_write",
    "render_state_md",
    "run_notes",
    "scope_notes",
    "set_aside",
    "set_aside_for_fixes",
    "trip_counts",
    "trips_line",
    "wave_history",
    "wave_section",
]


def agent_figures(agent: AgentRecord) -> str:
    """``4 turns · 3 tool calls · 4,060 tokens (3,660 cached) · $0.04 · 12.0s``: what
    the agent spent (tokens when its runner reported any: all of them, cached input
    included, with the cached share), after ``model NAME · `` when the task names the
    models of its attempts."""
    model = f"model {agent.model} · " if agent.model else ""
    return (
        f"{model}{agent.turns} turns · {agent.tool_calls} tool calls · {_tokens(agent)}"
        f"${agent.cost_usd:.2f} · {agent.elapsed_s:.1f}s"
    )


def _tokens(agent: AgentRecord) -> str:
    if not agent.tokens:
        return ""
    cached = f" ({agent.cached_tokens:,} cached)" if agent.cached_tokens else ""
    return f"{agent.tokens:,} tokens{cached} · "


def history_line(wave: WaveRecord, agent: AgentRecord, *, interrupted: bool = False) -> str:
    """One Wave History line: ``- W2 · api-auth · SPIRAL (src/auth.py changed 4×) · merged
    · 5 turns · 4 tool calls · $0.09 · 0.1s → issue #12``; an inferred status is ``DONE*``."""
    unknown = "interrupted" if interrupted else "running"
    status = (agent.status or unknown).upper() + ("*" if agent.inferred else "")
    detail = ""
    if agent.spiral and agent.spiral.summary:
        detail = f" ({agent.spiral.summary})"
    elif agent.trip:
        detail = f" ({agent.trip.kind.label}: {agent.trip.evidence})"
    elif agent.status == "paused":
        detail = f" ({_one_line(agent.reason)})"
    elif agent.status == "partial" and agent.remaining:
        detail = f" (remaining: {_one_line(agent.remaining)})"
    elif agent.status == "failed" and (agent.summary or agent.error_signature):
        detail = f" ({_one_line(agent.summary or agent.error_signature)})"
    elif agent.summary:
        detail = f" — {_one_line(agent.summary)}"
    suffix = f" {agent.issue.suffix()}" if agent.issue else ""
    outcome = merge_outcome(wave, agent)
    merged = f" · {outcome}" if outcome else ""
    recovery = f" · {agent.recovery}" if agent.recovery else ""
    figures = f" · {agent_figures(agent)}" if agent.status else ""
    line = f"- W{wave.number} · {agent.task} · {status}{detail}{merged}{recovery}{figures}{suffix}"
    notes = [*scope_notes(wave, agent), *run_notes(agent.run)]
    return "\n".join([line, *(f"  - {note}" for note in notes)])


def scope_notes(wave: WaveRecord, agent: AgentRecord) -> list[str]:
    """The files an agent changed outside its scope and what became of them: merged with
    a warning (``warn``), or left out of the merge (``strict``); said on the console and
    in STATE.md, not only in events.jsonl and the report."""
    if not agent.scope_violations:
        return []
    shown = ", ".join(f"`{p}`" for p in agent.scope_violations[:5])
    more = f" and {len(agent.scope_violations) - 5} more" if len(agent.scope_violations) > 5 else ""
    if wave.enforcement is Enforcement.WARN:
        fate = "merged with a warning (enforcement warn): review them"
    elif wave.enforcement is Enforcement.STRICT:
        fate = "left out of the merge (enforcement strict)"
    else:
        fate = "merged (enforcement off)"
    return [f"out of scope: {shown}{more}: {fate}"]


def set_aside_for_fixes(wave: WaveRecord, task: str) -> list[Resolution]:
    """The conflicts of ``wave`` in which ``task``'s version was set aside, each naming the
    fix task the wave queued for it: the part of its work the merge did not take."""
    return [
        r
        for r in wave.resolutions
        if r.fix_task is not None
        and r.fix_task in wave.fix_tasks
        and task in r.agents
        and r.kept != task
    ]


def merge_outcome(wave: WaveRecord, agent: AgentRecord) -> str:
    """What the merge took of the agent's work: ``merged``; ``""`` (nothing); or, when
    some was set aside, which files, for which fix task, and whose version stayed, e.g.
    ``not merged: `docs/api.md` set aside for fix task docs-auth-fix-w2 (kept:
    docs-api)``."""
    aside = set_aside_for_fixes(wave, agent.task)
    if not aside:
        return "merged" if agent.merged else ""
    paths = ", ".join(f"`{r.path}`" for r in aside[:5]) + (" ..." if len(aside) > 5 else "")
    fixes = ", ".join(dict.fromkeys(r.fix_task or "" for r in aside))
    kept = ", ".join(dict.fromkeys(r.kept for r in aside))
    lead = "merged, except" if agent.merged else "not merged:"
    return f"{lead} {paths} set aside for fix task {fixes} (kept: {kept})"


def run_notes(run: AgentRun | None) -> list[str]:
    """What a run record says about how the agent ended that its status does not: the
    calls refused to it, told apart by who refused them (seawall's scope, command policy
    or breakers, or the CLI's own permission layer; ``state.refusals``), each with what
    to do, and the tail of its stderr when it exited non-zero. One line each, for the
    console, STATE.md, the report and carryover bodies."""
    notes: list[str] = []
    if run is None:
        return notes
    if run.continued:
        notes.append(f"continued its conversation {run.continued}")
    if run.not_continued:
        notes.append(f"{run.not_continued}; started afresh with the carry-forward prompt")
    notes += [
        f"soft trip {trip.kind.label} ({trip.count:g}/{trip.limit:g}): {trip.evidence}; "
        "a nudge to run the check, the agent was not stopped"
        for trip in run.soft_trips
    ]
    notes += Refusals.of(run).notes()
    tail = run.stderr_tail.strip()
    code = run.exit_code
    refused = refused_write(tail)
    if refused:
        notes.append(
            f"a write was refused ({_one_line(refused, 160)}): agents may write only their "
            "task's `scope` in the repository, and outside it only the plan's "
            "`sandbox_writable` paths; widen the task's `scope`, or add the folder to "
            "`[session] sandbox_writable` (see docs/scope.md)"
        )
    if tail and code is not None and code != 0:  # a clean or stopped end: stderr is noise
        lines = [line for line in tail.splitlines() if line.strip()][-3:]
        notes.append(f"stderr (exit {code}): " + " ⏎ ".join(_one_line(x, 160) for x in lines))
    return notes


_REFUSED = ("EACCES", "EROFS", "Permission denied", "Read-only file system")


def refused_write(stderr: str) -> str:
    """The last line of an agent's ``stderr`` that says a write was refused (the kernel's
    sandbox answers a write out of bounds with EACCES or EROFS); "" when none does."""
    for line in reversed(stderr.splitlines()):
        if any(mark in line for mark in _REFUSED):
            return line.strip()
    return ""


def _one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render_state_md(
    state: SessionState,
    *,
    interrupted: bool = False,
    sections: Callable[[list[WaveRecord], bool], tuple[list[str], bool]] | None = None,
) -> str:
    """STATE.md of ``state``; ``interrupted`` when it is recorded as running but no
    coordinator holds its lock any more (the phase then says so, with the way on).
    ``sections`` renders the Wave History as ``wave_history`` does
    (``state.sections.SectionMemo.history`` reuses what did not change)."""
    phase = "interrupted: run `seawall resume`" if interrupted else str(state.phase)
    lines = [
        f"# Session {state.session}",
        "",
        f"- plan: `{state.plan_path}`" if state.plan_path else "- plan: (embedded)",
        f"- target branch: `{state.target_branch}` (started at `{state.start_commit[:12]}`)",
        f"- phase: **{phase}**",
        f"- spend: ${state.cost_usd:.2f}{_session_tokens(state)}",
        "- report: `report.html` next to this file (`seawall report` writes it)",
    ]
    trips = trips_line(agent for wave in state.waves for agent in wave.agents)
    if trips:
        lines.insert(-1, f"- breaker trips: {trips}")
    breaker = state.breaker
    if breaker is not None and breaker.tripped and str(state.phase) == "halted":
        lines += [
            "",
            "## Breaker tripped",
            "",
            f"- trigger: {breaker.trigger}",
            f"- detail: {breaker.detail}",
            "- next: fix the cause, then `seawall resume`, or `seawall kill` to end the session",
        ]
    if state.halt is not None:
        lines += [
            "",
            "## Halted",
            "",
            f"- reason: {state.halt.reason}",
            f"- detail: {state.halt.detail}",
            f"- next: {state.halt.next or '`seawall resume` when the cause is gone'}",
        ]
        if state.halt.stderr:
            lines += ["", "```", state.halt.stderr.rstrip(), "```"]
    lines += ["", "## Wave History", ""]
    if not state.waves:
        lines.append("(no wave has run yet)")
    history, inferred = (sections or wave_history)(state.waves, interrupted)
    lines += history
    if state.pending:
        lines += ["## Pending", ""]
        for task in state.pending:
            note = pending_note(state, task)
            lines.append(f"- {task.id} ({task.kind})" + (f" · {note}" if note else ""))
        lines.append("")
    if inferred:
        lines += ["\\* inferred: the agent wrote no STATUS line; the ground is given above.", ""]
    return "\n".join(lines)


def wave_history(waves: list[WaveRecord], interrupted: bool) -> tuple[list[str], bool]:
    """The lines of the Wave History (each wave's section), and whether any agent's
    status in it was inferred."""
    lines: list[str] = []
    for wave in waves:
        lines.extend(wave_section(wave, interrupted=interrupted))
    return lines, any(agent.inferred for wave in waves for agent in wave.agents)


def wave_section(wave: WaveRecord, *, interrupted: bool = False) -> list[str]:
    """The lines of one wave in STATE.md's Wave History."""
    lines = [f"### Wave {wave.number} · {wave.isolation} · {wave.enforcement} · {wave.phase}"]
    if wave.fallback:
        lines.append(f"> worktree fallback: {wave.fallback}")
    lines.append("")
    lines.extend(history_line(wave, a, interrupted=interrupted) for a in wave.agents)
    timeline = timeline_line(wave)
    if timeline:
        lines.append(timeline)
    lines.extend(_wave_details(wave))
    for resolution in wave.resolutions:
        lines.append(
            f"  - conflict `{resolution.path}`: {resolution.rule} ({', '.join(resolution.agents)})"
        )
    for dropped in wave.dropped:
        lines.append(f"  - dropped `{dropped.task}`: {dropped.reason}")
    checks = checks_summary(wave)
    if checks:
        lines.append(f"  - checks: {checks}")
    if wave.adopted is not None:
        named = ", ".join(f"`{p}`" for p in (*wave.adopted.files, *wave.adopted.ignored)[:20])
        lines.append(
            f"  - your files in the agents' scopes, copied to `{wave.adopted.ref}` before "
            f"dispatch: {named}; restore: `{wave.adopted.restore}`"
        )
    lines.extend(_set_aside_lines(wave.set_aside))
    lines.append("")
    return lines


def timeline_line(wave: WaveRecord) -> str | None:
    """When the wave's agents started and ended and its work landed (UTC), once they
    ended: a rolling session's timeline, one dispatch per record."""
    if not wave.ended_at:
        return None
    parts = [f"started {_utc(wave.started_at)}", f"ended {_utc(wave.ended_at)}"]
    parts[-1] += f" ({wave.ended_at - wave.started_at:.1f} s)"
    if wave.merged_at:
        parts.append(f"merged {_utc(wave.merged_at)}")
    return "  - timeline: " + " · ".join(parts)


def _utc(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(ts)) if ts else "?"


def _wave_details(wave: WaveRecord) -> list[str]:
    """The indented lines under a wave's agents: the ground of each inferred status."""
    return [
        f"  - {agent.task}: inferred ({agent.reason})"
        for agent in wave.agents
        if agent.inferred and agent.reason
    ]


def checks_summary(wave: WaveRecord) -> str | None:
    """A wave's check results in a few words; None when no check ran."""
    if not wave.checks:
        return None
    return checks_line(wave) or str(wave.checks.verdict)


def checks_line(wave: WaveRecord) -> str | None:
    """One line on a wave's checks for the console and STATE.md; None when they passed
    (or there are none)."""
    checks = wave.checks
    if checks is None:
        return None
    verdict = checks.verdict
    failure = checks.failure
    what = (
        f"`{failure.command}` exits {failure.returncode}"
        if failure is not None
        else "the checks fail"
    )
    if verdict is CheckVerdict.FAILED_MERGED:
        return f'merged with failing checks ({what}) under checks_policy = "warn"'
    if verdict is CheckVerdict.KNOWN_FAILURES:
        return (
            f"merged with failing checks ({what}): the base {wave.base[:12]} fails them "
            'the same way (checks_policy = "baseline")'
        )
    if verdict is CheckVerdict.BASE_FAILS:
        return (
            f"not merged: the checks fail on the wave base {wave.base[:12]} too ({what}; "
            'checks_policy = "block")'
        )
    if checks.no_tests:
        return "the checks found no tests to run"
    return None


def pending_note(state: SessionState, task: Task) -> str:
    """Why a pending task is not running yet or runs short of what it was given: the
    dependencies it waits for (each being retried, with why) and those that were
    abandoned (it runs without them); "" when it waits for nothing."""
    pending = {t.id for t in state.pending}
    waits: list[str] = []
    without: list[str] = []
    for dep in task.depends_on:
        record = state.tasks.get(dep)
        running = _running_in(state, dep)
        if dep in pending:
            last = _last_recovery(state, dep)
            waits.append(f"{dep} ({last})" if last else dep)
        elif running:
            waits.append(f"{dep} (running in W{running})")
        elif record is not None and record.abandoned:
            issue = f", issue #{record.issue.number}" if record.issue else ""
            without.append(f"{dep} (not completed{issue})")
    parts = []
    if waits:
        parts.append("waits for " + ", ".join(waits))
    if without:
        parts.append("will run without " + ", ".join(without))
    return "; ".join(parts)


def _running_in(state: SessionState, task: str) -> int | None:
    """The wave ``task`` is running in now (its wave not done, no status yet), if any."""
    for wave in reversed(state.waves):
        if str(wave.phase) == "done":
            continue
        if any(a.task == task and a.status is None for a in wave.agents):
            return wave.number
    return None


def _last_recovery(state: SessionState, task: str) -> str:
    for wave in reversed(state.waves):
        for agent in wave.agents:
            if agent.task == task and agent.recovery:
                return f"W{wave.number}: {agent.recovery}"
    return ""


def trip_counts(agents: Iterable[AgentRecord]) -> tuple[int, int]:
    """``(hard, soft)``: the trips that stopped ``agents`` and the soft ones (a nudge to
    run the check, which stops nothing), counted apart."""
    hard = soft = 0
    for agent in agents:
        hard += agent.trip is not None
        soft += len(agent.run.soft_trips) if agent.run is not None else 0
    return hard, soft


def trips_line(agents: Iterable[AgentRecord]) -> str | None:
    """``1 hard (agents stopped) · 2 soft (nudges to run a check)``; None without any."""
    hard, soft = trip_counts(agents)
    if not hard and not soft:
        return None
    return f"{hard} hard (agents stopped) · {soft} soft (nudges to run a check)"


def _set_aside_lines(aside: SetAsideRecord | None) -> list[str]:
    if aside is None:
        return []
    lines = []
    if aside.files:
        shown = ", ".join(f"`{path}`" for path in aside.files[:20])
        lines.append(
            f"  - set aside on `{aside.ref}` (outside every scope): {shown}; "
            f"restore: `{aside.restore}`"
        )
    if aside.left_in_place:
        shown = ", ".join(f"`{path}`" for path in aside.left_in_place[:20])
        lines.append(f"  - your files changed during the wave, copied to `{aside.ref}`: {shown}")
    if aside.outside_scope:
        shown = ", ".join(f"`{path}`" for path in aside.outside_scope[:20])
        more = " ..." if len(aside.outside_scope) > 20 else ""
        lines.append(
            "  - changed outside every scope by no agent seawall saw (yours, the lead's, a "
            f"tool's), left in place and not merged: {shown}{more}"
        )
    return lines


def adopted_lines(wave: int, adopted: AdoptedRecord) -> list[str]:
    """What the console says of the user's files an in-place wave adopted."""
    named = [*adopted.files, *adopted.ignored]
    shown = ", ".join(named[:10]) + (" ..." if len(named) > 10 else "")
    return [
        f"wave {wave}: your file(s) inside the agents' scopes ({shown}) were copied to "
        f"{adopted.ref} before dispatch; to write the copies back: {adopted.restore}"
    ]


def set_aside(wave: WaveRecord) -> list[tuple[str, str]]:
    """``(path, what became of it)`` for each file a wave set aside (changes no agent may
    own, kept on a ref with the command that restores them) or left in place and copied."""
    aside = wave.set_aside
    found: list[tuple[str, str]] = []
    if wave.adopted is not None:
        what = f"yours, in a scope: copied to {wave.adopted.ref}; restore: {wave.adopted.restore}"
        found += [(p, what) for p in (*wave.adopted.files, *wave.adopted.ignored)]
    if aside is None:
        return found
    found += [(p, f"set aside on {aside.ref}; restore: {aside.restore}") for p in aside.files]
    found += [(p, f"left in place, copied to {aside.ref}") for p in aside.left_in_place]
    found += [
        (p, "changed outside every scope, by no agent seawall saw: left in place")
        for p in aside.outside_scope
    ]
    return found


def _session_tokens(state: SessionState) -> str:
    """`` · 8,120 tokens (7,320 cached)``: every token of the session's agents (what
    ``budgets.tokens`` counts), with the cached input's share; "" when none was reported."""
    agents = [agent for wave in state.waves for agent in wave.agents]
    tokens = sum(agent.tokens for agent in agents)
    if not tokens:
        return ""
    cached = sum(agent.cached_tokens for agent in agents)
    return f" · {tokens:,} tokens" + (f" ({cached:,} cached)" if cached else "")
