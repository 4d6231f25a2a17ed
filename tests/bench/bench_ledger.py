"""The ledger's cost: per-wave overhead as a session grows, and one save at 200 agents.

(a) Sessions of 5, 20 and 40 waves of 4 in-place agents (a callable runner that writes
one file each), after a 2-wave session that takes the first-time costs: wall clock per
wave, and the 20- and 40-wave figures against the 5-wave one of the same run (the goal:
within 1.2x). The time spent in ledger saves, and the process's CPU time per wave, are
printed beside them.

(b) One save of a ledger of 200 agents (50 waves of 4, the last wave changed) and one
of a single wave of 200 agents (all of it changed), against the whole-file rewrite the
ledger used before (``dataclasses.asdict`` + ``json.dumps(indent=2)`` + an atomic
write) and against a bare ``fdatasync`` of as many bytes, the floor of any durable
save on this disk.

(c) The conversion mechanism, chosen by this measurement: encoding and decoding the
200-agent ledger with msgspec, with cattrs (when installed) and by hand (asdict +
json), and building 200 breaker trips with ``seawall.config.fields.build``.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import io
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from seawall import codec
from seawall.adapters.runners.callable import CallableRunner
from seawall.breakers.trip import BreakerKind, Trip
from seawall.config.fields import build
from seawall.model import Enforcement, Isolation, Status, Task
from seawall.plan import parse_plan
from seawall.report.progress import Progress
from seawall.runner import AgentRequest, EmitFn, RunCounts
from seawall.runtime.files import atomic_write_text
from seawall.session.engine import Session
from seawall.state.ledger import AgentRecord, SessionState, WavePhase, WaveRecord
from seawall.state.pieces import Parts, ledger_parts
from seawall.state.runs import AgentRun
from seawall.state.store import StateStore
from tests.bench.harness import BenchResult, best_of, empty_repo

WIDTH = 4


async def _agent(request: AgentRequest, emit: EmitFn) -> str:
    del emit
    (Path(request.workspace) / f"{request.task_id}.txt").write_text(request.task_id)
    return "STATUS: done — wrote its file"


def _plan(waves: int) -> str:
    tasks = []
    for wave in range(waves):
        for agent in range(WIDTH):
            after = f'depends_on = ["w{wave - 1}a0"]\n' if wave else ""
            tasks.append(
                f'[[task]]\nid = "w{wave}a{agent}"\nprompt = "x"\n'
                f'scope = ["w{wave}a{agent}.txt"]\n{after}'
            )
    head = f'[session]\nname = "b"\nisolation = "none"\nmax_agents_per_wave = {WIDTH}\n'
    return head + "".join(tasks)


def _session(tmp: Path, waves: int) -> tuple[float, float, float]:
    """Seconds per wave of the whole session, of it in ledger saves, and of the
    process's CPU time (less sensitive than the wall clock to a loaded machine)."""
    repo = empty_repo(tmp / f"repo-{waves}")
    text = _plan(waves)
    session = Session(
        parse_plan(text),
        repo=repo,
        runner=CallableRunner(_agent),
        progress=Progress(io.StringIO(), live=False),
        plan_text=text,
    )
    spent = [0.0]
    save = session.store.save

    def timed_save(state: SessionState) -> None:
        start = time.perf_counter()
        save(state)
        spent[0] += time.perf_counter() - start

    session.store.save = timed_save  # type: ignore[method-assign]
    start, cpu = time.perf_counter(), time.process_time()
    anyio.run(session.run)
    cpu = time.process_time() - cpu
    return (time.perf_counter() - start) / waves, spent[0] / waves, cpu / waves


def _ledger(waves: int, width: int) -> SessionState:
    state = SessionState(
        session="bench",
        name="bench",
        repo="/repo",
        target_branch="main",
        start_commit="0" * 40,
        plan_text="[[task]]\n" * 2000,
    )
    for number in range(1, waves + 1):
        wave = WaveRecord(
            number=number,
            tasks=[Task(id=f"w{number}a{i}", prompt="do it " * 20) for i in range(width)],
            isolation=Isolation.NONE,
            enforcement=Enforcement.STRICT,
            max_turns=30,
            base="b" * 40,
            phase=WavePhase.DONE,
        )
        for i in range(width):
            task = f"w{number}a{i}"
            wave.agents.append(
                AgentRecord(
                    task=task,
                    status=Status.DONE,
                    checkpoint="c" * 40,
                    turns=5,
                    tool_calls=12,
                    final_text="STATUS: done — ok " * 30,
                    touched=[f"src/{task}.py"],
                    run=AgentRun(
                        task_id=task, final_text="STATUS: done " * 50, counts=RunCounts(turns=5)
                    ),
                )
            )
            state.task(task).attempts = 1
        state.waves.append(wave)
    return state


def _whole_rewrite(path: Path, state: SessionState) -> None:
    """The save the ledger used before: the whole file, every time."""
    text = json.dumps(dataclasses.asdict(state), indent=2, default=str) + "\n"
    atomic_write_text(path, text)


def _fdatasync(path: Path, size: int) -> None:
    with path.open("ab") as handle:
        handle.write(b"x" * size)
        handle.flush()
        os.fdatasync(handle.fileno())


def _one_save(tmp: Path, waves: int, width: int) -> dict[str, float]:
    """ms of one save after the last wave changed (ours, the whole rewrite, a bare
    fdatasync of the bytes ours appended, timed alternately with ours so both see the
    same load), of the first save after a load, and of cutting the ledger into pieces
    (reusing the unchanged ones, and encoding every one)."""
    store = StateStore(tmp / f"save-{waves}x{width}", "bench")
    state = _ledger(waves, width)
    store.save(state)
    counter = [0]

    def change_and_save() -> None:
        counter[0] += 1
        for agent in state.waves[-1].agents:
            agent.summary = f"pass {counter[0]}"
        store.save(state)

    change_and_save()
    appended = len(store.paths.journal.read_bytes().splitlines()[-1]) + 1
    sync_file = tmp / f"sync-{waves}x{width}"
    ours: list[float] = []
    floor: list[float] = []
    for _ in range(15):
        ours.append(best_of(1, change_and_save))
        floor.append(best_of(1, lambda: _fdatasync(sync_file, appended)))
    resumed: list[float] = []
    for _ in range(9):
        reader = StateStore(store.paths.repo, "bench")
        loaded = reader.load()
        loaded.waves[-1].agents[0].summary = f"resumed {len(resumed)}"
        # the collector's pass over the records the load just built is the load's cost:
        # left in, it lands on whatever runs next (here, the save)
        gc.collect()
        start = time.perf_counter()
        reader.save(loaded)
        resumed.append(time.perf_counter() - start)
    old = tmp / f"old-{waves}x{width}.json"
    parts = Parts()
    parts.cut(state)

    def change_and_cut() -> None:
        counter[0] += 1
        for agent in state.waves[-1].agents:
            agent.summary = f"pass {counter[0]}"
        parts.cut(state)

    return {
        "ours": min(ours) * 1000,
        "median": statistics.median(ours) * 1000,
        "floor": min(floor) * 1000,
        "floor_median": statistics.median(floor) * 1000,
        "resumed": min(resumed) * 1000,
        "resumed_median": statistics.median(resumed) * 1000,
        "whole": best_of(5, lambda: _whole_rewrite(old, state)) * 1000,
        "cut": best_of(15, change_and_cut) * 1000,
        "cut_all": best_of(15, lambda: ledger_parts(state)) * 1000,
        "appended": float(appended),
    }


def _mechanisms() -> list[BenchResult]:
    state = _ledger(50, 4)
    data = codec.encode(state)
    hand = json.dumps(dataclasses.asdict(state))
    results: dict[str, tuple[float, float]] = {
        "msgspec": (
            best_of(7, lambda: codec.encode(state)),
            best_of(7, lambda: codec.decode(data, SessionState)),
        ),
        "by hand": (
            best_of(5, lambda: json.dumps(dataclasses.asdict(state))),
            best_of(5, lambda: _by_hand(json.loads(hand))),
        ),
    }
    try:  # optional: compared when installed, never a dependency
        cattrs_json: Any = importlib.import_module("cattrs.preconf.json")
    except ImportError:
        pass
    else:
        converter = cattrs_json.make_converter()
        text = json.dumps(converter.unstructure(state))
        results["cattrs"] = (
            best_of(5, lambda: json.dumps(converter.unstructure(state))),
            best_of(5, lambda: converter.structure(json.loads(text), SessionState)),
        )
    lines = [
        BenchResult(
            name=f"encode + decode the 200-agent ledger with {name}",
            figure=(save + load) * 1000,
            baseline=sum(results["msgspec"]) * 1000,
            unit="ms",
            baseline_name="msgspec",
            note=f"encode {save * 1000:.2f} ms, decode {load * 1000:.2f} ms",
        )
        for name, (save, load) in results.items()
    ]
    trips = [
        codec.to_data(Trip(kind=BreakerKind.LOOP, evidence="e", count=3, limit=3, at=float(i)))
        for i in range(200)
    ]
    lines.append(
        BenchResult(
            name="build 200 breaker trips with config.fields.build",
            figure=best_of(5, lambda: [build(Trip, t, "trip.") for t in trips]) * 1000,
            baseline=best_of(5, lambda: codec.from_data(trips, list[Trip])) * 1000,
            unit="ms",
            baseline_name="msgspec",
        )
    )
    return lines


def _by_hand(data: dict[str, Any]) -> SessionState:
    """The hand-written reading of the ledger as it was (dataclass by dataclass)."""

    def fields(cls: type[Any]) -> set[str]:
        return {f.name for f in dataclasses.fields(cls)}

    waves = []
    for wave in data.pop("waves"):
        agents = [
            AgentRecord(**{k: v for k, v in a.items() if k in fields(AgentRecord)})
            for a in wave["agents"]
        ]
        known = {k: v for k, v in wave.items() if k in fields(WaveRecord) and k != "agents"}
        waves.append(WaveRecord(**known, agents=agents))
    data.pop("tasks")
    return SessionState(**{k: v for k, v in data.items() if k in fields(SessionState)}, waves=waves)


def run() -> list[BenchResult]:
    results: list[BenchResult] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for waves, width in ((50, 4), (1, 200)):
            save = _one_save(tmp, waves, width)
            shape = f"{waves} waves of {width}"
            results.append(
                BenchResult(
                    name=f"one save, 200 agents ({shape}, the last wave changed)",
                    figure=save["ours"],
                    baseline=save["whole"],
                    unit="ms",
                    baseline_name="the whole-file rewrite",
                    target="≤ 3 ms",
                    note=f"{save['appended']:.0f} bytes appended; median {save['median']:.2f} ms",
                )
            )
            results.append(
                BenchResult(
                    name=f"the same save against a bare fdatasync of its bytes ({shape})",
                    figure=save["ours"],
                    baseline=save["floor"],
                    unit="ms",
                    baseline_name="one fdatasync",
                    note=f"medians {save['median']:.2f} / {save['floor_median']:.2f} ms",
                )
            )
            results.append(
                BenchResult(
                    name=f"the first save after a load ({shape})",
                    figure=save["resumed"],
                    baseline=save["ours"],
                    unit="ms",
                    baseline_name="a save without a load before it",
                    note="appends what changed; STATE.md's unchanged sections are reused "
                    f"from disk; timed after the load's garbage collection; median "
                    f"{save['resumed_median']:.2f} ms",
                )
            )
            results.append(
                BenchResult(
                    name=f"cutting the ledger into pieces, the last wave changed ({shape})",
                    figure=save["cut"],
                    baseline=save["cut_all"],
                    unit="ms",
                    baseline_name="encoding every piece",
                    note="only the pieces assigned since the last cut are encoded",
                )
            )
        results.extend(_mechanisms())
        # a session's first-time costs (lazy imports, caches) would otherwise land on the
        # 5-wave session and hide the growth the ratios are about
        _session(tmp, 2)
        figures = {waves: _session(tmp, waves) for waves in (5, 20, 40)}
    five = figures[5][0]
    for waves, (per_wave, saving, cpu) in figures.items():
        results.append(
            BenchResult(
                name=f"per-wave overhead, {waves} waves of {WIDTH}",
                figure=per_wave * 1000,
                baseline=five * 1000,
                unit="ms",
                baseline_name="the 5-wave session",
                target="≤ 1.2" if waves > 5 else "",
                note=f"saves {saving * 1000:.1f} ms per wave; CPU {cpu * 1000:.1f} ms per wave "
                f"({cpu / figures[5][2]:.2f} of the 5-wave session's)",
            )
        )
    return results
