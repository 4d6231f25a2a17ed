#!/usr/bin/env python3
"""A command-runner agent for the chaos test that records what it wrote.

``CHAOS_SPEC`` names a JSON file ``{task_id: [attempt, ...]}``; the n-th dispatch of a
task follows the n-th attempt (the last repeats). An attempt may have ``writes``
(``{path: content}``), ``commits`` (a list of ``{path: content}`` committed one after
another), ``sleep`` (seconds) and ``final`` (printed on stdout). ``{n}`` in a content
is the dispatch number. Every file written is recorded, after the write, as a line
``{"task", "path", "blob"}`` in ``$CHAOS_LOG/writes-<pid>.jsonl`` (``blob`` is git's
object id of the content), and the agent's pid is a file in ``$CHAOS_LOG/pids/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main() -> int:
    spec_path = Path(os.environ["CHAOS_SPEC"])
    log = Path(os.environ["CHAOS_LOG"])
    task = os.environ["SEAWALL_TASK_ID"]
    (log / "pids").mkdir(parents=True, exist_ok=True)
    (log / "pids" / str(os.getpid())).write_text(task)
    attempts = json.loads(spec_path.read_text())[task]
    counter = log / f"{task}.count"
    index = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(index + 1))
    attempt = attempts[min(index, len(attempts) - 1)]
    sys.stdin.read()
    record = log / f"writes-{os.getpid()}.jsonl"

    def write(path: str, content: str) -> None:
        data = content.replace("{n}", str(index)).encode()
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        line = json.dumps({"task": task, "path": path, "blob": blob_id(data)})
        with record.open("a") as out:
            out.write(line + "\n")

    for path, content in attempt.get("writes", {}).items():
        write(path, content)
    for number, files in enumerate(attempt.get("commits", [])):
        for path, content in files.items():
            write(path, content)
        subprocess.run(["git", "add", "-A", "--", *files], check=True)
        subprocess.run(["git", "commit", "-q", "-m", f"{task} try {number}"], check=True)
    time.sleep(float(attempt.get("sleep", 0)))
    print(attempt.get("final", "STATUS: done — finished"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
