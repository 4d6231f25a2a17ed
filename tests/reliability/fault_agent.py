#!/usr/bin/env python3
"""A command-runner agent that misbehaves on request, for the fault tests.

``FAULT_SPEC`` names a JSON file ``{task_id: [attempt, ...]}``; the n-th dispatch of a
task follows the n-th attempt (the last repeats). An attempt may have ``writes``
(``{path: content}``, written first, in the working directory), ``pidfile`` (where the
agent writes its pid), ``final`` (printed on stdout) and ``mode``:

- ``crash``: die by SIGSEGV after the writes (no output);
- ``hang``: sleep for ten minutes (the coordinator's wall clock must end it);
- ``garbage``: print lines of random text and broken JSON, then exit 0;
- ``binary``: print random bytes (NUL, invalid UTF-8, no newline at the end), exit 0;
- ``silent``: exit 3 before writing or printing anything;
- ``ok`` (default): print ``final`` and exit 0.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path


def main() -> int:
    spec_path = Path(os.environ["FAULT_SPEC"])
    task = os.environ["SEAWALL_TASK_ID"]
    attempts = json.loads(spec_path.read_text())[task]
    counter = spec_path.with_name(f"{spec_path.stem}.{task}.count")
    index = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(index + 1))
    attempt = attempts[min(index, len(attempts) - 1)]
    mode = attempt.get("mode", "ok")
    if mode == "silent":
        os._exit(3)
    sys.stdin.read()
    if attempt.get("pidfile"):
        Path(attempt["pidfile"]).write_text(str(os.getpid()))
    for path, content in attempt.get("writes", {}).items():
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    rng = random.Random(task)
    if mode == "crash":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode == "hang":
        time.sleep(600)
    elif mode == "garbage":
        for _ in range(200):
            line = "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(80)))
            print(rng.choice([line, '{"type": "result", "subtype":', "STATUS", "}{"]))
        return 0
    elif mode == "binary":
        out = sys.stdout.buffer
        out.write(bytes(rng.randrange(256) for _ in range(64 * 1024)))
        out.write(b"\x00\xff\xfe\n\x80\x81STATUS: d\xc3\x28one\n\x00")
        out.flush()
        return 0
    print(attempt.get("final", "STATUS: done — finished"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
