"""A full trace of what the monitor does with a transcript: every trip, finding, notice.

``trace`` feeds a transcript's lines through ``TranscriptReader`` into one
``AgentMonitor`` and writes down, with the index of the event that caused it, every
trip (kind, count, limit, evidence, time), every finding (all its fields), every
breaker notice, and at the end the breaker's counters. After a trip the breaker is
reset and feeding goes on, so a trip never hides what follows. Three ways of
running: the default limits, tight limits (every breaker and detector fires often),
and hook mode: the breaker alone with the tight limits, ``admit`` before each call,
saved and resumed between events as ``seawall hook`` keeps it, reset after three
refused calls (so the refusals after a trip are traced too). The clock is the event's
index in seconds, so session-time trips land on fixed events.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from seawall.breakers import AgentBreaker, BreakerNotice, Trip
from seawall.events import Conversation, Event, ToolCall
from seawall.model import BreakerLimits, StagnationConfig
from seawall.stagnation import AgentMonitor, Finding
from seawall.transcripts import TranscriptReader
from tests.bench.bench_detectors import synthetic_mix
from tests.fixtures_path import TRANSCRIPTS, transcripts_present

__all__ = ["MODES", "trace", "trace_digest"]

MODES = ("default", "tight", "hook")
WORKSPACE = Path("/nonexistent/trace-repo")
TIGHT_LIMITS = BreakerLimits(
    max_edits_without_verify=6,
    max_repeat_identical=2,
    max_same_command_failures=2,
    max_consecutive_failures=2,
    max_consecutive_polls=2,
    max_tool_calls=40,
    tool_budget_warn_fraction=0.5,
    max_files_touched=8,
    max_session_minutes=5.0,
    max_scope_denials=2,
)
TIGHT_STAGNATION = StagnationConfig(pagination_reads=2, turn_key_repeats=2, error_echo_repeats=2)


def _finding(index: int, finding: Finding) -> str:
    return json.dumps(
        [
            "finding", index, finding.pattern.value, finding.source.value,
            finding.verdict.value, finding.occurrences, finding.evidence,
            finding.subject, str(finding.error_class), finding.agent,
        ],
        ensure_ascii=False,
    )  # fmt: skip


def _events(lines: Iterable[str]) -> Iterator[Event]:
    """The events the monitor sees: the session's watch keeps a ``Conversation`` (the
    CLI naming its session) for itself."""
    reader = TranscriptReader()
    for line in lines:
        yield from (e for e in reader.feed(line) if type(e) is not Conversation)
    yield from reader.finish()


def _trip(index: int, trip: Trip) -> str:
    return json.dumps(
        ["trip", index, trip.kind.value, trip.count, trip.limit, trip.evidence, trip.at]
    )


def _hook_trace(lines: Iterable[str], agent: str) -> Iterator[str]:
    """The breaker alone, as ``seawall hook`` drives it: resumed from its saved record
    before every event, ``admit`` for calls, reset after three refused calls."""
    now = [0.0]
    out: list[str] = []
    index = refused = 0

    def heard(notice: BreakerNotice) -> None:
        out.append(json.dumps(["notice", index, notice.kind.value, notice.message]))

    breaker = AgentBreaker(limits=TIGHT_LIMITS, clock=lambda: now[0], agent=agent)
    for event in _events(lines):
        index += 1
        now[0] = float(index)
        breaker = AgentBreaker.resumed(breaker.saved(), limits=TIGHT_LIMITS, clock=lambda: now[0])
        breaker.add_listener(heard)
        if type(event) is ToolCall:
            admission = breaker.admit(event)
            if not admission.allowed or admission.warning or admission.cleanup:
                out.append(json.dumps(["admit", index, admission.allowed, admission.reason,
                                       admission.warning, admission.cleanup]))  # fmt: skip
            refused += not admission.allowed
            if refused >= 3:
                breaker.reset()
                refused = 0
        else:
            trip = breaker.observe(event)
            if trip is not None:
                out.append(_trip(index, trip))
        yield from out
        out.clear()
    stats = breaker.statistics()
    yield json.dumps([
        "end", index, stats.state.value, stats.tool_calls, stats.edits_since_verify,
        stats.files_touched, stats.consecutive_failures, stats.consecutive_polls,
        stats.warned, stats.cleanup_used,
    ])  # fmt: skip


def trace(lines: Iterable[str], mode: str = "default", agent: str = "a") -> Iterator[str]:
    """The trace of one transcript's ``lines`` in ``mode`` (one of ``MODES``)."""
    if mode == "hook":
        yield from _hook_trace(lines, agent)
        return
    now = [0.0]
    tight = mode == "tight"
    monitor = AgentMonitor(
        session="trace", wave=1, agent=agent, workspace=WORKSPACE, repo=WORKSPACE,
        limits=TIGHT_LIMITS if tight else None,
        stagnation=TIGHT_STAGNATION if tight else None, clock=lambda: now[0],
    )  # fmt: skip
    out: list[str] = []
    index = 0

    def heard(notice: BreakerNotice) -> None:
        out.append(json.dumps(["notice", index, notice.kind.value, notice.message]))

    monitor.breaker.add_listener(heard)
    monitor.add_listener(lambda finding: out.append(_finding(index, finding)))
    for event in _events(lines):
        index += 1
        now[0] = float(index)
        trip = monitor.observe(event)
        if trip is not None:
            out.append(_trip(index, trip))
            monitor.breaker.reset()
        yield from out
        out.clear()
    monitor.finish()  # the post-wave findings reach the listener
    yield from out
    stats = monitor.statistics()
    breaker_stats = stats.breaker
    yield json.dumps([
        "end", index, stats.events, breaker_stats.state.value, breaker_stats.tool_calls,
        breaker_stats.edits_since_verify, breaker_stats.files_touched,
        breaker_stats.consecutive_failures, breaker_stats.consecutive_polls,
        breaker_stats.warned, breaker_stats.cleanup_used,
        None if stats.live_status is None else stats.live_status.value,
        len(stats.findings),
    ])  # fmt: skip


def trace_digest(records: Iterable[str]) -> str:
    """A short digest of a trace, for corpora whose full trace is too long to keep."""
    digest = hashlib.sha256()
    for record in records:
        digest.update(record.encode("utf-8") + b"\n")
    return digest.hexdigest()[:20]


GOLDEN = Path(__file__).with_name("monitor_golden.jsonl")
SYNTHETIC_HOOK_AGENTS = 12  # hook mode resumes the breaker per event: a dozen agents suffice


def real_files() -> list[Path]:
    """Every transcript of the fixtures (JSONL and the logs that embed events)."""
    if not transcripts_present():
        return []
    return sorted(
        path
        for path in TRANSCRIPTS.rglob("*")
        if path.is_file() and path.suffix in (".jsonl", ".txt")
    )


def real_traces() -> list[str]:
    """The full trace of every fixture transcript in every mode, one line per record:
    ``[relative path, mode, record...]``."""
    traced: list[str] = []
    for path in real_files():
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        name = str(path.relative_to(TRANSCRIPTS))
        for mode in MODES:
            traced.extend(
                json.dumps([name, mode, *json.loads(record)], ensure_ascii=False)
                for record in trace(lines, mode, path.stem)
            )
    return traced


def synthetic_traces() -> list[str]:
    """The digest of the trace of each agent of the benchmark's synthetic mix, in every
    mode: ``["synthetic", mode, agent, digest]``."""
    files = synthetic_mix()
    return [
        json.dumps(["synthetic", mode, n, trace_digest(trace(lines, mode, f"a{n}"))])
        for mode in MODES
        for n, lines in enumerate(files[:SYNTHETIC_HOOK_AGENTS] if mode == "hook" else files)
    ]


if __name__ == "__main__":  # write the golden file from the code as it is
    with GOLDEN.open("w", encoding="utf-8") as handle:
        handle.writelines(line + "\n" for line in (*real_traces(), *synthetic_traces()))
