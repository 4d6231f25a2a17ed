"""The ledger cut into the pieces a save writes whole, encoding only what changed.

The pieces are the session's own fields (``head``), the recorded plan (``plan``), the
pending tasks (``pending``), one task's record (``task/<id>``) and one wave's record
(``wave/<n>``), each as JSON bytes. ``Parts`` keeps every piece's bytes and finds what
changed since its last cut by the records' own notes of their assignments (see
``seawall.state.ledger.Tracked``), never by visiting every record.
"""

from __future__ import annotations

from dataclasses import dataclass

from seawall.codec import encode
from seawall.model import Task
from seawall.state.ledger import (
    SessionState,
    TaskRecord,
    Tracked,
    WavePhase,
    WaveRecord,
    collect_changes,
    collecting,
    watch,
)

__all__ = ["HEAD", "PENDING", "PLAN", "Cut", "Parts", "ledger_parts"]

HEAD = "head"
PLAN = "plan"
PENDING = "pending"
_PLAN_FIELDS = ("plan_path", "plan_text")
_OWN_FIELDS = ("pending", "tasks", "waves", *_PLAN_FIELDS)


def _head_fields() -> tuple[str, ...]:
    names = SessionState.__dataclass_fields__
    return tuple(name for name in names if name not in _OWN_FIELDS)


_HEAD_FIELDS = _head_fields()


def ledger_parts(state: SessionState) -> dict[str, bytes]:
    """The ledger cut into the pieces a save writes whole: each piece's JSON bytes."""
    parts = Parts()
    parts.cut(state)
    return parts.pieces


@dataclass(slots=True)
class Cut:
    """What one cut found: the pieces whose bytes changed (or are new), and the keys of
    the pieces that are gone."""

    changed: dict[str, bytes]
    dropped: list[str]


class Parts:
    """Cuts a ledger into its pieces, encoding again only what was assigned since.

    ``pieces`` holds every piece's bytes as of the last cut. The records encoded are
    watched (see ``ledger.Tracked``): an assignment to one of them notes its piece in
    ``changes``, and the next cut encodes the noted pieces, the session's own fields,
    every open wave and the last one (whose lists the phases change in place), the
    waves and tasks added since (found at the end of their list and dict), and nothing
    else, so its cost does not depend on the number of earlier waves. The recorded plan
    and the pending tasks are encoded again when a different object was assigned.

    The first cut, and any cut of a ledger another cutter (or none) cut last, or whose
    list of waves or dict of tasks was replaced or shrank, encodes every piece.
    """

    def __init__(self) -> None:
        self.pieces: dict[str, bytes] = {}
        self._changes: dict[str, Tracked] = {}
        self._open: dict[str, WaveRecord] = {}
        self._state: SessionState | None = None
        # the list of waves, its last wave and length; the dict of tasks, its last id, size
        self._waves: tuple[list[WaveRecord], WaveRecord | None, int] | None = None
        self._tasks: tuple[dict[str, TaskRecord], str | None, int] | None = None
        self._plan: tuple[str, str] | None = None
        self._pending: tuple[list[Task], int] | None = None
        self._touched: set[str] = set()

    def take_changed(self) -> set[str]:
        """The keys of the pieces that changed (or are gone) since the last call."""
        touched, self._touched = self._touched, set()
        return touched

    def cut(self, state: SessionState) -> Cut:
        """Cut ``state``: the pieces that changed since the last cut."""
        pieces = self.pieces
        changed: dict[str, bytes] = {}
        dropped: list[str] = []
        added = self._added(state)
        if added is not None:
            for key, data in self._fresh(state, *added).items():
                if pieces.get(key) != data:
                    changed[key] = pieces[key] = data
        else:
            whole = self._whole(state)
            dropped = [key for key in pieces if key not in whole]
            changed = {key: data for key, data in whole.items() if pieces.get(key) != data}
            self.pieces = whole
        self._touched.update(changed)
        self._touched.update(dropped)
        self._state = state
        self._waves = (state.waves, state.waves[-1] if state.waves else None, len(state.waves))
        self._tasks = (state.tasks, next(reversed(state.tasks), None), len(state.tasks))
        self._plan = (state.plan_path, state.plan_text)
        self._pending = (state.pending, len(state.pending))
        return Cut(changed=changed, dropped=dropped)

    def _added(self, state: SessionState) -> tuple[list[str], list[WaveRecord]] | None:
        """The tasks and waves added to ``state`` since this cutter's last cut, when its
        watches still tell all that changed (else None: every piece is cut again).

        Tasks are added at the end of their dict and waves at the end of their list: the
        ids after the last one seen are the new ones; a count that does not add up means
        something was removed."""
        if state is not self._state or collecting(state) is not self._changes:
            return None
        waves, tasks = self._waves, self._tasks
        if waves is None or waves[0] is not state.waves or len(state.waves) < waves[2]:
            return None
        if waves[2] and state.waves[waves[2] - 1] is not waves[1]:
            return None
        if tasks is None or tasks[0] is not state.tasks:
            return None
        new_tasks: list[str] = []
        for task_id in reversed(state.tasks):
            if task_id == tasks[1]:
                break
            new_tasks.append(task_id)
        if len(new_tasks) != len(state.tasks) - tasks[2]:
            return None
        return new_tasks, state.waves[waves[2] :]

    def _whole(self, state: SessionState) -> dict[str, bytes]:
        """Every piece of ``state``, each record encoded and watched anew."""
        self._changes = {}
        self._open = {}
        collect_changes(state, self._changes)
        fresh = {HEAD: _head(state), PLAN: _plan(state), PENDING: encode(state.pending)}
        for task_id, task in state.tasks.items():
            key = f"task/{task_id}"
            fresh[key] = self._task(key, task)
        last = state.waves[-1] if state.waves else None
        for wave in state.waves:
            key = f"wave/{wave.number}"
            fresh[key] = self._wave(key, wave, last)
        return fresh

    def _fresh(
        self, state: SessionState, new_tasks: list[str], new_waves: list[WaveRecord]
    ) -> dict[str, bytes]:
        """The pieces noted, open or added since the last cut, encoded again."""
        fresh = {HEAD: _head(state)}
        if self._plan != (state.plan_path, state.plan_text):
            fresh[PLAN] = _plan(state)
        if self._pending != (state.pending, len(state.pending)):
            fresh[PENDING] = encode(state.pending)
        noted = dict(self._changes)
        self._changes.clear()
        for task_id in reversed(new_tasks):
            noted[f"task/{task_id}"] = state.tasks[task_id]
        for wave in new_waves:
            noted[f"wave/{wave.number}"] = wave
        for key, open_wave in self._open.items():
            noted.setdefault(key, open_wave)
        last = state.waves[-1] if state.waves else None
        if last is not None:
            noted.setdefault(f"wave/{last.number}", last)
        self._open = {}
        for key, record in noted.items():
            if isinstance(record, WaveRecord):
                fresh[key] = self._wave(key, record, last)
            elif isinstance(record, TaskRecord):
                fresh[key] = self._task(key, record)
        return fresh

    def _task(self, key: str, task: TaskRecord) -> bytes:
        watch(task, self._changes, key, task)
        return encode(task)

    def _wave(self, key: str, wave: WaveRecord, last: WaveRecord | None) -> bytes:
        """``wave``'s bytes; an open wave (or the last) is kept to be encoded on every
        cut, a settled one is watched with its agents."""
        if wave is last or wave.phase is not WavePhase.DONE:
            self._open[key] = wave
        else:
            changes = self._changes
            watch(wave, changes, key, wave)
            for agent in wave.agents:
                watch(agent, changes, key, wave)
        return encode(wave)


def _head(state: SessionState) -> bytes:
    return encode({name: getattr(state, name) for name in _HEAD_FIELDS})


def _plan(state: SessionState) -> bytes:
    return encode({name: getattr(state, name) for name in _PLAN_FIELDS})
