"""A save writes what was assigned since the last one, found without walking the ledger.

Every field of every record the ledger holds, assigned on a settled wave of a longer
history, reaches the next save; a save after no change appends only the session's own
fields; what a crash interrupts before the save is not lost from what was saved, and a
resume reaches the same ledger.
"""

from __future__ import annotations

import dataclasses
import enum
import errno
import json
import os
import signal
import subprocess
import sys
import time
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import pytest

from seawall import codec
from seawall.codec import to_data
from seawall.errors import StateError
from seawall.model import Enforcement, Isolation, Status, Task
from seawall.state import pieces
from seawall.state.journal import Journal
from seawall.state.ledger import (
    AgentRecord,
    Halt,
    HaltReason,
    SessionState,
    TaskRecord,
    WavePhase,
    WaveRecord,
)
from seawall.state.pieces import Parts
from seawall.state.store import StateStore, load_state

ROOT = Path(__file__).resolve().parents[2]


def _ledger(waves: int = 4) -> SessionState:
    state = SessionState(
        session="s1", name="n", repo="/r", target_branch="main", start_commit="0" * 40
    )
    for number in range(1, waves + 1):
        wave = WaveRecord(
            number=number,
            tasks=[Task(id=f"w{number}a{i}", prompt="p") for i in range(3)],
            isolation=Isolation.NONE,
            enforcement=Enforcement.STRICT,
            max_turns=30,
            phase=WavePhase.DONE,
        )
        for i in range(3):
            wave.agents.append(AgentRecord(task=f"w{number}a{i}", status=Status.DONE))
            state.task(f"w{number}a{i}").attempts = 1
        state.waves.append(wave)
    return state


def _other(hint: Any, current: Any) -> Any:
    """A value of type ``hint`` that is not ``current`` (and not None)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        return _other(next(a for a in args if a is not type(None)), current)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return next(member for member in hint if member != current)
    if hint is bool:
        return not current
    if hint is int:
        return (current or 0) + 7
    if hint is float:
        return (current or 0.0) + 2.5
    if hint is str:
        return f"{current or ''}changed"
    if origin is list:
        return [_other(args[0], None)]
    if origin is tuple:
        return (_other(args[0], None),)
    if origin in (dict, Mapping):
        return {"key": _other(args[1], None)}
    if hint is Halt:  # its fields belong to one reason each: filling all is refused
        return Halt(reason=HaltReason.RATE_LIMITED, detail="changed", wave=7)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        hints = get_type_hints(hint)
        fields = dataclasses.fields(hint)
        return hint(**{f.name: _other(hints[f.name], None) for f in fields if f.init})
    raise AssertionError(f"no value to make for {hint!r}")


def _targets(state: SessionState) -> dict[str, Any]:
    """One record of each kind, on the second of four settled waves."""
    wave = state.waves[1]
    return {"agent": wave.agents[0], "wave": wave, "task": state.tasks["w2a1"], "session": state}


# a key of the piece, and the save time (the save sets it)
_KEYS = {"wave": ("number",), "task": ("id",), "session": ("tasks", "waves", "updated_at")}
_KINDS = {"agent": AgentRecord, "wave": WaveRecord, "task": TaskRecord, "session": SessionState}
CASES = [
    (kind, f.name)
    for kind, cls in _KINDS.items()
    for f in dataclasses.fields(cls)
    if f.name not in _KEYS.get(kind, ())
]


@pytest.mark.parametrize("reopened", [False, True], ids=["same-writer", "after-a-load"])
@pytest.mark.parametrize(("kind", "name"), CASES, ids=[f"{k}.{n}" for k, n in CASES])
def test_an_assignment_to_any_field_reaches_the_next_save(
    tmp_path: Path, kind: str, name: str, reopened: bool
) -> None:
    store = StateStore(tmp_path, "s1")
    state = _ledger()
    store.save(state)
    if reopened:
        store = StateStore(tmp_path, "s1")
        state = store.load()
    record = _targets(state)[kind]
    before = to_data(getattr(record, name))
    value = _other(get_type_hints(type(record))[name], getattr(record, name))
    setattr(record, name, value)
    assert to_data(value) != before
    store.save(state)
    again = load_state(store.paths.state)
    assert to_data(getattr(_targets(again)[kind], name)) == to_data(value)
    assert to_data(again) == to_data(state)


def _without_time(state: SessionState) -> dict[str, Any]:
    """The ledger as data, but the time of its last save."""
    data: dict[str, Any] = to_data(state)
    data.pop("updated_at")
    return data


def test_a_save_after_no_change_appends_only_the_sessions_own_fields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seconds = iter(range(1_700_000_000, 1_700_000_100))  # each save a second later:
    monkeypatch.setattr(time, "time", lambda: float(next(seconds)))  # a new head
    store = StateStore(tmp_path, "s1")
    state = _ledger(10)
    store.save(state)
    store.save(state)
    store.save(state)
    lines = store.paths.journal.read_bytes().splitlines()
    assert [sorted(json.loads(line)["parts"]) for line in lines] == [["head"], ["head"]]


def test_a_cut_encodes_only_what_changed_however_long_the_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = _ledger(30)
    parts = Parts()
    parts.cut(state)
    encoded: list[object] = []

    def counting(value: object) -> bytes:
        encoded.append(value)
        return codec.encode(value)

    monkeypatch.setattr(pieces, "encode", counting)
    state.waves[3].agents[0].summary = "later"
    state.task("w7a2").rework = 1
    cut = parts.cut(state)
    assert sorted(cut.changed) == ["task/w7a2", "wave/4"]
    records = [value for value in encoded if not isinstance(value, dict)]
    # the two assigned records and the last wave, which is encoded on every save
    assert records == [state.waves[3], state.tasks["w7a2"], state.waves[-1]]


def test_two_writers_of_one_ledger_each_save_all_that_changed(tmp_path: Path) -> None:
    first, second = StateStore(tmp_path / "a", "s1"), StateStore(tmp_path / "b", "s1")
    state = _ledger()
    first.save(state)
    second.save(state)
    state.waves[0].agents[0].summary = "seen by both"
    second.save(state)
    first.save(state)
    for store in (first, second):
        saved = load_state(store.paths.state)
        assert saved.waves[0].agents[0].summary == "seen by both"
        assert _without_time(saved) == _without_time(state)


def test_a_failed_append_leaves_its_changes_to_the_next_save(tmp_path: Path) -> None:
    failing = [True]

    def full_disk() -> None:
        if failing[0]:
            raise OSError(errno.ENOSPC, "No space left on device")

    writer = Journal(tmp_path / "state.json", kill_point=full_disk)
    state = _ledger()
    failing[0] = False
    writer.save(state)
    failing[0] = True
    state.waves[0].agents[2].summary = "kept for later"
    with pytest.raises(StateError, match="the disk is full"):
        writer.save(state)
    assert load_state(tmp_path / "state.json").waves[0].agents[2].summary == ""
    failing[0] = False
    state.cost_usd = 3.0
    writer.save(state)
    assert to_data(load_state(tmp_path / "state.json")) == to_data(state)


_CRASH = """
import os, signal, sys
sys.path.insert(0, {root!r})
from seawall.state.store import StateStore
store = StateStore(__import__("pathlib").Path({repo!r}), "s1")
state = store.load()
state.waves[1].agents[0].summary = "saved"
store.save(state)
state.waves[2].agents[1].summary = "assigned, never saved"
state.task("w1a0").signatures.append("lost with the process")
os.kill(os.getpid(), signal.SIGKILL)
"""


def _resume(state: SessionState) -> None:
    """What the crashed process did after its save, done again by a resume."""
    state.waves[2].agents[1].summary = "assigned, never saved"
    state.task("w1a0").signatures.append("lost with the process")


def test_a_crash_between_assignment_and_save_loses_nothing_saved(tmp_path: Path) -> None:
    store = StateStore(tmp_path, "s1")
    store.save(_ledger())
    script = _CRASH.format(root=str(ROOT), repo=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], check=False, timeout=60)
    assert done.returncode == -signal.SIGKILL
    reader = StateStore(tmp_path, "s1")
    state = reader.load()
    assert state.waves[1].agents[0].summary == "saved"
    assert state.waves[2].agents[1].summary == ""
    assert state.tasks["w1a0"].signatures == []

    expected = _ledger()
    expected.waves[1].agents[0].summary = "saved"
    _resume(expected)
    _resume(state)
    reader.save(state)
    resumed = load_state(reader.paths.state)
    assert _without_time(resumed) == _without_time(expected)
    assert os.path.getsize(reader.paths.journal) > 0  # appended, not rewritten
