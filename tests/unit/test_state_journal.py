"""The ledger on disk: a save appends what changed; torn, damaged and foreign files."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from seawall.codec import encode, to_data
from seawall.errors import StateError
from seawall.model import Enforcement, Isolation, Status, Task
from seawall.session.engine import Session
from seawall.state.journal import snapshot_bytes
from seawall.state.ledger import (
    SCHEMA_VERSION,
    AgentRecord,
    IssueRef,
    SessionPhase,
    SessionState,
    WavePhase,
    WaveRecord,
)
from seawall.state.pieces import Parts, ledger_parts
from seawall.state.store import StateStore, load_state, read_ledger


def _state(waves: int, agents: int = 4) -> SessionState:
    state = SessionState(
        session="s1",
        name="demo",
        repo="/r",
        target_branch="main",
        start_commit="0" * 40,
        plan_text="[session]\nname = 'demo'\n" + "# a long plan\n" * 200,
    )
    for number in range(1, waves + 1):
        _add_wave(state, number, agents)
    return state


def _add_wave(state: SessionState, number: int, agents: int = 4) -> WaveRecord:
    wave = WaveRecord(
        number=number,
        tasks=[Task(id=f"w{number}a{i}", prompt="do it", scope=("x",)) for i in range(agents)],
        isolation=Isolation.NONE,
        enforcement=Enforcement.STRICT,
        max_turns=30,
        phase=WavePhase.DONE,
    )
    for i in range(agents):
        task = f"w{number}a{i}"
        wave.agents.append(
            AgentRecord(task=task, status=Status.DONE, final_text="STATUS: done " * 40)
        )
        state.task(task).attempts = 1
    state.waves.append(wave)
    return wave


def _store(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / "repo", "s1")


def test_a_save_appends_only_what_changed_however_long_the_history(tmp_path: Path) -> None:
    sizes = []
    for waves in (2, 40):
        store = StateStore(tmp_path / f"r{waves}", "s1")
        state = _state(waves)
        store.save(state)  # the first save writes the snapshot
        assert store.paths.journal.read_bytes() == b""
        state.waves[-1].agents[0].summary = "changed"
        state.cost_usd += 1.0
        store.save(state)
        (line,) = store.paths.journal.read_bytes().splitlines()
        parts = json.loads(line)["parts"]
        assert sorted(parts) == ["head", f"wave/{waves}"]
        sizes.append(len(line))
        assert to_data(load_state(store.paths.state)) == to_data(state)
    assert sizes[1] < sizes[0] * 1.1  # the same change costs the same at 2 and 40 waves


def test_new_tasks_waves_and_dropped_tasks_round_trip(tmp_path: Path) -> None:
    store = _store(tmp_path)
    state = _state(1)
    store.save(state)
    wave = _add_wave(state, 2)
    wave.agents[0].issue = IssueRef(number=7, url="u", existing=True)
    del state.tasks["w1a3"]
    state.pending = [Task(id="later", prompt="p")]
    store.save(state)
    again = load_state(store.paths.state)
    assert to_data(again) == to_data(state)
    assert again.waves[1].agents[0].issue == IssueRef(number=7, url="u", existing=True)
    assert "w1a3" not in again.tasks


def test_a_torn_last_line_is_the_previous_save_and_is_cut_before_the_next(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    state = _state(2)
    store.save(state)
    state.cost_usd = 1.0
    store.save(state)
    with store.paths.journal.open("ab") as handle:  # a crash in the middle of a save
        handle.write(b'{"base":1,"seq":3,"parts":{"head":{"cost_us')
    assert load_state(store.paths.state).cost_usd == 1.0
    writer = _store(tmp_path)
    state = writer.load()
    state.cost_usd = 2.0
    writer.save(state)
    assert load_state(store.paths.state).cost_usd == 2.0
    assert all(json.loads(line) for line in store.paths.journal.read_bytes().splitlines())


def test_a_damaged_line_before_the_last_is_named(tmp_path: Path) -> None:
    store = _store(tmp_path)
    state = _state(1)
    store.save(state)
    for cost in (1.0, 2.0):
        state.cost_usd = cost
        store.save(state)
    lines = store.paths.journal.read_bytes().splitlines(keepends=True)
    store.paths.journal.write_bytes(b"garbage\n" + lines[1])
    with pytest.raises(StateError, match=r"state\.jsonl:1 is not a valid journal line"):
        load_state(store.paths.state)


def test_a_stopped_session_is_compacted_and_the_backups_hold_the_ledger_before(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    state = _state(3)
    store.save(state)
    state.waves[0].agents[0].summary = "before the end"
    store.save(state)
    state.phase = SessionPhase.DONE
    store.save(state)
    assert store.paths.journal.read_bytes() == b""
    whole = json.loads(store.paths.state.read_text())
    assert whole["schema"] == SCHEMA_VERSION and whole["phase"] == "done"
    assert whole["waves"][0]["agents"][0]["summary"] == "before the end"
    # the two backups together are the ledger as the save before the compaction left it
    shutil.copyfile(store.paths.backup, store.paths.state)
    shutil.copyfile(store.paths.journal_backup, store.paths.journal)
    before = load_state(store.paths.state)
    assert before.phase is SessionPhase.RUNNING
    assert before.waves[0].agents[0].summary == "before the end"


def test_the_snapshot_backup_alone_ignores_a_journal_of_another_base(tmp_path: Path) -> None:
    store = _store(tmp_path)
    state = _state(1)
    store.save(state)
    state.phase = SessionPhase.HALTED
    store.save(state)
    state.phase = SessionPhase.RUNNING
    state.cost_usd = 3.0
    store.save(state)  # appended to the journal of the new snapshot
    shutil.copyfile(store.paths.backup, store.paths.state)
    assert load_state(store.paths.state).cost_usd == 0.0  # the old snapshot, whole


def test_a_save_by_another_process_in_between_makes_the_next_save_whole(
    tmp_path: Path,
) -> None:
    first = _store(tmp_path)
    state = _state(2)
    first.save(state)
    other = _store(tmp_path)
    theirs = other.load()
    theirs.cost_usd = 9.0
    other.save(theirs)
    state.waves[0].agents[0].summary = "mine"
    first.save(state)  # not a line on top of theirs: the whole ledger, as before
    read = read_ledger(first.paths.state)
    assert to_data(read.state) == to_data(state)
    assert read.base == read.seq  # a fresh snapshot


def test_an_unknown_schema_is_refused_with_the_versions_read(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save(_state(1))
    data = json.loads(store.paths.state.read_text())
    store.paths.state.write_text(json.dumps({**data, "schema": 99}))
    with pytest.raises(StateError, match=r"schema version 99; this seawall reads versions 1, 2"):
        load_state(store.paths.state)


def test_a_field_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save(_state(1))
    data = json.loads(store.paths.state.read_text())
    data["waves"][0]["number"] = "one"
    store.paths.state.write_text(json.dumps(data))
    with pytest.raises(StateError, match=r"not a valid session ledger: .*waves\[0\]\.number"):
        load_state(store.paths.state)


def test_a_cut_finds_only_what_was_assigned_since_the_last(tmp_path: Path) -> None:
    state = _state(6)
    parts = Parts()
    first = parts.cut(state)
    assert first.changed == ledger_parts(state) and first.dropped == []
    again = parts.cut(state)
    assert again.changed == {} and again.dropped == []  # nothing assigned: nothing new

    state.waves[1].agents[2].issue = IssueRef(number=7, url="u")  # a done wave changes
    state.task("w1a0").signatures.append("sig")  # a list changed in place
    changed = parts.cut(state).changed
    assert sorted(changed) == ["task/w1a0", "wave/2"]
    assert b'"number":7' in changed["wave/2"] and b'"sig"' in changed["task/w1a0"]
    assert parts.pieces == ledger_parts(state)  # the same bytes as encoding everything


def test_a_done_wave_changed_after_a_load_is_saved(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save(_state(5))
    reader = _store(tmp_path)
    state = reader.load()
    state.waves[0].agents[0].issue = IssueRef(number=3, url="u")
    state.cost_usd = 2.0
    reader.save(state)
    (line,) = reader.paths.journal.read_bytes().splitlines()
    assert sorted(json.loads(line)["parts"]) == ["head", "wave/1"]
    assert to_data(load_state(reader.paths.state)) == to_data(state)


def test_the_first_save_of_a_reopened_session_appends(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    text = '[session]\nname = "demo"\n\n[[task]]\nid = "a"\nprompt = "x"\nscope = ["a"]\n'
    store = StateStore(repo, "s1")
    state = _state(3)
    state.plan_text = text
    store.save(state)
    snapshot = store.paths.state.stat().st_ino
    session = Session.open(repo, "s1")
    assert session.state is not None
    session.state.cost_usd = 5.0
    session.store.save(session.state)
    assert store.paths.state.stat().st_ino == snapshot  # not rewritten
    (line,) = store.paths.journal.read_bytes().splitlines()
    assert sorted(json.loads(line)["parts"]) == ["head"]


def test_a_snapshot_built_from_the_pieces_is_the_whole_ledger(tmp_path: Path) -> None:
    state = _state(3)
    state.task("w2a1").issue = IssueRef(number=4, url="u")
    state.pending = [Task(id="later", prompt="p")]
    built = snapshot_bytes(ledger_parts(state), 7)
    assert built.endswith(b"}\n") and built.count(b"\n") == 1
    whole = json.loads(encode({"schema": SCHEMA_VERSION, "seq": 7, **to_data(state)}))
    assert json.loads(built) == whole
    empty = SessionState(session="s", name="n", repo="/r", target_branch="m", start_commit="0")
    assert json.loads(snapshot_bytes(ledger_parts(empty), 1))["waves"] == []
