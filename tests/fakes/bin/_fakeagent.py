"""Shared behaviour of the fake ``claude`` and ``codex`` executables used by the tests.

Controlled by environment variables (so that a test puts the fakes on PATH and picks a
scenario without touching the runner):

- ``FAKE_AGENT_SCENARIO``: ``ok`` (default; ``hang`` for the task id ``hang``),
  ``api-error``, ``max-turns``, ``crash``, ``garbage``, ``hang``, ``turn-failed``;
- ``FAKE_AGENT_REPLAY``: a transcript file whose lines are written to stdout instead;
- ``FAKE_AGENT_RECORD``: a directory where argv, stdin, cwd and SEAWALL_* are written;
- ``FAKE_AGENT_EDIT``: the file (relative to the cwd) the ``ok`` scenario writes;
- ``FAKE_AGENT_PIDFILE``: where ``hang`` writes the pid of the child it leaves running.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def record(name: str) -> str:
    """Read the prompt from stdin and write what the agent was given, when asked to."""
    prompt = sys.stdin.read()
    target = os.environ.get("FAKE_AGENT_RECORD")
    if target:
        folder = Path(target)
        folder.mkdir(parents=True, exist_ok=True)
        seawall = {key: value for key, value in os.environ.items() if key.startswith("SEAWALL_")}
        info = {"name": name, "argv": sys.argv[1:], "cwd": os.getcwd(), "env": seawall}
        (folder / "invocation.json").write_text(json.dumps(info))
        (folder / "prompt.txt").write_text(prompt)
    return prompt


def out(record_: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(record_) + "\n")
    sys.stdout.flush()


def replay() -> bool:
    """Write the replay file's lines to stdout; False when no replay was asked for."""
    path = os.environ.get("FAKE_AGENT_REPLAY")
    if not path:
        return False
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            sys.stdout.write(line)
    sys.stdout.flush()
    return True


def hang() -> None:
    """Leave a child running in our process group, then wait forever (until killed)."""
    child = subprocess.Popen(["sleep", "300"])
    pidfile = os.environ.get("FAKE_AGENT_PIDFILE")
    if pidfile:
        Path(pidfile).write_text(str(child.pid))
    for _ in range(3000):
        time.sleep(0.1)


def edit_target() -> Path:
    return Path(os.environ.get("FAKE_AGENT_EDIT", "fake_agent_output.txt")).absolute()


def scenario() -> str:
    """The scenario: ``FAKE_AGENT_SCENARIO``, else ``hang`` for the task id ``hang``."""
    default = "hang" if os.environ.get("SEAWALL_TASK_ID") == "hang" else "ok"
    return os.environ.get("FAKE_AGENT_SCENARIO", default)
