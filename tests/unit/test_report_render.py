"""What STATE.md and the HTML report show of a ledger: figures per agent, inferred
marks, trips with their evidence, set-aside files, checks, and an interrupted session."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from seawall.breakers.trip import BreakerKind, Trip
from seawall.breakers.wave import WaveTrigger
from seawall.model import CheckVerdict, Enforcement, Isolation, Status, Task
from seawall.report import gather, render_page
from seawall.report.graph import STATUS_COLOURS, wave_graph_svg
from seawall.state.ledger import (
    AgentRecord,
    CheckFailure,
    ChecksRecord,
    IssueRef,
    SessionState,
    SetAsideRecord,
    TaskRecord,
    WaveBreakerState,
    WavePhase,
    WaveRecord,
)
from seawall.state.render import render_state_md
from seawall.state.runs import AgentRun
from seawall.telemetry import (
    AgentFinished,
    CarryoverClosed,
    CarryoverFiled,
    SessionKilled,
    UnknownEvent,
    WaveMerged,
)


def _state() -> SessionState:
    done = AgentRecord(
        task="api",
        status=Status.DONE,
        summary="added the API",
        merged=True,
        turns=7,
        tool_calls=5,
        cost_usd=0.42,
        elapsed_s=61.5,
        transcript="/r/.seawall/s/agents/api/w1-transcript.jsonl",
    )
    inferred = AgentRecord(
        task="db",
        status=Status.FAILED,
        inferred=True,
        reason="no STATUS line; its output ends in an error (changed no files)",
        turns=3,
        tool_calls=9,
        cost_usd=0.1,
        elapsed_s=12.0,
        trip=Trip(kind=BreakerKind.LOOP, evidence="pytest -q", count=3, limit=3, at=0.0),
        issue=IssueRef(number=7, url="https://tracker.invalid/7"),
    )
    wave = WaveRecord(
        number=1,
        tasks=[Task(id="api", prompt=""), Task(id="db", prompt="", depends_on=("api",))],
        isolation=Isolation.NONE,
        enforcement=Enforcement.STRICT,
        max_turns=15,
        base="a" * 40,
        phase=WavePhase.DONE,
        agents=[done, inferred],
        checks=ChecksRecord(
            passed=False,
            verdict=CheckVerdict.FAILED_MERGED,
            failure=CheckFailure(command="pytest -q", returncode=1),
        ),
        started_at=1_800_000_000.0,
        finished_at=1_800_000_070.0,
    )
    wave.set_aside = SetAsideRecord(
        ref="refs/seawall/s-1/set-aside/w1",
        files=("notes.txt",),
        left_in_place=("README.md",),
        restore="seawall restore --wave 1",
    )
    pending = AgentRecord(task="docs")
    retried = AgentRecord(task="db", status=Status.DONE, turns=1, tool_calls=1)
    second = WaveRecord(
        number=2,
        tasks=[Task(id="docs", prompt="", depends_on=("api",)), Task(id="db", prompt="")],
        isolation=Isolation.NONE,
        enforcement=Enforcement.STRICT,
        max_turns=15,
        agents=[pending, retried],
        started_at=1_800_000_080.0,
    )
    return SessionState(
        session="s-1",
        name="n",
        repo="/r",
        target_branch="main",
        start_commit="b" * 40,
        created_at=1_800_000_000.0,
        waves=[wave, second],
        cost_usd=0.52,
        breaker=WaveBreakerState(tripped=True, trigger=WaveTrigger.STALL, detail="no progress"),
    )


def test_state_md_gains_figures_marks_set_aside_files_and_checks() -> None:
    text = render_state_md(_state())
    assert (
        "- W1 · api · DONE — added the API · merged · 7 turns · 5 tool calls · $0.42 · 61.5s"
        in text
    )
    assert "- W1 · db · FAILED* (" in text and "→ issue #7" in text
    assert "  - db: inferred (no STATUS line; its output ends in an error" in text
    assert (
        "  - set aside on `refs/seawall/s-1/set-aside/w1` (outside every scope): `notes.txt`; "
        "restore: `seawall restore --wave 1`" in text
    )
    assert "copied to `refs/seawall/s-1/set-aside/w1`: `README.md`" in text
    assert (
        '  - checks: merged with failing checks (`pytest -q` exits 1) under checks_policy = "warn"'
        in text
    )
    assert "- W2 · docs · RUNNING\n" in text and "```mermaid" not in text
    # a trip recorded on a session that did not halt is no "Breaker tripped" banner
    assert "## Breaker tripped" not in text


def test_state_md_of_an_interrupted_session() -> None:
    text = render_state_md(_state(), interrupted=True)
    assert "- phase: **interrupted: run `seawall resume`**" in text
    assert "- W2 · docs · INTERRUPTED" in text and "RUNNING" not in text


class _Collect(HTMLParser):
    """Every start tag's attributes, and whether the document is well nested."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in {"meta", "br"}:  # the void elements the page writes without "/>"
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()


def test_the_page_holds_the_ledger_and_is_well_formed() -> None:
    state = _state()
    page = render_page(gather(state, interrupted=True), base=Path("/r/.seawall/s"))
    parser = _Collect()
    parser.feed(page)
    assert parser.errors == [] and parser.open == []
    rows = {
        (a["data-wave"], a["data-task"]): a["data-status"]
        for tag, a in parser.tags
        if tag == "tr" and "data-status" in a
    }
    assert rows == {
        ("1", "api"): "done",
        ("1", "db"): "failed",
        ("2", "docs"): "running",
        ("2", "db"): "done",
    }
    table = page.split('id="totals"', 1)[1].split("</table>", 1)[0]
    totals = dict(re.findall(r'data-field="(\w+)" data-value="([^"]*)"', table))
    assert totals["turns"] == "11" and totals["tool_calls"] == "15"
    assert totals["cost_usd"] == "0.52" and totals["agents"] == "4"
    assert 'data-phase="interrupted"' in page and "seawall resume" in page
    assert "* inferred" in page and "pytest -q" in page  # the mark, the trip's evidence
    assert (
        '<span data-field="set_aside">notes.txt</span>: set aside on '
        "refs/seawall/s-1/set-aside/w1; restore: seawall restore --wave 1" in page
    )
    assert "README.md</span>: left in place, copied to refs/seawall/s-1/set-aside/w1" in page
    assert "merged with failing checks (`pytest -q` exits 1)" in page
    assert 'href="agents/api/w1-transcript.jsonl"' in page  # relative to the page
    assert 'href="https://tracker.invalid/7"' in page


def test_text_from_the_ledger_is_escaped() -> None:
    state = _state()
    state.waves[0].agents[0].summary = "<script>alert(1)</script>"
    page = render_page(gather(state), base=Path("/r"))
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_the_graph_draws_every_agent_and_the_edges_between_waves() -> None:
    facts = gather(_state())
    svg = wave_graph_svg(facts.waves)
    assert len(re.findall(r'<g class="node"', svg)) == 4
    assert svg.count('class="edge dep"') == 1  # docs (wave 2) waited for api (wave 1)
    assert svg.count('class="edge retry"') == 1  # db again in wave 2
    assert "no wave has run yet" in wave_graph_svg(())


def test_the_telemetry_says_when_each_agent_finished_and_what_merged() -> None:
    events = (
        AgentFinished(wave=1, agent="api", ts=1_800_000_050.0),
        AgentFinished(wave=1, agent=None, ts=1_800_000_060.0),  # a hook without a task
        WaveMerged(wave=1, integration="c" * 40, merged=("api", "db")),
        SessionKilled(ts=1_800_000_090.0),
        UnknownEvent(event="deployed", data={"where": "prod"}),
    )
    facts = gather(_state(), events)
    api, db = facts.waves[0].agents
    assert (api.finished_at, api.started_at) == (1_800_000_050.0, 1_800_000_050.0 - 61.5)
    assert db.finished_at == 1_800_000_070.0  # no record: the wave's end
    assert facts.waves[0].merged == ("api", "db")
    assert facts.events == events


def test_the_page_tells_seawalls_refusals_from_the_clis() -> None:
    answer = (
        "seawall scope-denied: README.md is outside this task's file scope (this task may "
        "change: src/app.py). Change only files inside your scope."
    )
    state = _state()
    api, db = state.waves[0].agents
    api.run = AgentRun(
        task_id="api", denials=("Edit /r/README.md",), guard_denials=1, last_guard_denial=answer
    )
    db.run = AgentRun(task_id="db", denials=("Write /r/notes.md",))
    page = render_page(gather(state), base=Path("/r"))
    rows = {
        task: page.split(f'data-task="{task}" data-status', 1)[1].split("</tr>", 1)[0]
        for task in ("api", "db")
    }
    assert re.findall(r'data-field="refused_by" data-value="([^"]+)"', rows["api"]) == ["seawall"]
    assert "seawall refused 1 call(s) itself" in rows["api"]
    assert "its `scope` in the plan" in rows["api"]
    assert "without permission" not in rows["api"]
    assert re.findall(r'data-field="refused_by" data-value="([^"]+)"', rows["db"]) == ["agent-cli"]
    assert "the agent CLI refused 1 call(s) without permission: Write /r/notes.md" in rows["db"]
    assert "`options.permissions`" in rows["db"]


def test_a_carryover_shows_whether_it_is_open_or_closed() -> None:
    state = _state()
    state.tasks["db"] = TaskRecord(
        id="db", status=Status.FAILED, issue=IssueRef(number=7, url="https://tracker.invalid/7")
    )
    state.tasks["api"] = TaskRecord(id="api", status=Status.DONE, issue=IssueRef(number=3))
    filed = CarryoverFiled(task="api", kind="FAILED", wave=1, number=3, url="file:///i/3.md")
    closed = CarryoverClosed(number=3, reason="landed", closed=True, wave=2, agent="api")
    failed_close = CarryoverClosed(number=7, reason="landed", closed=False, error="offline")
    facts = gather(state, (filed, closed, failed_close))
    assert {n: (i.state, i.url) for n, i in facts.issues.items()} == {
        3: ("closed", "file:///i/3.md"),
        7: ("open", "https://tracker.invalid/7"),
    }
    page = render_page(facts, base=Path("/r/.seawall/s"))
    tasks = page.split('id="tasks"', 1)[1]
    assert re.search(
        r'data-issue="3" data-state="closed"><a href="file:///i/3.md">#3</a> '
        r'<span class="issue-state">closed</span>',
        tasks,
    )
    assert re.search(
        r'data-issue="7" data-state="open"><a href="https://tracker.invalid/7">', tasks
    )
    totals = page.split('id="totals"', 1)[1].split("</table>", 1)[0]
    assert 'data-field="issues" data-value="#3, #7"' in totals
    assert totals.count('data-state="closed"') == 1 and totals.count('data-state="open"') == 1


def test_every_status_has_its_own_colour_and_legend_entry() -> None:
    assert set(STATUS_COLOURS) == {status.value for status in Status} | {"running"}
    assert len(set(STATUS_COLOURS.values())) == len(STATUS_COLOURS)
    page = render_page(gather(_state()), base=Path("/r"))
    legend = page.split('id="legend"', 1)[1].split("</p>", 1)[0]
    assert re.findall(r'data-status="([^"]+)"', legend) == list(STATUS_COLOURS)
    for status, colour in STATUS_COLOURS.items():
        assert f".status.{status} {{ color: {colour}; }}" in page
