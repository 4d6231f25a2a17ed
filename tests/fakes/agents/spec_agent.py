#!/usr/bin/env python3
"""A command-runner agent that follows a JSON spec, for end-to-end session tests.

``AGENT_SPEC`` names a JSON file: ``{task_id: [attempt, ...]}``; the n-th dispatch of a
task follows the n-th attempt (the last repeats). An attempt may have:

- ``writes``: ``{path: content}`` files written in the working directory;
- ``commits``: a list of ``{"writes": {...}, "message": "..."}`` made one after another;
- ``marker``: a file created (absolute path) once the agent has started;
- ``env_to``: a file (absolute path) the agent's ``SEAWALL_*`` variables are written to;
- ``sleep``: seconds to wait before finishing;
- ``final``: the text printed on stdout (the final message);
- ``exit``: the exit code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    spec_path = Path(os.environ["AGENT_SPEC"])
    task = os.environ["SEAWALL_TASK_ID"]
    attempts = json.loads(spec_path.read_text())[task]
    counter = spec_path.with_name(f"{spec_path.stem}.{task}.count")
    index = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(index + 1))
    attempt = attempts[min(index, len(attempts) - 1)]
    sys.stdin.read()
    if attempt.get("marker"):
        Path(attempt["marker"]).write_text(str(os.getpid()))
    if attempt.get("env_to"):
        told = {k: v for k, v in os.environ.items() if k.startswith("SEAWALL_")}
        Path(attempt["env_to"]).write_text(json.dumps(told))
    for path, content in attempt.get("writes", {}).items():
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    for commit in attempt.get("commits", []):
        for path, content in commit["writes"].items():
            target = Path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        subprocess.run(["git", "add", "-A", "--", *commit["writes"]], check=True)
        subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "-m", commit["message"]], check=True
        )
    time.sleep(float(attempt.get("sleep", 0)))
    print(attempt.get("final", "STATUS: done — finished"))
    return int(attempt.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
