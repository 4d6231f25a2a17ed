"""What the sandbox and the supervisor add to one agent start, against a bare spawn.

Each figure is the median wall time of starting ``true`` and waiting for it to end
(nothing left running): bare, under the supervisor alone (subreaper and reaping),
under the supervisor with a Landlock policy (what every agent pays), and, when the
``bwrap`` binary is installed, under bubblewrap with the same writable paths (the
alternative that was measured). All are run in the same process, one after another.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from coordinator.sandbox.launch import available, supervisor_argv
from coordinator.sandbox.policy import DEVICE_PATHS, SandboxPolicy, workspace_policy
from tests.bench.harness import BenchResult

RUNS = 21
AGENT = (shutil.which("true") or "/bin/true",)


def _median(argv: Sequence[str], cwd: Path, runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(list(argv), cwd=cwd, check=True, start_new_session=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _bwrap(policy: SandboxPolicy) -> list[str]:
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in policy.writable:
        if path.exists() and not str(path).startswith("/dev"):
            argv += ["--bind", str(path), str(path)]
    return [*argv, "--die-with-parent", "--", *AGENT]


def run() -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="seawall-bench-sandbox-") as scratch:
        workspace = Path(scratch)
        bare = _median(AGENT, workspace)
        results = []
        cases: list[tuple[str, Callable[[], list[str]]]] = [
            ("supervisor only", lambda: supervisor_argv(AGENT, policy=None, grace=1.0)),
        ]
        policy = workspace_policy(workspace).with_paths(Path(path) for path in DEVICE_PATHS)
        if available():
            cases.append(
                (
                    "supervisor + Landlock",
                    lambda: supervisor_argv(AGENT, policy=policy, grace=1.0),
                )
            )
        if shutil.which("bwrap"):
            cases.append(("bubblewrap (measured alternative)", lambda: _bwrap(policy)))
        for name, argv in cases:
            figure = _median(argv(), workspace)
            results.append(
                BenchResult(
                    name=f"agent start, {name}",
                    figure=figure * 1000,
                    baseline=bare * 1000,
                    unit="ms",
                    baseline_name="bare spawn",
                    note=f"+{(figure - bare) * 1000:.1f} ms per agent",
                )
            )
        return results


if __name__ == "__main__":
    for result in run():
        print(result.line())
