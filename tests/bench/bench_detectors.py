"""Detectors and breakers: throughput against ``json.loads``; tail latency against polling.

(a) Events per second through every detector and breaker of an ``AgentMonitor``,
    against a bare ``json.loads`` of the same lines, in the same run. Two corpora: the
    real transcripts in ../shared/fixtures/transcripts (when present) and a synthetic
    stream-json session of small lines (the hard case: cheap lines, many events).
(b) Latency from a transcript line being appended to its record being written, p95,
    for the live tailer against the same tailer polling every 2 s (the baseline).
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio

from coordinator.breakers.commands import is_verify_command, is_wait_command, parse_commands
from coordinator.breakers.signature import signature_digest
from coordinator.events import Event
from coordinator.stagnation import AgentMonitor, Finding
from coordinator.tail import TranscriptTailer
from coordinator.telemetry import EventLog
from coordinator.transcripts import TranscriptReader
from tests.bench.harness import BenchResult, best_of
from tests.fixtures_path import TRANSCRIPTS

ROOT = TRANSCRIPTS
WORKSPACE = Path("/nonexistent/bench-repo")


def _synthetic_lines(tool_calls: int = 20_000) -> list[str]:
    """A plausible stream-json session: reads, edits, test runs, greps, text."""
    rng = random.Random(7)
    lines: list[str] = []
    for n in range(tool_calls):
        kind = rng.choice(("Read", "Edit", "Bash", "Grep", "Bash"))
        if kind == "Read":
            arguments: dict[str, object] = {"file_path": f"/r/src/m{rng.randrange(40)}.py"}
        elif kind == "Edit":
            arguments = {"file_path": f"/r/src/m{rng.randrange(40)}.py",
                         "old_string": f"x = {n}", "new_string": f"x = {n + 1}"}  # fmt: skip
        elif kind == "Grep":
            arguments = {"pattern": f"def f{rng.randrange(99)}", "path": "/r/src"}
        else:
            arguments = {"command": rng.choice(("pytest -q", "ls src", "git status", "make"))}
        call_id = f"toolu_{n}"
        lines.append(json.dumps({
            "type": "assistant",
            "message": {"id": f"msg_{n}", "role": "assistant", "content": [
                {"type": "text", "text": "Next step."},
                {"type": "tool_use", "id": call_id, "name": kind, "input": arguments}],
                "usage": {"input_tokens": 10, "output_tokens": 5}},
        }))  # fmt: skip
        failed = rng.random() < 0.1
        lines.append(json.dumps({
            "type": "user",
            "message": {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": call_id, "is_error": failed,
                "content": f"error: thing {n} failed" if failed else f"output of {n}"}]},
        }))  # fmt: skip
    return lines


def _real_corpus() -> list[list[str]]:
    if not ROOT.is_dir():
        return []
    return [
        path.read_text(encoding="utf-8", errors="replace").splitlines()
        for path in sorted(ROOT.rglob("*.jsonl"))
    ]


def _clear_caches() -> None:
    for cached in (parse_commands, is_verify_command, is_wait_command, signature_digest):
        cached.cache_clear()


def _monitor(agent: str) -> AgentMonitor:
    return AgentMonitor(
        session="bench", wave=1, agent=agent, workspace=WORKSPACE, repo=WORKSPACE,
        clock=lambda: 0.0,
    )  # fmt: skip


def _throughput(name: str, files: list[list[str]]) -> BenchResult:
    lines = [line for lines in files for line in lines]
    streams: list[list[Event]] = []
    for file_lines in files:
        reader = TranscriptReader()
        streams.append([event for line in file_lines for event in reader.feed(line)])
    count = sum(len(stream) for stream in streams)

    def loads() -> None:
        for line in lines:
            json.loads(line)

    def detect() -> None:
        _clear_caches()  # each repetition parses every command afresh, like a new session
        for n, stream in enumerate(streams):
            observe = _monitor(f"a{n}").observe
            for event in stream:
                observe(event)

    baseline = best_of(5, loads)
    figure = best_of(5, detect)
    return BenchResult(
        name=f"detectors+breakers ({name}: {len(lines)} lines, {count} events)",
        figure=figure,
        baseline=baseline,
        unit="s",
        baseline_name="json.loads of the same lines",
        target="ratio <= 3 and >= 100,000 events/s",
        note=f"{count / figure:,.0f} events/s",
    )


def _line(n: int) -> str:
    text = f"Stopping here.\nSTATUS: partial — step {n} | REMAINING: the rest"
    return json.dumps({
        "type": "assistant", "message": {"id": f"m{n}", "role": "assistant",
                                         "content": [{"type": "text", "text": text}]},
    }) + "\n"  # fmt: skip


async def _latencies(interval: float, samples: int, spread: float) -> list[float]:
    """Append one line per new agent file at random moments; time until its record."""
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        directory = root / "subagents"
        directory.mkdir()
        log = EventLog(root / "events.jsonl", session="bench")
        seen: dict[str, float] = {}
        arrived = anyio.Event()

        def monitor_for(agent: str, _path: Path) -> AgentMonitor:
            monitor = AgentMonitor(session="bench", wave=1, agent=agent, workspace=root,
                                   repo=root, event_log=log)  # fmt: skip

            def found(finding: Finding) -> None:
                seen[finding.agent] = time.perf_counter()
                if len(seen) >= samples:
                    arrived.set()

            monitor.add_listener(found)
            return monitor

        tailer = TranscriptTailer(session="bench", repo=root, directory=directory,
                                  monitor_for=monitor_for, interval=interval)  # fmt: skip
        written: dict[str, float] = {}
        async with anyio.create_task_group() as group:
            await group.start(tailer.run)
            for n in range(samples):
                await anyio.sleep(rng.uniform(0, spread))
                path = directory / f"agent-s{n}.jsonl"
                written[f"s{n}"] = time.perf_counter()
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(_line(n))
            with anyio.fail_after(interval * 3 + 10):
                await arrived.wait()
            group.cancel_scope.cancel()
    return [seen[agent] - at for agent, at in written.items()]


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def _latency() -> BenchResult:
    live = anyio.run(_latencies, 0.05, 60, 0.2)
    polled = anyio.run(_latencies, 2.0, 8, 1.3)
    return BenchResult(
        name="tail latency p95 (line appended -> record written)",
        figure=_p95(live) * 1000,
        baseline=_p95(polled) * 1000,
        unit="ms",
        baseline_name="the same tailer polling every 2 s",
        target="p95 < 100 ms",
        note=f"live median {statistics.median(live) * 1000:.1f} ms over {len(live)} lines",
    )


def run() -> list[BenchResult]:
    results = [_throughput("synthetic stream-json", [_synthetic_lines()])]
    real = _real_corpus()
    if real:
        results.append(_throughput("real transcripts", real))
    results.append(_latency())
    return results


def _main() -> Iterator[str]:
    for result in run():
        yield result.line()


if __name__ == "__main__":
    for line in _main():
        print(line)
