"""Cached input tokens, read and written, counted per agent and in ``budgets.tokens``."""

from __future__ import annotations

from seawall.events import Usage
from seawall.model import Enforcement, Isolation, SessionConfig, Status
from seawall.runner import RunCounter
from seawall.session.documents import status_document
from seawall.session.wave_breaker import wave_report
from seawall.state.ledger import AgentRecord, SessionState, WaveRecord
from seawall.state.render import agent_figures, render_state_md


def _record(task: str, **tokens: int) -> AgentRecord:
    return AgentRecord(task=task, status=Status.DONE, **tokens)  # type: ignore[arg-type]


def _state(*agents: AgentRecord) -> SessionState:
    wave = WaveRecord(
        number=1,
        tasks=[],
        isolation=Isolation.WORKTREE,
        enforcement=Enforcement.WARN,
        max_turns=5,
        agents=list(agents),
    )
    return SessionState(
        session="s1", name="n", repo="/r", target_branch="main", start_commit="0" * 40,
        waves=[wave],
    )  # fmt: skip


def test_the_counter_keeps_cache_reads_and_writes_apart_and_counts_them_once() -> None:
    counter = RunCounter()
    usage = Usage(
        message_id="m1",
        input_tokens=300,
        output_tokens=80,
        cache_read_tokens=3660,
        cache_write_tokens=20,
    )
    counter.observe(usage)
    counter.observe(usage)  # the same message again: counted once
    counts = counter.snapshot()
    assert (counts.input_tokens, counts.cache_read_tokens, counts.cache_write_tokens) == (
        300,
        3660,
        20,
    )
    assert counts.tokens == 300 + 80 + 3660 + 20


def test_the_token_budget_counts_cached_input() -> None:
    cached = _record("a", input_tokens=400, output_tokens=100, cache_read_tokens=3600)
    plain = _record("b", input_tokens=50, output_tokens=10, cache_write_tokens=40)
    state = _state(cached, plain)
    report = wave_report(state, state.waves[0], SessionConfig())
    assert report.tokens == 4100 + 100


def test_status_state_md_and_figures_show_the_cached_share() -> None:
    agent = _record("a", input_tokens=400, output_tokens=60, cache_read_tokens=3600)
    state = _state(agent)
    shown = status_document(state).waves[0].agents[0]
    assert (shown.cache_read_tokens, shown.cache_write_tokens, shown.tokens) == (3600, 0, 4060)
    assert "4,060 tokens (3,600 cached)" in agent_figures(agent)
    assert "- spend: $0.00 · 4,060 tokens (3,600 cached)" in render_state_md(state)
    # a runner that reports no tokens shows none
    assert "tokens" not in agent_figures(_record("b"))
