"""The session report as one self-contained HTML page: inline CSS, inline SVG, no script.

Every figure carries a ``data-field`` attribute (and each agent row its wave and task),
so a reader, a browser test or a scraper finds the ledger's numbers without parsing
prose.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from html import escape
from importlib.resources import files
from pathlib import Path

from seawall.report.facts import AgentFacts, IssueFacts, SessionFacts, WaveFacts
from seawall.report.graph import STATUS_COLOURS, rolling_graph_svg, wave_graph_svg
from seawall.state.ledger import AgentRecord, SessionPhase, WaveRecord
from seawall.state.refusals import Refusals
from seawall.state.render import checks_summary, set_aside_for_fixes

__all__ = ["render_page"]


def _css() -> str:
    return files("seawall.report").joinpath("report.css").read_text(encoding="utf-8")


def _status_css() -> str:
    """Each status's colour on its labels, from the one table the graph and legend use."""
    return "".join(f".status.{name} {{ color: {c}; }}\n" for name, c in STATUS_COLOURS.items())


def _clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(ts)) if ts else "—"


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts)) if ts else "—"


def duration(seconds: float) -> str:
    """``0.4s``, ``12.0s``, ``3m 05s``, ``1h 02m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def _num(field: str, value: object, text: str | None = None) -> str:
    shown = escape(text if text is not None else str(value))
    return f'<td class="num" data-field="{field}" data-value="{escape(str(value))}">{shown}</td>'


def _link(path: str, label: str, base: Path) -> str:
    if not path:
        return ""
    target = Path(path)
    try:
        href = os.path.relpath(target, base)
    except ValueError:  # another drive (Windows)
        href = target.as_uri()
    return f'<a href="{escape(href)}">{escape(label)}</a>'


def _items(values: Iterable[str], css: str = "facts") -> str:
    items = [f"<li>{value}</li>" for value in values]
    return f'<ul class="{css}">{"".join(items)}</ul>' if items else ""


def render_page(facts: SessionFacts, *, base: Path) -> str:
    """The page for ``facts``; links are relative to ``base`` (the page's folder)."""
    state = facts.state
    body = [
        f"<h1>Session <code>{escape(state.session)}</code></h1>",
        f'<p class="meta">plan <code>{escape(state.plan_path or "(embedded)")}</code> · '
        f"target <code>{escape(state.target_branch)}</code> from "
        f"<code>{escape(state.start_commit[:12])}</code> · started {_when(state.created_at)} · "
        f"updated {_when(state.updated_at)}</p>",
        _banner(facts),
        _totals(facts),
        f'<h2>Wave graph</h2><div class="graph" id="wave-graph">{_graph(facts)}</div>',
        _legend(),
    ]
    body += [_wave(wave, base, facts.issues) for wave in facts.waves]
    body.append(_tasks(facts))
    body.append(
        f"<footer>Rendered from <code>state.json</code> and <code>events.jsonl</code> of "
        f"session {escape(state.session)}. A status marked * was inferred (no STATUS line)."
        "</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>seawall · {escape(state.session)}</title><style>{_css()}{_status_css()}</style>"
        "</head>"
        f'<body data-session="{escape(state.session)}" data-phase="{escape(_phase(facts))}">'
        + "\n".join(part for part in body if part)
        + "</body></html>\n"
    )


def _graph(facts: SessionFacts) -> str:
    """The wave graph, or a rolling session's schedule (a lane per dispatch)."""
    if facts.state.schedule == "rolling":
        return rolling_graph_svg(facts.waves)
    return wave_graph_svg(facts.waves)


def _phase(facts: SessionFacts) -> str:
    return facts.phase_label


def _banner(facts: SessionFacts) -> str:
    state, phase = facts.state, _phase(facts)
    lines = [f"<strong>{escape(phase)}</strong>"]
    if phase == "interrupted":
        lines.append("the coordinator is gone; run <code>seawall resume</code> to finish it")
    breaker = state.breaker
    if breaker is not None and breaker.tripped and state.phase is SessionPhase.HALTED:
        lines.append(
            f"breaker <code>{escape(str(breaker.trigger))}</code>: "
            f"{escape(str(breaker.detail))} · next: fix the cause, then "
            "<code>seawall resume</code>, or <code>seawall kill</code>"
        )
    if state.halt is not None:
        lines.append(
            f"halted ({escape(state.halt.reason)}): "
            f"{escape(state.halt.detail)} · next: "
            f"{escape(state.halt.next or 'seawall resume')}"
        )
    if state.pending:
        pending = ", ".join(escape(task.id) for task in state.pending)
        lines.append(f"pending: {pending}")
    css = phase if phase in ("halted", "interrupted", "killed", "done") else "running"
    return f'<div class="banner {css}" id="phase">{" · ".join(lines)}</div>'


def _totals(facts: SessionFacts) -> str:
    t = facts.totals
    numbers = ", ".join(f"#{n}" for n in t.issues)
    issues = ", ".join(_issue(facts.issues, n, f"#{n}") for n in t.issues) or "none"
    head = (
        "<tr><th>waves</th><th>agents</th><th>succeeded</th><th>merged</th><th>turns</th>"
        "<th>tool calls</th><th>tokens</th><th>cost</th><th>wall clock</th><th>conflicts</th>"
        "<th>hard trips</th><th>soft trips</th><th>carryover issues</th></tr>"
    )
    row = "".join(
        [
            _num("waves", len(facts.waves)),
            _num("agents", t.agents),
            _num("succeeded", t.succeeded),
            _num("merged", t.merged),
            _num("turns", t.turns),
            _num("tool_calls", t.tool_calls),
            _num("tokens", t.tokens, _tokens_text(t.tokens, t.cached_tokens)),
            _num("cost_usd", f"{t.cost_usd:.2f}", f"${t.cost_usd:.2f}"),
            _num("wall_s", round(t.wall_s, 1), duration(t.wall_s)),
            _num("conflicts", t.conflicts),
            _num("hard_trips", t.hard_trips),
            _num("soft_trips", t.soft_trips),
            f'<td data-field="issues" data-value="{escape(numbers)}">{issues}</td>',
        ]
    )
    return (
        '<h2>Totals</h2><div class="scroll"><table class="totals" id="totals">'
        f"{head}<tr>{row}</tr></table></div>"
    )


def _legend() -> str:
    chips = "".join(
        f'<span class="chip" data-status="{escape(status)}"><span style="color:{colour}">■</span>'
        f" {escape(status)}</span> "
        for status, colour in STATUS_COLOURS.items()
    )
    return (
        f'<p class="meta legend" id="legend">{chips}· dashed: a dependency · solid: the next '
        "attempt</p>"
    )


def _wave(wave: WaveFacts, base: Path, issues: Mapping[int, IssueFacts]) -> str:
    record = wave.record
    facts = [
        f"isolation <code>{escape(record.isolation)}</code> ({escape(record.isolation_reason)})",
        f"enforcement <code>{escape(record.enforcement)}</code> "
        f"({escape(record.enforcement_reason)})",
        f"base <code>{escape(record.base[:12])}</code> → "
        f"<code>{escape((record.target_after or record.integration or '')[:12] or '—')}</code>",
        f"{_clock(record.started_at)} – {_clock(record.finished_at)}",
    ]
    if record.fallback:
        facts.append(f"worktree fallback: {escape(record.fallback)}")
    facts.append("merged: " + (", ".join(_id(t) for t in wave.merged) or "nothing"))
    facts += [
        f"conflict <code>{escape(r.path)}</code>: {escape(r.rule)} ({escape(', '.join(r.agents))})"
        for r in record.resolutions
    ]
    facts += [f"dropped {_id(d.task)}: {escape(d.reason)}" for d in record.dropped]
    facts.append(_checks(record))
    if record.fix_tasks:
        facts.append("fix tasks queued: " + ", ".join(map(_id, record.fix_tasks)))
    facts += [
        f'<span data-field="set_aside">{escape(path)}</span>: {escape(what)}'
        for path, what in wave.set_aside
    ]
    span = (min((a.started_at for a in wave.agents if a.started_at), default=0.0), 0.0)
    end = max([record.finished_at, *(a.finished_at for a in wave.agents)], default=0.0)
    window = (span[0] or record.started_at, end)
    head = (
        "<tr><th>agent</th><th>status</th><th>timeline</th><th>start</th><th>end</th>"
        '<th class="num">time</th><th class="num">turns</th><th class="num">tool calls</th>'
        '<th class="num">tokens</th><th class="num">cost</th><th>trips · findings</th>'
        "<th>merge · issue</th><th>files</th></tr>"
    )
    rows = "".join(_agent_row(agent, record, window, base, issues) for agent in wave.agents)
    return (
        f'<section class="wave" id="wave-{record.number}" data-wave="{record.number}">'
        f"<h2>Wave {record.number} · {escape(str(record.phase))}</h2>{_items(facts)}"
        f'<div class="scroll"><table>{head}{rows}</table></div></section>'
    )


def _checks(record: WaveRecord) -> str:
    summary = checks_summary(record)
    if summary is None:
        return "checks: none ran"
    return f'checks: <span data-field="checks">{escape(summary)}</span>'


def _agent_row(
    agent: AgentFacts,
    wave: WaveRecord,
    window: tuple[float, float],
    base: Path,
    issues: Mapping[int, IssueFacts],
) -> str:
    record = agent.record
    status = escape(agent.status)
    mark = (
        f' <span class="inferred" title="{escape(record.reason)}">* inferred</span>'
        if record.inferred
        else ""
    )
    why = f'<div class="evidence">{escape(record.summary or record.reason)}</div>'
    trips = []
    if record.trip:
        trips.append(
            f"<strong>{escape(record.trip.kind.label)}</strong>"
            f'<div class="evidence">{escape(record.trip.evidence)}</div>'
        )
    soft = record.run.soft_trips if record.run is not None else ()
    trips += [
        f'<span class="soft">soft: {escape(trip.kind.label)}</span>'
        f'<div class="evidence">{escape(trip.evidence)} (a nudge; not stopped)</div>'
        for trip in soft
    ]
    if record.spiral and record.spiral.summary:
        trips.append(f"spiral: {escape(record.spiral.summary)}")
    trips += [f"{escape(f.pattern)}: {escape(f.evidence)}" for f in record.findings]
    trips += [f"out of scope: <code>{escape(v)}</code>" for v in record.scope_violations]
    trips += _refusals(record)
    merge = ["merged" if record.merged else "not merged"]
    merge += [
        f"{_path(r.path)} set aside for fix task {_id(r.fix_task or '')} (kept: {escape(r.kept)})"
        for r in set_aside_for_fixes(wave, record.task)
    ]
    if record.issue is not None:
        label = f"{'existing' if record.issue.existing else 'issue'} #{record.issue.number}"
        merge.append(_issue(issues, record.issue.number, label, record.issue.url))
    if record.recovery:
        merge.append(escape(record.recovery))
    links = [
        _link(record.transcript, "transcript", base),
        _link(agent.diff, "diff", base),
    ]
    links += [_path(path) for path in record.touched]
    return (
        f'<tr class="agent" data-wave="{agent.wave}" data-task="{escape(agent.task)}" '
        f'data-status="{status}"><td>{_id(agent.task)}</td>'
        f'<td><span class="status {status}">{status}</span>{mark}{why}</td>'
        f"<td>{_bar(agent, window)}</td><td>{_clock(agent.started_at)}</td>"
        f"<td>{_clock(agent.finished_at)}</td>"
        + _num("elapsed_s", record.elapsed_s, duration(record.elapsed_s))
        + _num("turns", record.turns)
        + _num("tool_calls", record.tool_calls)
        + _num("tokens", agent.tokens, _tokens_text(agent.tokens, agent.cached_tokens))
        + _num("cost_usd", f"{record.cost_usd:.2f}", f"${record.cost_usd:.2f}")
        + f"<td>{'<br>'.join(trips) or '—'}</td><td>{' · '.join(merge)}</td>"
        f'<td class="files">{" ".join(link for link in links if link) or "—"}</td></tr>'
    )


def _refusals(record: AgentRecord) -> list[str]:
    """The calls refused to the agent, one line per side that refused (``refused_by``
    ``seawall`` or ``agent-cli``), each saying what to do."""
    if record.run is None:
        return []
    refusals = Refusals.of(record.run)
    sides = (("seawall", refusals.seawall_note()), ("agent-cli", refusals.cli_note()))
    return [
        f'<div class="evidence" data-field="refused_by" data-value="{side}">{escape(note)}</div>'
        for side, note in sides
        if note
    ]


def _link_or_text(url: str, label: str) -> str:
    if url.startswith(("http://", "https://", "file://")):
        return f'<a href="{escape(url)}">{escape(label)}</a>'
    return escape(label)


def _bar(agent: AgentFacts, window: tuple[float, float]) -> str:
    start, end = window
    span = end - start
    if span <= 0 or not agent.started_at or not agent.finished_at:
        return '<div class="timeline"></div>'
    left = max(0.0, (agent.started_at - start) / span * 100)
    width = max(0.5, (agent.finished_at - agent.started_at) / span * 100)
    colour = STATUS_COLOURS.get(agent.status, STATUS_COLOURS["running"])
    return (
        f'<div class="timeline"><div class="bar" style="left:{left:.1f}%;'
        f'width:{min(width, 100 - left):.1f}%;background:{colour}"></div></div>'
    )


def _tasks(facts: SessionFacts) -> str:
    rows = []
    for task in sorted(facts.state.tasks.values(), key=lambda t: t.id):
        issue = (
            "—"
            if task.issue is None
            else _issue(facts.issues, task.issue.number, f"#{task.issue.number}", task.issue.url)
        )
        status = escape(task.status or "pending")
        rows.append(
            f'<tr class="task" data-task="{escape(task.id)}"><td>{_id(task.id)}</td>'
            f'<td><span class="status {status}">{status}</span></td>'
            + _num("attempts", task.attempts)
            + _num("rework", task.rework)
            + f"<td>{issue}</td></tr>"
        )
    head = (
        '<tr><th>task</th><th>status</th><th class="num">attempts</th>'
        '<th class="num">rework</th><th>carryover</th></tr>'
    )
    return (
        f'<h2>Tasks</h2><div class="scroll"><table id="tasks">{head}{"".join(rows)}</table></div>'
    )


def _id(value: str) -> str:
    """A task id, kept on one line however narrow the page."""
    return f'<code class="id">{escape(value)}</code>'


def _path(value: str) -> str:
    """A file path, which may wrap after each ``/`` and nowhere else."""
    return f'<code class="path">{"/<wbr>".join(map(escape, value.split("/")))}</code>'


def _issue(issues: Mapping[int, IssueFacts], number: int, label: str, url: str = "") -> str:
    """A carryover issue: its link and whether it is open or closed."""
    found = issues.get(number) or IssueFacts(number=number, url=url)
    state = found.state
    return (
        f'<span class="issue {state}" data-issue="{number}" data-state="{state}">'
        f"{_link_or_text(found.url or url, label)} "
        f'<span class="issue-state">{state}</span></span>'
    )


def _tokens_text(tokens: int, cached: int) -> str:
    """``4,060 (3,660 cached)``: every token, and the cached input's share when any."""
    return f"{tokens:,} ({cached:,} cached)" if cached else f"{tokens:,}"
