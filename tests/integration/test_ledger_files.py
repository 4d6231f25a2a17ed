"""The session's own files survive a crash mid-write: a torn event line, a broken ledger."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from seawall.telemetry import (
    EventLog,
    SessionFinished,
    SessionStarted,
    WaveFinished,
    read_events,
)
from tests.integration.sessionkit import make_repo, seawall, write_plan


def test_a_torn_last_event_line_does_not_swallow_the_next_event(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    EventLog(path, session="s").append(SessionStarted(plan="p", target="main", base="b", tasks=1))
    with path.open("ab") as handle:  # a crash in the middle of a write
        handle.write(b'{"ts": 1, "event": "agent_fin')
    log = EventLog(path, session="s")
    log.append(WaveFinished(wave=1, statuses={}))
    log.append(SessionFinished(cost_usd=0.0, waves=1))
    kinds = [record.event for record in read_events(path)]
    assert kinds == ["session_started", "wave_finished", "session_finished"]
    assert path.read_bytes().count(b"\n") == 4  # the torn line ended on its own line


def _one_task_session(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    spec = tmp_path / "agents.json"
    spec.write_text(json.dumps({"a": [{"writes": {"a.txt": "a\n"}, "final": "STATUS: done — a"}]}))
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "ledger"',
        tasks=[{"id": "a", "prompt": "Write a.", "scope": ["a.txt"]}],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env={"AGENT_SPEC": str(spec)})
    assert done.returncode == 0, done.stderr
    (state,) = (repo / ".seawall").glob("*/state.json")
    return repo, state


def test_a_corrupt_ledger_is_named_by_every_command_with_its_backup(tmp_path: Path) -> None:
    repo, state = _one_task_session(tmp_path)
    backup = state.with_name("state.json.bak")
    assert json.loads(backup.read_text())["session"] == state.parent.name
    whole = state.read_text()
    state.write_text(whole[: len(whole) // 2])  # truncated by a crash or a full disk
    for command in (["status", "--json"], ["resume"], ["kill"], ["status"]):
        done = seawall(*command, "--repo", str(repo), cwd=repo)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        # under --json the error is JSON on stdout; otherwise prose on stderr
        said = json.loads(done.stdout)["error"]["message"] if "--json" in command else done.stderr
        assert str(state) in said and "corrupt" in said, (command, said)
        assert f"cp {backup} {state}" in said, (command, said)
        assert "no unfinished" not in said
    shutil.copyfile(backup, state)
    done = seawall("status", "--json", "--repo", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["session"] == state.parent.name


def test_a_ledger_without_a_backup_says_so(tmp_path: Path) -> None:
    repo, state = _one_task_session(tmp_path)
    state.with_name("state.json.bak").unlink()
    state.write_text("{")
    done = seawall("resume", "--repo", str(repo), cwd=repo)
    assert done.returncode == 1
    assert str(state) in done.stderr and "there is no backup" in done.stderr
