"""The wave graph as inline SVG: a column per wave, a box per agent, coloured by status.

An arrow joins a task to its next attempt in a later wave (carried forward, re-scoped
or fixed), and a dependency to the task that waited for it. Drawn here, so the report
needs no script and no network.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from seawall.report.facts import WaveFacts

__all__ = ["STATUS_COLOURS", "rolling_graph_svg", "wave_graph_svg"]

# one colour per status, each its own (the legend, the boxes, the bars and the labels)
STATUS_COLOURS = {
    "done": "#2e7d32",
    "no-tests-needed": "#00796b",
    "partial": "#b26a00",
    "failed": "#c62828",
    "spiral": "#6a1b9a",
    "blocked": "#37474f",
    "paused": "#00838f",  # a provider's limit: runs again after the reset
    "running": "#1565c0",
}

_BOX_W, _BOX_H = 180, 40
_COL_GAP, _ROW_GAP = 70, 16
_TOP, _LEFT = 34, 12


def _box(column: int, row: int) -> tuple[int, int]:
    return _LEFT + column * (_BOX_W + _COL_GAP), _TOP + row * (_BOX_H + _ROW_GAP)


def wave_graph_svg(waves: Sequence[WaveFacts]) -> str:
    """The SVG element (no XML prolog) for ``waves``; an empty session draws a note."""
    if not waves:
        return (
            '<svg role="img" width="240" height="40">'
            '<text x="8" y="24">no wave has run yet</text></svg>'
        )
    where: dict[tuple[int, str], tuple[int, int]] = {}
    parts: list[str] = []
    for column, wave in enumerate(waves):
        x, _ = _box(column, 0)
        parts.append(
            f'<text class="wave-title" x="{x}" y="{_TOP - 12}">Wave {wave.number} '
            f"({escape(wave.record.isolation)})</text>"
        )
        for row, agent in enumerate(wave.agents):
            where[(column, agent.task)] = _box(column, row)
    edges = _edges(waves, where)
    for column, wave in enumerate(waves):
        for agent in wave.agents:
            x, y = where[(column, agent.task)]
            colour = STATUS_COLOURS.get(agent.status, STATUS_COLOURS["running"])
            mark = "*" if agent.record.inferred else ""
            label = escape(f"{agent.task}: {agent.status}{mark}")
            parts.append(
                f'<g class="node" data-wave="{wave.number}" data-task="{escape(agent.task)}">'
                f"<title>{escape(agent.task)} · wave {wave.number} · {escape(agent.status)}</title>"
                f'<rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="6" '
                f'fill="{colour}"/>'
                f'<text x="{x + 8}" y="{y + 25}">{label}</text></g>'
            )
    rows = max(len(w.agents) for w in waves)
    width = _LEFT * 2 + len(waves) * _BOX_W + (len(waves) - 1) * _COL_GAP
    height = _TOP + rows * (_BOX_H + _ROW_GAP) + 8
    return (
        f'<svg role="img" aria-label="wave graph" '
        f'class="wave-graph" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>'
        "</defs>" + "".join(edges) + "".join(parts) + "</svg>"
    )


def _edges(waves: Sequence[WaveFacts], where: dict[tuple[int, str], tuple[int, int]]) -> list[str]:
    """Arrows: a task's previous attempt to this one, and each dependency to its dependant."""
    out: list[str] = []
    last_seen: dict[str, int] = {}
    for column, wave in enumerate(waves):
        depends = {task.id: list(task.depends_on) for task in wave.record.tasks}
        for agent in wave.agents:
            sources = [(agent.task, "retry")] if agent.task in last_seen else []
            sources += [(dep, "dep") for dep in depends.get(agent.task, ()) if dep in last_seen]
            for source, kind in sources:
                x1, y1 = where[(last_seen[source], source)]
                x2, y2 = where[(column, agent.task)]
                out.append(
                    f'<line class="edge {kind}" x1="{x1 + _BOX_W}" y1="{y1 + _BOX_H // 2}" '
                    f'x2="{x2 - 2}" y2="{y2 + _BOX_H // 2}" marker-end="url(#arrow)"/>'
                )
        for agent in wave.agents:
            last_seen[agent.task] = column
    return out


_LABEL_W, _PLOT_W, _LANE_H = 200, 640, 22


def rolling_graph_svg(waves: Sequence[WaveFacts]) -> str:
    """A rolling session's schedule as inline SVG: a lane per dispatch, in the order
    they started, on one time axis; the agent's run as a bar coloured by status, the
    wait for its landing as a thin line, its merge as a tick."""
    runs = [(w, a) for w in waves for a in w.agents if w.record.started_at]
    if not runs:
        return wave_graph_svg(waves)
    start = min(w.record.started_at for w, _ in runs)
    end = max(
        max(w.record.merged_at, w.record.ended_at, w.record.finished_at, w.record.started_at)
        for w, _ in runs
    )
    span = max(end - start, 1e-6)

    def x(ts: float) -> float:
        return _LABEL_W + (ts - start) / span * _PLOT_W

    parts: list[str] = []
    for lane, (wave, agent) in enumerate(runs):
        record = wave.record
        y = _TOP + lane * _LANE_H
        colour = STATUS_COLOURS.get(agent.status, STATUS_COLOURS["running"])
        ended = record.ended_at or end
        title = (
            f"{agent.task} · W{wave.number} · {agent.status} · {ended - record.started_at:.1f} s"
        )
        if record.merged_at:
            title += f" · merged {record.merged_at - ended:.1f} s after"
        parts.append(
            f'<g class="lane" data-wave="{wave.number}" data-task="{escape(agent.task)}">'
            f"<title>{escape(title)}</title>"
            f'<text x="{_LEFT}" y="{y + 15}">W{wave.number} {escape(agent.task)}</text>'
            f'<rect x="{x(record.started_at):.1f}" y="{y + 4}" '
            f'width="{max(x(ended) - x(record.started_at), 1.0):.1f}" height="14" rx="3" '
            f'fill="{colour}"/>'
        )
        if record.merged_at:
            parts.append(
                f'<line class="landing" x1="{x(ended):.1f}" y1="{y + 11}" '
                f'x2="{x(record.merged_at):.1f}" y2="{y + 11}" stroke="#555"/>'
                f'<line class="merged" x1="{x(record.merged_at):.1f}" y1="{y + 2}" '
                f'x2="{x(record.merged_at):.1f}" y2="{y + 20}" stroke="#000" stroke-width="2"/>'
            )
        parts.append("</g>")
    width = _LABEL_W + _PLOT_W + _LEFT * 2
    height = _TOP + len(runs) * _LANE_H + 8
    return (
        f'<svg role="img" aria-label="rolling schedule" class="wave-graph rolling" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f'<text class="wave-title" x="{_LABEL_W}" y="{_TOP - 12}">rolling schedule, '
        f"{span:.1f} s: run, wait to land, merge</text>" + "".join(parts) + "</svg>"
    )
