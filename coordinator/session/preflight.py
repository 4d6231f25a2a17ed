"""The preflight before a session's first wave: every runner the plan uses can start.

A program that does not resolve, or (for agent CLIs) does not answer ``--version``, fails
the session before any of its state is written, naming the runner, the command and the
reason: an environment that cannot start agents is not a task that failed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from seawall.errors import RunnerError
from seawall.runner import AgentRunner, RunnerProbe

__all__ = ["preflight_runners", "probe_runner"]

VERSION_TIMEOUT = 30.0  # seconds an agent CLI may take to print its version
_TAIL = 600


def preflight_runners(runners: Iterable[tuple[str, AgentRunner]], *, cwd: Path) -> None:
    """Probe each ``(name, runner)``; the first that cannot start raises ``RunnerError``.
    Runners that start the same program the same way (two runner tables of one CLI with
    other options) are probed once: an agent CLI can take a second to print its version."""
    seen: set[int] = set()
    probed: set[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]] = set()
    for name, runner in runners:
        if id(runner) in seen:
            continue
        seen.add(id(runner))
        probe = runner.probe()
        if probe is None:
            continue
        key = (probe.executable, probe.version_args, tuple(sorted(probe.env.items())))
        if key not in probed:
            probed.add(key)
            probe_runner(name, probe, cwd=cwd)


def probe_runner(name: str, probe: RunnerProbe, *, cwd: Path) -> None:
    """Check that ``probe``'s program resolves (relative paths from ``cwd``) and answers
    its version arguments; ``RunnerError`` says which runner, which command and why."""
    env = dict(os.environ)
    env.update(probe.env)
    command = [probe.executable, *probe.version_args]
    shown = shlex.join(command)
    candidate = probe.executable
    if os.sep in candidate and not Path(candidate).is_absolute():
        candidate = str(cwd / candidate)
    resolved = shutil.which(candidate, path=env.get("PATH", os.defpath))
    if resolved is None:
        where = "does not exist or is not executable" if os.sep in candidate else "is not on PATH"
        raise RunnerError(
            f"runner {name!r} cannot start: `{shown}`: the program {probe.executable!r} {where}"
            " (install it, or set the runner's executable/argv)"
        )
    if not probe.version_args:
        return
    try:
        done = subprocess.run(
            [resolved, *probe.version_args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=VERSION_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RunnerError(
            f"runner {name!r} cannot start: `{shown}` did not answer within {VERSION_TIMEOUT:.0f} s"
        ) from None
    except OSError as exc:
        raise RunnerError(f"runner {name!r} cannot start: `{shown}`: {exc.strerror}") from exc
    if done.returncode != 0:
        output = (done.stderr or done.stdout).decode("utf-8", "replace").strip()[-_TAIL:]
        raise RunnerError(
            f"runner {name!r} cannot start: `{shown}` exited {done.returncode}"
            + (f": {output}" if output else "")
        )
