"""The small state files (``lead.json``, the repository lock, the snapshot of the git
directory a wave is checked against) are records the codec reads and writes; the files
written before they were records load."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from seawall.errors import SessionLockedError
from seawall.scope.repostate import RepoState, load_snapshot, save_snapshot
from seawall.state.leadlease import Lease, read_lease, take_lease
from seawall.state.repolock import repository_lock


def test_a_lease_file_of_the_writer_before_records_loads_and_a_new_one_has_its_keys(
    tmp_path: Path,
) -> None:
    (tmp_path / ".seawall").mkdir()
    old = {"session": "s1", "wave": 2, "pid": 4242, "started": 99, "since": 1700000000.123}
    (tmp_path / ".seawall" / "lead.json").write_text(json.dumps(old) + "\n")
    assert read_lease(tmp_path) == Lease(
        session="s1", wave=2, pid=4242, started=99, since=1700000000.123
    )
    (tmp_path / ".seawall" / "lead.json").write_text('{"session": "s1"}\n')
    assert read_lease(tmp_path) is None  # no wave, no pid: unreadable, and a lease is advisory
    lease = take_lease(tmp_path, session="s2", wave=3)
    written = json.loads((tmp_path / ".seawall" / "lead.json").read_text())
    assert list(written) == ["session", "wave", "pid", "started", "since"]
    assert read_lease(tmp_path) == Lease(**written)
    assert (written["session"], written["wave"], written["pid"]) == ("s2", 3, lease.pid)


def test_the_lock_names_a_dead_holder_it_takes_over(tmp_path: Path) -> None:
    (tmp_path / ".seawall").mkdir()
    lock = tmp_path / ".seawall" / "lock"
    lock.write_text(json.dumps({"session": "old", "pid": 999_999_999, "command": "run"}) + "\n")
    notes: list[str] = []
    with repository_lock(tmp_path, session="s1", command="resume", on_takeover=notes.append):
        holder = json.loads(lock.read_text())
        assert holder == {"session": "s1", "pid": os.getpid(), "command": "resume"}
    assert notes == [
        "took over the repository lock of session old (pid 999999999 is no longer running)"
    ]
    assert lock.read_text() == ""


def test_a_live_holder_is_named(tmp_path: Path) -> None:
    with (
        repository_lock(tmp_path, session="s1", command="run", on_takeover=print),
        pytest.raises(
            SessionLockedError, match=rf"session s1 \(pid {os.getpid()}, `seawall run`\)"
        ),
        repository_lock(tmp_path, session="s2", command="run", on_takeover=print),
    ):
        pass  # pragma: no cover


def test_a_repository_snapshot_of_the_writer_before_records_loads(tmp_path: Path) -> None:
    state = RepoState(
        files={"hooks/pre-commit": ("IyEvYmluL3NoCg==", 0o755), "config": ("W2NvcmVdCg==", 0o644)},
        refs={"HEAD": "ref:refs/heads/main", "refs/heads/main": "a" * 40},
        remote_refs={"origin/main": "b" * 40},
    )
    path = tmp_path / "repo-state.json"
    path.write_text(json.dumps(dataclasses.asdict(state), sort_keys=True) + "\n")
    assert load_snapshot(path) == state
    save_snapshot(state, path)
    assert load_snapshot(path) == state
