"""What watching a workspace for edits costs (``seawall.session.edit_watch``).

- idle: the process's CPU time over 3 s of a watch of a 2,000-file tree where nothing is
  written, against the same 3 s of a bare ``anyio.sleep`` (goal: the same, ≈ 0);
- busy: the bursts (checkpoints) a writer that never pauses causes, writing one file
  every 10 ms for 3 s, against the writes it made (goal: at most one per ``BURST_MS``,
  however fast it writes).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import anyio

from seawall.session.edit_watch import BURST_MS, LONGEST_BURST_MS, watch_edits
from tests.bench.harness import BenchResult

FILES = 2_000
SECONDS = 3.0


def _tree(root: Path) -> None:
    for n in range(FILES):
        folder = root / f"pkg{n // 50}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{n}.py").write_text(f"n = {n}\n")


async def _idle_cpu(root: Path, *, watch: bool) -> float:
    stop = anyio.Event()

    async def ignore(paths: tuple[str, ...]) -> None:
        del paths

    async with anyio.create_task_group() as group:
        if watch:
            group.start_soon(lambda: watch_edits(root, belongs=_all, on_burst=ignore, stop=stop))
        await anyio.sleep(0.5)  # the watch is set up before the clock starts
        before = time.process_time()
        await anyio.sleep(SECONDS)
        spent = time.process_time() - before
        stop.set()
    return spent


async def _busy(root: Path) -> tuple[int, int]:
    stop = anyio.Event()
    bursts: list[tuple[str, ...]] = []

    async def seen(paths: tuple[str, ...]) -> None:
        bursts.append(paths)

    writes = 0
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: watch_edits(root, belongs=_all, on_burst=seen, stop=stop))
        await anyio.sleep(0.5)
        until = time.monotonic() + SECONDS
        while time.monotonic() < until:
            (root / "pkg0" / "hot.py").write_text(f"w = {writes}\n")
            writes += 1
            await anyio.sleep(0.01)
        await anyio.sleep(LONGEST_BURST_MS / 1000 + 0.5)
        stop.set()
    return len(bursts), writes


def _all(path: str) -> bool:
    return True


def run() -> list[BenchResult]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _tree(root)
        watched = anyio.run(lambda: _idle_cpu(root, watch=True))
        bare = anyio.run(lambda: _idle_cpu(root, watch=False))
        bursts, writes = anyio.run(lambda: _busy(root))
        started = time.perf_counter()
        listed = sum(len(files) for _, _, files in os.walk(root))
        walk = time.perf_counter() - started
    allowed = SECONDS * 1000 / BURST_MS + 1
    return [
        BenchResult(
            name=f"idle watch of a {FILES:,}-file tree, CPU over {SECONDS:g} s",
            figure=watched * 1000,
            baseline=max(bare * 1000, 0.001),
            unit="ms",
            baseline_name="the same wait without a watch",
            target="≈ the same (the watch sleeps in the kernel)",
            note=f"{listed} files",
        ),
        BenchResult(
            name=f"checkpoints a writer that never pauses causes in {SECONDS:g} s",
            figure=bursts,
            baseline=writes,
            unit="bursts",
            baseline_name="its writes",
            target=f"<= {allowed:g} (one per {BURST_MS} ms at most)",
            note=f"walking the tree takes {walk * 1000:.1f} ms",
        ),
    ]
