#!/usr/bin/env python3
"""A small agent for the ``command`` runner: behaviour chosen by ``SEAWALL_TASK_ID``.

- ``finish``: writes ``done.txt`` in the workspace and prints a final message;
- ``hang``: starts a child, records its pid in ``$FAKE_AGENT_PIDFILE``, sleeps;
- ``fail``: prints to stderr and exits 7;
- ``garbage``: prints binary bytes, then a final message;
- ``echo``: prints its prompt, the prompt file, and the SEAWALL_* variables as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    task = os.environ.get("SEAWALL_TASK_ID", "")
    prompt = sys.stdin.read()
    if task == "hang":
        child = subprocess.Popen(["sleep", "300"])
        pidfile = os.environ.get("FAKE_AGENT_PIDFILE")
        if pidfile:
            Path(pidfile).write_text(str(child.pid))
        print("working", flush=True)
        for _ in range(3000):
            time.sleep(0.1)
        return 0
    if task == "fail":
        sys.stderr.write("error: cannot do it\n" * 3)
        print("partial work\nSTATUS: failed")
        return 7
    if task == "garbage":
        sys.stdout.buffer.write(bytes(range(256)) + b"\n")
        sys.stdout.flush()
    if task == "echo":
        seawall = {k: v for k, v in os.environ.items() if k.startswith("SEAWALL_")}
        prompt_file = Path(os.environ["SEAWALL_PROMPT_FILE"]).read_text()
        info = {"stdin": prompt, "file": prompt_file, "cwd": os.getcwd(), "env": seawall}
        print(json.dumps(info))
        return 0
    Path("done.txt").write_text("done\n")
    print("Wrote done.txt.\nSTATUS: done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
