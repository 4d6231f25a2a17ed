#!/usr/bin/env python3
"""An agent for the runner kit's process tests, writing Claude Code stream-json.

Behaviour by ``SEAWALL_TASK_ID`` (the kit's task ids):

- ``finish``: one assistant message, then a successful result with ``STATUS: done``;
- ``hang``: one message, then works until it is stopped;
- ``grandchild``: starts a child that starts a grandchild in its own session-less
  chain, writes the grandchild's pid to ``grandchild.pid``, then works until stopped;
- ``ignore-term``: ignores SIGTERM, then works until it is killed;
- ``turns``: three assistant messages (three turns), then a result;
- ``bad-start``: writes why it cannot start to stderr and exits 2 with no output;
- ``fail-with-reason``: one message, then an error result ``STATUS: failed — legacy
  headers rejected`` (``is_error``, as Claude Code ends a failed run), exit 1;
- ``leave-child``: starts ``sleep 300`` (output to /dev/null), writes its pid to
  ``child.pid``, then finishes as ``finish`` does;
- ``unmapped-write``: calls ``frobnicate_file`` (a tool seawall has no name for) that
  writes ``unmapped.txt``, then works until stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SESSION = "00000000-0000-4000-8000-00000000c0de"


def out(record: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def say(n: int, text: str) -> None:
    message = {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "kit",
        "content": [{"type": "text", "text": text}],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    out(
        {"type": "assistant", "message": message, "parent_tool_use_id": None, "session_id": SESSION}
    )


def result(text: str, *, error: bool = False) -> None:
    out(
        {
            "type": "result",
            "subtype": "success",
            "is_error": error,
            "num_turns": 1,
            "result": text,
            "session_id": SESSION,
            "total_cost_usd": 0.0,
        }
    )


def work_forever() -> None:
    for _ in range(6000):
        time.sleep(0.1)


def main() -> int:
    task = os.environ.get("SEAWALL_TASK_ID", "")
    sys.stdin.read()
    if task == "bad-start":
        sys.stderr.write("kit-agent: cannot start: no credentials configured\n")
        return 2
    out({"type": "system", "subtype": "init", "session_id": SESSION, "model": "kit"})
    if task == "turns":
        for n in range(1, 4):
            say(n, f"step {n}")
        result("STATUS: done")
        return 0
    say(1, "on it")
    if task == "unmapped-write":
        call = {
            "type": "tool_use",
            "id": "toolu_k1",
            "name": "frobnicate_file",
            "input": {"path": "unmapped.txt"},
        }
        message = {
            "id": "msg_2",
            "type": "message",
            "role": "assistant",
            "model": "kit",
            "content": [call],
        }
        out({"type": "assistant", "message": message, "session_id": SESSION})
        Path("unmapped.txt").write_text("written\n")
        work_forever()
        return 0
    if task == "grandchild":
        script = (
            "import subprocess, sys; "
            "g = subprocess.Popen(['sleep', '300']); "
            "open('grandchild.pid', 'w').write(str(g.pid)); "
            "g.wait()"
        )
        subprocess.Popen([sys.executable, "-c", script])
        work_forever()
        return 0
    if task == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        work_forever()
        return 0
    if task == "hang":
        work_forever()
        return 0
    if task == "fail-with-reason":
        result("STATUS: failed — legacy headers rejected", error=True)
        return 1
    if task == "leave-child":
        child = subprocess.Popen(
            ["sleep", "300"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        Path("child.pid").write_text(str(child.pid))
    Path("done.txt").write_text("done\n")
    result("Wrote done.txt.\nSTATUS: done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
