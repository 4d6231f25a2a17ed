"""What the sandbox and the supervisor add to one agent start, against a bare spawn.

Each figure is the median wall time of starting ``true`` and waiting for it to end
(nothing left running): bare; a Python interpreter doing nothing (most of the
supervisor's cost); the supervisor alone (subreaper and reaping); the supervisor with a
Landlock policy (what every agent pays); and, when ``bwrap`` is installed, bubblewrap
with the same writable paths, alone and under the supervisor (the alternative that was
measured: it still needs the supervisor to reap). All run in the same process.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from seawall.sandbox.launch import available, supervisor_argv
from seawall.sandbox.policy import DEVICE_PATHS, SandboxPolicy, workspace_policy
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


def _supervised_bwrap(policy: SandboxPolicy) -> list[str]:
    """bubblewrap in place of Landlock: the supervisor is still needed for reaping."""
    return supervisor_argv(_bwrap(policy), policy=None, grace=1.0)


def run() -> list[BenchResult]:
    with tempfile.TemporaryDirectory(prefix="seawall-bench-sandbox-") as scratch:
        workspace = Path(scratch)
        bare = _median(AGENT, workspace)
        results = []
        cases: list[tuple[str, Callable[[], list[str]]]] = [
            ("python start alone (-I -S -c pass)", lambda: [sys.executable, "-I", "-S", "-c", ""]),
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
            cases.append(("bubblewrap alone", lambda: _bwrap(policy)))
            cases.append(("supervisor + bubblewrap", lambda: _supervised_bwrap(policy)))
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
