"""Detectors and breakers: throughput against ``json.loads``; tail latency against polling.

(a) Throughput of what a live watch does per transcript line: parse the line into
    events (``TranscriptReader``) and feed every event to that agent's ``AgentMonitor``
    (all detectors and breakers), one monitor per agent, everything inside the clock.
    The baseline is a bare ``json.loads`` of the same lines, in the same run. Two
    corpora: the real JSONL transcripts of the fixtures (when present; their
    multi-megabyte tool results make ``json.loads`` itself slow), and a synthetic mix
    of many agents with small lines (the hard case: cheap lines, many events). The
    synthetic agents never trip (the count of trips is printed), so no monitor skips
    its checks after a trip. Both sides are timed in CPU time of this process, back to
    back over ``ROUNDS`` rounds (``harness.alternating``); the ratio is the median of
    the rounds' ratios and events/s is taken at the median time (the bests are printed
    beside them): this virtual machine's speed drifts over seconds, so two bests taken
    at different moments gave ratios that swung by a third between runs of one code.
    The parse alone (no monitor) is measured the same way, against the same baseline;
    so is the monitor's side alone (events parsed before the clock starts), in
    microseconds per event: what the detectors and breakers cost, never a replacement
    for the honest row. The one target is a floor: 100,000 events/s on the synthetic
    mix at the median time (agents write a few events a second); the other rows are
    printed without one.
(b) Latency from a transcript line being appended to its record being written, p95,
    for the live tailer against the same tailer polling every 2 s (the baseline).
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio

from seawall.breakers.commands import (
    _key_words,
    command_key,
    is_verify_command,
    is_wait_command,
    parse_commands,
    reads_only,
    verify_run,
)
from seawall.breakers.signature import failure_print, signature_digest
from seawall.events import Event
from seawall.stagnation import AgentMonitor, Finding
from seawall.stagnation.transcript_tail import TranscriptTailer
from seawall.telemetry import EventLog
from seawall.transcripts import TranscriptReader
from tests.bench.harness import BenchResult, Paired, alternating, paired
from tests.fixtures_path import TRANSCRIPTS, transcripts_present

WORKSPACE = Path("/nonexistent/bench-repo")
ROUNDS = 21
FLOOR = ">= 100,000 events/s at the median time (a floor: speed work on the watch stops there)"
_CACHED = (
    parse_commands, is_verify_command, is_wait_command, signature_digest, failure_print,
    command_key, reads_only, verify_run, _key_words,
)  # fmt: skip


def _assistant(n: int, name: str, arguments: dict[str, object], text: str = "") -> str:
    content: list[dict[str, object]] = [{"type": "text", "text": text}] if text else []
    content.append({"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": arguments})
    return json.dumps({
        "type": "assistant",
        "message": {"id": f"msg_{n}", "role": "assistant", "content": content,
                    "usage": {"input_tokens": 10 + n % 7, "output_tokens": 5}},
    })  # fmt: skip


def _result(n: int, text: str, *, error: bool = False) -> str:
    return json.dumps({
        "type": "user",
        "message": {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": f"toolu_{n}", "is_error": error,
            "content": text}]},
    })  # fmt: skip


def _agent_lines(agent: int, calls: int, rng: random.Random) -> list[str]:
    """One productive agent: reads, greps, edits in bursts, test runs that pass after
    edits, shell reads, a failure now and then, a background run polled to completion."""
    lines: list[str] = []
    edits = 0
    n = agent * 100_000
    for step in range(calls):
        n += 1
        kind = rng.choices(("Read", "Grep", "Edit", "Bash", "Glob", "poll"),
                           weights=(30, 15, 20, 28, 4, 3))[0]  # fmt: skip
        if kind == "Edit" and edits >= 12:
            kind = "verify"
        text = "Next step." if step % 3 == 0 else ""
        if kind == "Read":
            arguments: dict[str, object] = {"file_path": f"/r/src/m{rng.randrange(300)}.py"}
            if rng.random() < 0.2:
                arguments.update(offset=rng.randrange(5) * 200, limit=200)
            output = f"     1\tdef f{n}():\n     2\t    return {n}\n"
        elif kind == "Grep":
            arguments = {"pattern": f"def f{rng.randrange(999)}", "path": "/r/src"}
            output = f"src/m{n % 40}.py:{n % 90}:def f{n}"
        elif kind == "Glob":
            arguments = {"pattern": f"src/**/*{n % 13}.py"}
            output = f"/r/src/m{n % 13}.py"
        elif kind == "Edit":
            edits += 1
            path = f"/r/src/m{rng.randrange(40)}.py"
            arguments = {"file_path": path, "old_string": f"x = {n}", "new_string": f"x = {n + 1}"}
            output = f"The file {path} has been updated successfully."
        elif kind == "verify":
            edits = 0
            arguments = {"command": rng.choice(("pytest -q", "pytest -q tests/unit", "make test",
                                                "npm test 2>&1 | tail -5"))}  # fmt: skip
            output = f"{n % 50 + 5} passed in 0.{n % 90}s"
        elif kind == "poll":
            lines.append(_assistant(n, "Bash", {"command": f"pytest -x > /tmp/run{n}.log 2>&1",
                                                "run_in_background": True}))  # fmt: skip
            lines.append(_result(n, f"Command running in background with ID: b{n}"))
            n += 1
            lines.append(
                _assistant(n, "Bash", {"command": f"sleep 5 && tail -n 20 /tmp/run{n - 1}.log"})
            )
            lines.append(_result(n, f"{n % 9} passed"))
            continue
        else:
            command = rng.choice((
                f"ls src/pkg{n % 17}", f"git diff --stat src/m{n % 40}.py", "git status --short",
                f"grep -rn 'f{n % 300}' src | head -20",
                f"python -m pytest -q tests/test_m{n % 30}.py",
                f"cat src/m{n % 40}.py | sed -n '1,40p'", f"cd src && rg -n 'class C{n % 50}'",
            ))  # fmt: skip
            arguments = {"command": command, "description": "look around"}
            failed = rng.random() < 0.08
            output = (
                f"error: thing {n} failed\nTraceback (most recent call last):\n  line {n}"
                if failed else f" M src/m{n % 40}.py\n?? notes{n}.txt"
            )  # fmt: skip
            lines.append(_assistant(n, "Bash", arguments, text))
            lines.append(_result(n, output, error=failed))
            continue
        lines.append(_assistant(n, kind if kind != "verify" else "Bash", arguments, text))
        lines.append(_result(n, output))
    return lines


def synthetic_mix(agents: int = 120, calls: int = 150) -> list[list[str]]:
    """``agents`` productive agents of ``calls`` tool calls each, one file per agent."""
    rng = random.Random(7)
    return [_agent_lines(agent, calls, rng) for agent in range(agents)]


def real_corpus() -> list[list[str]]:
    if not transcripts_present():
        return []
    return [
        path.read_text(encoding="utf-8", errors="replace").splitlines()
        for path in sorted(TRANSCRIPTS.rglob("*.jsonl"))
    ]


def _clear_caches() -> None:
    for cached in _CACHED:
        cached.cache_clear()


def _monitor(agent: str) -> AgentMonitor:
    """A monitor as a session makes it (the real clock: no agent runs long enough to trip
    the session time)."""
    return AgentMonitor(session="bench", wave=1, agent=agent, workspace=WORKSPACE, repo=WORKSPACE)


def watch(files: list[list[str]]) -> tuple[int, int]:
    """Parse every line and feed its events to that file's monitor: (events, trips)."""
    events = trips = 0
    for n, lines in enumerate(files):
        feed = TranscriptReader().feed
        observe = _monitor(f"a{n}").observe
        for line in lines:
            for event in feed(line):
                events += 1
                if observe(event) is not None:
                    trips += 1
    return events, trips


def watch_parsed(agents: list[list[Event]]) -> tuple[int, int]:
    """Feed events parsed beforehand to one monitor per agent: (events, trips)."""
    events = trips = 0
    for n, batch in enumerate(agents):
        observe = _monitor(f"a{n}").observe
        for event in batch:
            events += 1
            if observe(event) is not None:
                trips += 1
    return events, trips


def _timed(measured: Callable[[], object], lines: list[str]) -> Paired:
    """``measured`` and a bare ``json.loads`` of ``lines``, back to back, ``ROUNDS`` times."""
    loads = json.loads

    def baseline() -> None:
        for line in lines:
            loads(line)

    return paired(*alternating(ROUNDS, measured, baseline))


def _paired_note(timing: Paired, count: int, what: str) -> str:
    """The spread and both bests of a paired timing, with ``count`` ``what`` per second at
    the median and at the best."""
    return (
        f"{count / timing.median:,.0f} {what}/s at the median time ({count / timing.best:,.0f} "
        f"at the best); the median of {ROUNDS} back-to-back ratios, quartiles "
        f"{timing.low:.3f}-{timing.high:.3f}, ratio of bests "
        f"{timing.best / timing.baseline_best:.3f}"
    )


def _lines(files: list[list[str]]) -> list[str]:
    return [line for file_lines in files for line in file_lines]


def _throughput(name: str, files: list[list[str]], target: str) -> BenchResult:
    lines = _lines(files)

    def measured() -> None:
        _clear_caches()  # each repetition parses every command afresh, like a new session
        watch(files)

    events, trips = watch(files)
    timing = _timed(measured, lines)
    return BenchResult(
        name=f"parse+detectors+breakers ({name}: {len(files)} agents, {len(lines)} lines, "
        f"{events} events)",
        figure=timing.median,
        baseline=timing.baseline_median,
        unit="s",
        baseline_name="json.loads of the same lines",
        target=target,
        paired_ratio=timing.ratio,
        note=f"{_paired_note(timing, events, 'events')}; "
        f"{len(lines) / timing.baseline_median:,.0f} lines/s json.loads; {trips} trips",
    )


def _monitor_only(name: str, files: list[list[str]]) -> BenchResult:
    """The monitor's side alone: detectors and breakers over events parsed before the
    clock starts (not the honest figure: that one includes the parse), against the same
    ``json.loads`` baseline."""
    agents: list[list[Event]] = []
    for file_lines in files:
        feed = TranscriptReader().feed
        agents.append([event for line in file_lines for event in feed(line)])

    def measured() -> None:
        _clear_caches()
        watch_parsed(agents)

    events, trips = watch_parsed(agents)
    timing = _timed(measured, _lines(files))
    return BenchResult(
        name=f"monitor only, events parsed before the clock ({name}: {events} events)",
        figure=timing.median,
        baseline=timing.baseline_median,
        unit="s",
        baseline_name="json.loads of the same lines",
        paired_ratio=timing.ratio,
        note=f"{timing.median / events * 1e6:.2f} us per event at the median time "
        f"({timing.best / events * 1e6:.2f} at the best); {_paired_note(timing, events, 'events')}"
        f"; {trips} trips",
    )


def parse_only(files: list[list[str]]) -> int:
    """Parse every line into events, no monitor: the number of events."""
    events = 0
    for lines in files:
        feed = TranscriptReader().feed
        for line in lines:
            events += len(feed(line))
    return events


def _parse_throughput(name: str, files: list[list[str]]) -> BenchResult:
    """The parse alone (``TranscriptReader().feed`` over every line) against ``json.loads``
    of the same lines, timed as ``_throughput`` times the whole watch."""
    lines = _lines(files)
    events = parse_only(files)
    timing = _timed(lambda: parse_only(files), lines)
    return BenchResult(
        name=f"parse only ({name}: {len(lines)} lines, {events} events)",
        figure=timing.median,
        baseline=timing.baseline_median,
        unit="s",
        baseline_name="json.loads of the same lines",
        paired_ratio=timing.ratio,
        note=_paired_note(timing, events, "events"),
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
    synthetic = synthetic_mix()
    results = [
        _throughput("synthetic mix", synthetic, FLOOR),
        _monitor_only("synthetic mix", synthetic),
    ]
    real = real_corpus()
    if real:
        results.append(_throughput("real transcripts", real, ""))
        results.append(_monitor_only("real transcripts", real))
    results.append(_parse_throughput("synthetic mix", synthetic))
    if real:
        results.append(_parse_throughput("real transcripts", real))
    results.append(_latency())
    return results


def _main() -> Iterator[str]:
    for result in run():
        yield result.line()


if __name__ == "__main__":
    for line in _main():
        print(line)
