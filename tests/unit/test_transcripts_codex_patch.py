"""Codex's patches run through the shell are edits: the command forms, and the rollout
and ``exec --json`` lines Codex 0.171 writes for them (a model it does not know)."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from seawall.events import Event, ToolCall, ToolResult, edited_paths
from seawall.transcripts import CodexJsonParser, CodexRolloutParser, parse_file
from seawall.transcripts.codex_patch import patch_changes, shell_patch, shell_patch_of
from tests.fixtures_path import TRANSCRIPTS, transcripts_present

PATCH = (
    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-one\n+uno\n"
    "*** Add File: sub/new.txt\n+new\n*** Delete File: old.txt\n*** End Patch\n"
)
CHANGES = [
    {"path": "a.txt", "kind": "update"},
    {"path": "b.txt", "kind": "move"},
    {"path": "sub/new.txt", "kind": "add"},
    {"path": "old.txt", "kind": "delete"},
]


def paths(command: str | list[str], workdir: str = "") -> list[str] | None:
    patch = shell_patch(command, workdir)
    return None if patch is None else [change["path"] for change in patch.changes]


def test_patch_changes_names_every_file_including_a_move_destination() -> None:
    assert patch_changes(PATCH) == CHANGES
    assert patch_changes(PATCH, "/w/src")[2] == {"path": "/w/src/sub/new.txt", "kind": "add"}
    assert patch_changes("*** Add File: /abs/x.py\n", "/w") == [
        {"path": "/abs/x.py", "kind": "add"}
    ]


@pytest.mark.parametrize(
    ("command", "workdir", "expected"),
    [
        (f"apply_patch <<'PATCH'\n{PATCH}PATCH", "", ["a.txt", "b.txt", "sub/new.txt", "old.txt"]),
        (f"applypatch <<EOF\n{PATCH}EOF\n", "", ["a.txt", "b.txt", "sub/new.txt", "old.txt"]),
        (f"apply_patch <<-'PATCH'\n{PATCH}\tPATCH", "/w", ["/w/a.txt", "/w/b.txt"]),
        (f"cd pkg && apply_patch <<'PATCH'\n{PATCH}PATCH", "", ["pkg/a.txt", "pkg/b.txt"]),
        (f"cd /elsewhere && apply_patch <<'PATCH'\n{PATCH}PATCH", "/w", ["/elsewhere/a.txt"]),
        (f'apply_patch "{PATCH}"', "", ["a.txt", "b.txt", "sub/new.txt", "old.txt"]),
        (["apply_patch", PATCH], "/w", ["/w/a.txt", "/w/b.txt"]),
        (["/usr/local/bin/apply_patch", PATCH], "", ["a.txt", "b.txt"]),
        (["bash", "-lc", f"apply_patch <<'EOF'\n{PATCH}EOF"], "", ["a.txt", "b.txt"]),
        (["bash", "-lc", f"cd src && apply_patch <<'EOF'\n{PATCH}EOF"], "", ["src/a.txt"]),
        (f"/bin/bash -lc {shlex.quote(f'apply_patch {shlex.quote(PATCH)}')}", "", ["a.txt"]),
    ],
)
def test_the_shell_forms_of_a_patch_are_recognised(
    command: str | list[str], workdir: str, expected: list[str]
) -> None:
    found = paths(command, workdir)
    assert found is not None and found[: len(expected)] == expected


@pytest.mark.parametrize(
    "command",
    [
        f"apply_patch <<'PATCH' && rm -rf build\n{PATCH}PATCH",  # runs more than the patch
        f"cat <<'PATCH' | apply_patch\n{PATCH}PATCH",
        "apply_patch < change.patch",  # what it applies is not in the command
        "echo apply_patch",
        "grep -rn apply_patch src",
        f'apply_patch "{PATCH}',  # unbalanced quote: the reader cannot parse it
        f"cd a b && apply_patch <<'PATCH'\n{PATCH}PATCH",
        ["bash", "-lc", "ls -la"],
        [],
        "ls",
    ],
)
def test_other_commands_are_not_patches(command: str | list[str]) -> None:
    assert shell_patch(command) is None


def test_a_shell_tools_input_is_read_from_cmd_or_command_in_its_workdir() -> None:
    heredoc = f"apply_patch <<'PATCH'\n{PATCH}PATCH"
    found = shell_patch_of({"cmd": heredoc, "workdir": "/w/sub"})
    assert found is not None and found.changes[0]["path"] == "/w/sub/a.txt"
    assert found.patch == PATCH.rstrip("\n")
    assert shell_patch_of({"command": ["apply_patch", PATCH]}) is not None
    assert shell_patch_of({"command": ["ls", 3]}) is None
    assert shell_patch_of({"cmd": "ls"}) is None
    assert shell_patch_of({}) is None


# ----- rollout lines, as Codex 0.171 wrote them for a model it has no metadata for -----


def call(call_id: str, name: str, arguments: dict[str, Any]) -> str:
    payload = {
        "type": "function_call",
        "status": "completed",
        "id": f"fc_{call_id}",
        "name": name,
        "arguments": json.dumps(arguments),
        "call_id": call_id,
    }
    return json.dumps(
        {"timestamp": "2026-12-04T23:40:30.849Z", "type": "response_item", "payload": payload}
    )


def output(call_id: str, text: str) -> str:
    payload = {
        "type": "function_call_output",
        "id": f"fco_{call_id}",
        "call_id": call_id,
        "output": text,
    }
    return json.dumps(
        {"timestamp": "2026-12-04T23:40:31.001Z", "type": "response_item", "payload": payload}
    )


def file_change(call_id: str, changes: dict[str, Any], status: str = "completed") -> str:
    item = {
        "type": "FileChange",
        "id": call_id,
        "changes": changes,
        "status": status,
        "stdout": "Success. Updated the following files:\nM a.txt\n"
        if status == "completed"
        else "",
        "stderr": "",
    }
    payload = {"type": "item_completed", "thread_id": "th", "turn_id": "tu", "item": item}
    return json.dumps(
        {"timestamp": "2026-12-04T23:40:30.999Z", "type": "event_msg", "payload": payload}
    )


APPLIED = (
    "Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0.1 seconds\nOutput:\n"
    "Success. Updated the following files:\nA sub/new.txt\nM a.txt\n"
)
UPDATE_A = (
    "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n"
    "*** Add File: sub/new.txt\n+new\n*** End Patch\n"
)
MISSING = "*** Begin Patch\n*** Update File: missing.txt\n@@\n-old\n+new\n*** End Patch\n"
ROLLOUT = [
    call("call_t0_0", "exec_command", {"cmd": f"apply_patch <<'PATCH'\n{UPDATE_A}PATCH"}),
    file_change(
        "call_t0_0",
        {
            "/w/a.txt": {
                "type": "update",
                "unified_diff": "@@ -1 +1 @@\n-one\n+two\n",
                "move_path": None,
            },
            "/w/sub/new.txt": {"type": "add", "content": "new\n"},
        },
    ),
    output("call_t0_0", APPLIED),
    call("call_t1_0", "exec_command", {"cmd": f"apply_patch <<'PATCH'\n{MISSING}PATCH"}),
    output(
        "call_t1_0",
        "apply_patch verification failed: Failed to read file to update /w/missing.txt: "
        "No such file or directory (os error 2)",
    ),
    call(
        "call_t2_0",
        "exec_command",
        {"cmd": 'apply_patch "*** Begin Patch\n*** Add File: c.txt\n+cee\n*** End Patch\n"'},
    ),
    output(
        "call_t2_0",
        "Chunk ID: dd2397\nWall time: 0.0000 seconds\nProcess exited with code 127\n"
        "Original token count: 13\nOutput:\n/bin/bash: line 5: apply_patch: command not found\n",
    ),
    call(
        "call_t3_0",
        "shell",
        {"command": ["apply_patch", "*** Begin Patch\n*** Add File: d.txt\n+dee\n*** End Patch\n"]},
    ),
    output("call_t3_0", "unsupported call: shell"),
    call(
        "call_t4_0",
        "exec_command",
        {
            "cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: w.txt\n+w\n"
            "*** End Patch\nEOF",
            "workdir": "/w/sub",
        },
    ),
    output(
        "call_t4_0",
        "Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0.1 seconds\nOutput:\n"
        "Success. Updated the following files:\nA w.txt\n",
    ),
    call(
        "call_t5_0",
        "exec_command",
        {
            "cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ../outside.txt\n+o\n"
            "*** End Patch\nEOF"
        },
    ),
    output(
        "call_t5_0",
        "patch rejected: writing outside of the project; rejected by user approval settings",
    ),
    call("call_t6_0", "exec_command", {"cmd": "mkdir -p sub"}),
    output(
        "call_t6_0",
        "Chunk ID: c4f3d5\nWall time: 0.0000 seconds\nProcess exited with code 0\n"
        "Original token count: 0\nOutput:\n",
    ),
]


def feed(parser: CodexRolloutParser | CodexJsonParser, lines: list[str]) -> list[Event]:
    return [event for raw in lines for event in parser.feed(raw)]


def test_shell_patches_in_a_rollout_are_edits_and_rejected_ones_fail() -> None:
    events = feed(CodexRolloutParser(), ROLLOUT)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["apply_patch"] * 6 + ["exec_command"]
    assert [edited_paths(c) for c in calls] == [
        ("a.txt", "sub/new.txt"),
        ("missing.txt",),
        ("c.txt",),
        ("d.txt",),
        ("/w/sub/w.txt",),
        ("../outside.txt",),
        (),
    ]
    assert calls[0].arguments["input"] == UPDATE_A.rstrip("\n")
    assert calls[0].arguments["command"].startswith("apply_patch <<'PATCH'")  # kept as given
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    outcome = [results[c.call_id] for c in calls]
    assert [r.is_error for r in outcome] == [False, True, True, True, False, True, False]
    assert [r.name for r in outcome] == ["apply_patch"] * 6 + ["exec_command"]
    assert outcome[2].exit_code == 127
    assert len(results) == len(calls)  # the FileChange of a patch it saw is not shown again


def test_a_file_change_that_failed_fails_its_patch_whatever_the_output_says() -> None:
    lines = [
        call("c1", "exec_command", {"cmd": f"apply_patch <<'PATCH'\n{UPDATE_A}PATCH"}),
        file_change(
            "c1", {"/w/a.txt": {"type": "update", "unified_diff": "", "move_path": None}}, "failed"
        ),
        output("c1", "Wall time: 0.0000 seconds\nOutput:\n"),
    ]
    (result,) = [e for e in feed(CodexRolloutParser(), lines) if isinstance(e, ToolResult)]
    assert result.is_error and result.name == "apply_patch"


def test_a_file_change_no_call_showed_is_an_edit_of_its_own() -> None:
    moved = {"/w/a.txt": {"type": "update", "unified_diff": "", "move_path": "/w/b.txt"}}
    events = feed(CodexRolloutParser(), [file_change("c9", moved)])
    call_event, result = events
    assert isinstance(call_event, ToolCall) and isinstance(result, ToolResult)
    assert call_event.name == "file_change" and result.call_id == call_event.call_id
    assert edited_paths(call_event) == ("/w/a.txt", "/w/b.txt")
    assert not result.is_error and "Success." in result.text
    declined = feed(CodexRolloutParser(), [file_change("c8", moved, "declined")])
    assert isinstance(declined[1], ToolResult) and declined[1].is_error


def test_a_local_shell_call_that_applies_a_patch_is_an_edit() -> None:
    payload = {
        "type": "local_shell_call",
        "call_id": "ls1",
        "status": "completed",
        "action": {
            "type": "exec",
            "command": ["bash", "-lc", f"apply_patch <<'EOF'\n{UPDATE_A}EOF"],
            "working_directory": "/w",
        },
    }
    line = json.dumps({"timestamp": "t", "type": "response_item", "payload": payload})
    (event,) = [e for e in CodexRolloutParser().feed(line) if isinstance(e, ToolCall)]
    assert event.name == "apply_patch"
    assert edited_paths(event) == ("/w/a.txt", "/w/sub/new.txt")


# ----- ``exec --json`` lines, as Codex 0.171 printed them -----


def stream_item(kind: str, item: dict[str, Any]) -> str:
    return json.dumps({"type": kind, "item": item})


ARGUMENT_FORM = (
    "/bin/bash -lc 'apply_patch \"*** Begin Patch\n*** Add File: c.txt\n+cee\n*** End Patch\n\"'"
)
STREAM = [
    json.dumps({"type": "thread.started", "thread_id": "01a2436e-488d-7f42-bf6c-756dad99db34"}),
    json.dumps({"type": "turn.started"}),
    stream_item(
        "item.started",
        {
            "id": "item_1",
            "type": "file_change",
            "changes": [{"path": "/w/a.txt", "kind": "update"}],
            "status": "in_progress",
        },
    ),
    stream_item(
        "item.completed",
        {
            "id": "item_1",
            "type": "file_change",
            "changes": [{"path": "/w/a.txt", "kind": "update"}],
            "status": "completed",
        },
    ),
    stream_item(
        "item.started",
        {
            "id": "item_2",
            "type": "command_execution",
            "command": ARGUMENT_FORM,
            "aggregated_output": "",
            "exit_code": None,
            "status": "in_progress",
        },
    ),
    stream_item(
        "item.completed",
        {
            "id": "item_2",
            "type": "command_execution",
            "command": ARGUMENT_FORM,
            "aggregated_output": "/bin/bash: line 5: apply_patch: command not found\n",
            "exit_code": 127,
            "status": "failed",
        },
    ),
    stream_item(
        "item.completed",
        {
            "id": "item_3",
            "type": "command_execution",
            "command": "/bin/bash -lc 'mkdir -p sub'",
            "aggregated_output": "",
            "exit_code": 0,
            "status": "completed",
        },
    ),
]


def test_the_stream_shows_the_argument_form_as_a_failed_edit() -> None:
    events = feed(CodexJsonParser(), STREAM)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["file_change", "apply_patch", "command_execution"]
    assert [edited_paths(c) for c in calls] == [("/w/a.txt",), ("c.txt",), ()]
    assert calls[1].arguments["command"] == ARGUMENT_FORM
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.name, r.is_error, r.exit_code) for r in results] == [
        ("file_change", False, None),
        ("apply_patch", True, 127),
        ("command_execution", False, 0),
    ]


@pytest.mark.skipif(not transcripts_present(), reason="the real transcripts are not present")
def test_no_command_of_the_real_codex_transcripts_is_taken_for_a_patch() -> None:
    """The real Codex streams run dozens of shell commands and edit through
    ``file_change`` items: each command stays a command, each change an edit."""
    names: list[str] = []
    for path in sorted(TRANSCRIPTS.rglob("*")):
        if path.suffix in (".jsonl", ".txt") and "command_execution" in path.read_text(
            "utf-8", "replace"
        ):
            names += [e.name for e in parse_file(path) if isinstance(e, ToolCall)]
    assert names.count("command_execution") >= 24, names
    assert "apply_patch" not in names
    assert names.count("file_change") >= 1
