"""``seawall replay``: real transcript files through the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from seawall.replay import ReplayFormat, detect_format
from tests.fixtures_path import TRANSCRIPTS, transcripts_present


def seawall(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "seawall", *args],
        cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


def claude_read(n: int, path: str) -> list[str]:
    call_id = f"toolu_{n}"
    return [
        line({"type": "assistant", "message": {"id": f"m{n}", "role": "assistant", "content": [
            {"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": path}}]}}),
        line({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": "same text"}]}}),
    ]  # fmt: skip


def stream_json_loop(tmp_path: Path) -> Path:
    """``claude -p --output-format stream-json``: init, then the same Read four times."""
    path = tmp_path / "loop.jsonl"
    lines = [line({"type": "system", "subtype": "init", "session_id": "s1", "tools": []})]
    for n in range(4):
        lines += claude_read(n, "/r/a.py")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_every_event_and_the_trip_are_printed_with_their_line(tmp_path: Path) -> None:
    path = stream_json_loop(tmp_path)
    done = seawall("replay", str(path), cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    rows = [row.split("\t") for row in done.stdout.splitlines() if "\t" in row]
    calls = [row for row in rows if row[1] == "call"]
    assert [row[0] for row in calls] == [f"{path}:{n}" for n in (2, 4, 6, 8)]
    trips = [row for row in rows if row[1] == "TRIP"]
    assert len(trips) == 1 and trips[0][0] == f"{path}:8" and trips[0][2] == "breaker/loop"
    assert "(4/4)" in trips[0][3] and "/r/a.py" in trips[0][3]
    last = done.stdout.splitlines()[-1]
    assert last.endswith("1 trips (1 hard, 0 soft), 1 findings, 0 malformed lines")


def test_json_output_is_one_object_per_line_with_the_plans_limits(tmp_path: Path) -> None:
    path = stream_json_loop(tmp_path)
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "tuned"\n[session.breakers]\nmax_repeat_identical = 10\n'
        '[[task]]\nid = "a"\nprompt = "x"\n'
    )
    done = seawall("replay", str(path), "--json", "--plan", str(plan), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    records = [json.loads(row) for row in done.stdout.splitlines()]
    assert [r["kind"] for r in records if r["kind"] == "trip"] == []
    assert records[-1] == {
        "schema": "seawall.replay/1", "file": str(path), "kind": "summary",
        "format": "claude-stream-json", "trips": 0, "findings": 1, "malformed": 0,
        "hard_trips": 0, "soft_trips": 0,
    }  # fmt: skip
    steps = [r["step"] for r in records if r["kind"] == "call"]
    assert steps == [1, 2, 3, 4]


def test_a_codex_restart_loop_trips_on_the_third_identical_failure(tmp_path: Path) -> None:
    path = tmp_path / "codex.jsonl"
    lines = [line({"type": "thread.started", "thread_id": "t1"})]
    for _ in range(4):
        lines.append(line({"type": "turn.started"}))
        lines.append(line({"type": "turn.failed", "error": {"message": "usage limit reached"}}))
    path.write_text("".join(lines), encoding="utf-8")
    done = seawall("replay", "--only-trips", str(path), cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    rows = [row.split("\t") for row in done.stdout.splitlines() if "\t" in row]
    assert rows[0][:3] == [f"{path}:7", "TRIP", "breaker/command-failures"]
    assert "the run failed 3 times" in rows[0][3]


def test_a_file_that_is_no_transcript_is_named(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("just some notes\n", encoding="utf-8")
    done = seawall("replay", str(text), cwd=tmp_path)
    assert (
        done.returncode == 1
        and str(text) in done.stderr
        and "not an agent transcript" in (done.stderr)
    )
    missing = seawall("replay", str(tmp_path / "gone.jsonl"), cwd=tmp_path)
    assert missing.returncode == 1 and "gone.jsonl" in missing.stderr


def test_a_codex_rollout_file_is_recognised(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2025-01-01.jsonl"
    path.write_text(
        line({"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": {}})
    )
    assert detect_format(path) is ReplayFormat.CODEX_ROLLOUT


@pytest.mark.skipif(not transcripts_present(), reason="real transcripts not present")
@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("marot__spotter/short.jsonl", ReplayFormat.CLAUDE_SESSION),
        ("marot__spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl",
         ReplayFormat.CLAUDE_SUBAGENT),
        ("yuanyuanyuan__stark-repo-analyzer-skill/codex-events.jsonl", ReplayFormat.CODEX_EXEC),
        ("link-assistant__hive-mind/pr-4-ci-log-issue/session-1-log.txt", ReplayFormat.LOG),
    ],
)  # fmt: skip
def test_real_formats_are_detected(relative: str, expected: ReplayFormat) -> None:
    assert detect_format(TRANSCRIPTS / relative) is expected


@pytest.mark.skipif(not transcripts_present(), reason="real transcripts not present")
def test_replaying_several_real_files_at_once(tmp_path: Path) -> None:
    files = [
        TRANSCRIPTS / "marot__spotter/short.jsonl",
        TRANSCRIPTS / "link-assistant__hive-mind/issue-729-codex-loop/rapid-loop-section.txt",
    ]
    done = seawall("replay", "--only-trips", "--json", *map(str, files), cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    records = [json.loads(row) for row in done.stdout.splitlines()]
    summaries = [r for r in records if r["kind"] == "summary"]
    assert [(s["file"], s["trips"]) for s in summaries] == [(str(files[0]), 0), (str(files[1]), 3)]
