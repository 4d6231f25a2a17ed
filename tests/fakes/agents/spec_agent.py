#!/usr/bin/env python3
"""A command-runner agent that follows a JSON spec, for end-to-end session tests.

``AGENT_SPEC`` names a JSON file: ``{task_id: [attempt, ...]}``; the n-th dispatch of a
task follows the n-th attempt (the last repeats). An attempt may have:

- ``writes``: ``{path: content}`` files written in the working directory;
- ``commits``: a list of ``{"writes": {...}, "message": "..."}`` made one after another;
- ``marker``: a file created (absolute path) once the agent has started;
- ``env_to``: a file (absolute path) the agent's ``SEAWALL_*`` variables are written to;
- ``sleep``: seconds to wait before finishing;
- ``shell``: shell command lines run one after another with ``bash -c``; with them the
  agent speaks Claude Code stream-json (a ``Bash`` tool call and its result per line,
  then a result line with ``final``), for a runner with ``output = "stream-json"``;
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
    final = attempt.get("final", "STATUS: done — finished")
    if attempt.get("shell"):
        _speak_stream_json(attempt["shell"], final)
    else:
        print(final)
    return int(attempt.get("exit", 0))


def _speak_stream_json(lines: list[str], final: str) -> None:
    """Run each line with bash as a Bash tool call would, in Claude Code's stream-json."""
    session = "00000000-0000-4000-8000-0000000005ec"

    def out(record: dict[str, object]) -> None:
        sys.stdout.write(json.dumps({**record, "session_id": session}) + "\n")
        sys.stdout.flush()

    out({"type": "system", "subtype": "init", "model": "spec"})
    for n, line in enumerate(lines, start=1):
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": line}}
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "content": [call]}
        out({"type": "assistant", "message": message})
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True)
        answer = {
            "type": "tool_result",
            "tool_use_id": f"toolu_{n}",
            "content": done.stdout + done.stderr,
            "is_error": done.returncode != 0,
        }
        out({"type": "user", "message": {"role": "user", "content": [answer]}})
    out(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "num_turns": len(lines),
            "result": final,
            "total_cost_usd": 0.0,
        }
    )


if __name__ == "__main__":
    sys.exit(main())
