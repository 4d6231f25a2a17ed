"""A stand-in ``claude`` for the Ray barrier tests: it runs the hooks of its settings.

It reads ``--settings`` as Claude Code does and, for each write of ``$HOOK_WRITES``
(a JSON list of paths, relative to its working directory), runs the PreToolUse hook
command with the documented payload on stdin; it writes the file only when the hook
allowed it. Then it tries two writes the hooks never see (``$RAW_WRITES``, plain
``open()`` as any program could), and ends with a result line that lists what happened:
``allowed <path>``, ``denied <path>: <reason>``, ``raw-refused <path>: <error>``,
``raw-wrote <path>``. Output is Claude Code's stream-json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def out(record: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def hook_command(settings_path: str) -> str:
    settings = json.loads(Path(settings_path).read_text())
    command: str = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    return command


def decide(command: str, path: Path, content: str) -> tuple[str, str]:
    payload = {
        "session_id": "s",
        "transcript_path": "",
        "cwd": os.getcwd(),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(path), "content": content},
    }
    done = subprocess.run(
        command, shell=True, input=json.dumps(payload), capture_output=True, text=True
    )
    if done.returncode == 2:
        return "deny", done.stderr.strip()
    answer = json.loads(done.stdout or "{}").get("hookSpecificOutput", {})
    return str(answer.get("permissionDecision", "ask")), str(
        answer.get("permissionDecisionReason", "")
    )


argv = sys.argv[1:]
settings = argv[argv.index("--settings") + 1]
command = hook_command(settings)
sys.stdin.read()
out({"type": "system", "subtype": "init", "session_id": "s"})
lines = []
for n, relative in enumerate(json.loads(os.environ["HOOK_WRITES"])):
    target = Path(relative).absolute()
    content = f"# written by the agent ({n})\n"
    decision, reason = decide(command, target, content)
    call = {
        "type": "tool_use",
        "id": f"t{n}",
        "name": "Write",
        "input": {"file_path": str(target), "content": content},
    }
    out(
        {
            "type": "assistant",
            "session_id": "s",
            "message": {"id": f"m{n}", "type": "message", "role": "assistant", "content": [call]},
        }
    )
    if decision == "allow":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        lines.append(f"allowed {relative}")
        result: dict[str, object] = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}
    else:
        lines.append(f"denied {relative}: {reason}")
        result = {
            "type": "tool_result",
            "tool_use_id": f"t{n}",
            "content": reason,
            "is_error": True,
        }
    out({"type": "user", "session_id": "s", "message": {"role": "user", "content": [result]}})
for raw in json.loads(os.environ.get("RAW_WRITES", "[]")):
    try:
        with open(raw, "w") as handle:
            handle.write("planted\n")
        lines.append(f"raw-wrote {raw}")
    except OSError as exc:
        lines.append(f"raw-refused {raw}: {type(exc).__name__}")
text = "\n".join([*lines, "STATUS: done"])
out(
    {
        "type": "assistant",
        "session_id": "s",
        "message": {
            "id": "m99",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        },
    }
)
out(
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": text,
        "num_turns": 1,
        "session_id": "s",
    }
)
