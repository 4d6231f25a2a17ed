"""``events.jsonl`` holds typed records only: every kind written and read back equal,
anything else refused, and older or foreign lines read without an error."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from seawall.breakers.trip import BreakerKind
from seawall.breakers.wave import WaveTrigger
from seawall.model import (
    BaselineChecks,
    CheckFailure,
    ChecksPolicy,
    Dropped,
    Enforcement,
    Isolation,
    Resolution,
    SetAsideRecord,
    Status,
)
from seawall.runner import RunCounts
from seawall.scope.enforce import Decision, ErrorClass, Failure
from seawall.scope.state_change import ChangeKind, StateChange
from seawall.telemetry import (
    BY_TAG,
    KINDS,
    AgentCommitsAbsorbed,
    AgentFinished,
    AgentSalvaged,
    AgentStartFailed,
    BreakerLevel,
    BreakerNotHalting,
    BreakerReset,
    BreakerTripped,
    CarryoverClosed,
    CarryoverFiled,
    CheckpointFailed,
    ChecksRun,
    EventLog,
    FinishSource,
    GitLockRemoved,
    LeadReleased,
    MergeRefused,
    NotifyFailed,
    OrphanStopped,
    Published,
    RecoveryDecided,
    RemoteOrphansUnchecked,
    RepoStateChanged,
    ScopeCollision,
    ScopeDenied,
    ScopeViolation,
    ScopeWarning,
    SessionFinished,
    SessionHalted,
    SessionKilled,
    SessionStarted,
    StagnationDetected,
    TelemetryEvent,
    TelemetryRecord,
    UnattributedChanges,
    UnknownEvent,
    WaveFinished,
    WaveMerged,
    WavePlanned,
    WaveRebased,
    WorktreeFallback,
    WorktreeKept,
    WorktreeRecreated,
    read_events,
    read_line,
)
from seawall.telemetry import records as records_module
from seawall.telemetry.legacy import from_repr

BEFORE_TYPED = Path(__file__).with_name("events_before_typed.jsonl")

#: one record of every kind, each field away from its default where it has one
SAMPLES: tuple[TelemetryEvent, ...] = (
    SessionStarted(plan="plan.toml", target="main", base="b0", tasks=3),
    SessionHalted(wave=2, reason="session-time", elapsed_s=4800.0, limit_s=3600.0),
    SessionFinished(cost_usd=1.25, waves=3),
    SessionKilled(),
    LeadReleased(released=True),
    BreakerReset(agent="a", cleared=True),
    GitLockRemoved(path="/repo/.git/index.lock", age_s=61.5),
    Published(
        branch="seawall/s", base="main", commit="c1", number=7, url="u", created=True, error="e"
    ),
    NotifyFailed(notification="trip", attempts=3, error="URLError: refused"),
    WavePlanned(
        wave=1,
        tasks=("a", "b"),
        isolation=Isolation.WORKTREE,
        enforcement=Enforcement.WARN,
        base="b0",
        reason="5 agents",
    ),
    ScopeCollision(wave=1, action="split", lines=("a x b: docs/",)),
    WorktreeFallback(wave=1, reason="no space"),
    WorktreeRecreated(wave=1, path="/w/a"),
    WorktreeKept(wave=1, agent="a", path="/w/a", reason="uncommitted changes"),
    AgentCommitsAbsorbed(wave=1, ref="refs/seawall/s/w1-commits"),
    UnattributedChanges(
        wave=1,
        set_aside=SetAsideRecord(
            ref="refs/seawall/s/unattributed-w1",
            files=("x.txt",),
            left_in_place=("notes.md",),
            restore="git checkout refs/seawall/s/unattributed-w1 -- x.txt",
        ),
    ),
    RepoStateChanged(
        wave=1,
        change=StateChange(
            area="ref",
            name="refs/heads/main",
            kind=ChangeKind.CHANGED,
            before="b0",
            after="c9",
            agents=("a",),
            restored=True,
            saved="refs/seawall/s/quarantine/w1/main",
            note="n",
        ),
    ),
    ScopeViolation(wave=1, agent="a", files=("x.py",), action="left out of the merge"),
    ChecksRun(
        wave=1,
        policy=ChecksPolicy.BASELINE,
        verdict="known-failures",
        commit="c1",
        failure="pytest -q",
        baseline=BaselineChecks(
            commit="b0", failure=CheckFailure(command="pytest -q", returncode=1, output="1 failed")
        ),
        dropped=("b",),
    ),
    MergeRefused(wave=1, agent="b", reason="outside its scope"),
    WaveMerged(
        wave=1,
        integration="c1",
        merged=("a",),
        resolutions=(
            Resolution(
                path="docs/api.md",
                rule="both-added: later agent's version",
                agents=("b", "a"),
                kept="b",
                fix_task="a-fix",
            ),
        ),
        dropped=(Dropped(task="c", reason="conflict"),),
    ),
    RecoveryDecided(wave=1, agent="a", action="rescope", reason="spiral"),
    CarryoverFiled(
        task="a",
        kind="SPIRAL",
        wave=2,
        outcome="duplicate",
        number=4,
        url="u",
        fingerprint="f" * 16,
        tracker="memory",
        error="e",
    ),
    CarryoverClosed(
        number=4, reason="landed", closed=True, error="e", wave=3, agent="a", commit="c3"
    ),
    BreakerNotHalting(wave=3, line="seawall: stall", reason="no work is left"),
    WaveFinished(wave=1, statuses={"a": Status.DONE, "b": None}),
    WaveRebased(wave=2, base="b0", previous="b0", onto="b1"),
    AgentFinished(
        wave=1,
        agent="a",
        source=FinishSource.HOOK,
        truncated=True,
        stop_reason="timed out",
        counts=RunCounts(turns=3, tool_calls=2, cost_usd=0.5, last_tool="Bash"),
        status=Status.PARTIAL,
        summary="s",
        remaining="r",
        inferred=True,
        reason="why",
        agent_id="agent-7",
    ),
    AgentStartFailed(wave=1, task="a", reason="exited 2", exit_code=2, stderr="boom"),
    AgentSalvaged(wave=1, agent="a", checkpoint="c0"),
    OrphanStopped(agent="a", remote=("node-1: pid 7",), process_groups=(12, 13)),
    RemoteOrphansUnchecked(agent="a", error="cluster unreachable"),
    BreakerTripped(
        wave=1,
        level=BreakerLevel.WAVE,
        agent="a",
        breaker=BreakerKind.LOOP,
        evidence="`ls` x4",
        count=4.0,
        limit=3.0,
        snapshot=True,
        next_action="stop",
        trigger=WaveTrigger.STALL,
        detail="stalled",
    ),
    StagnationDetected(
        wave=1,
        agent="a",
        pattern="error-echo",
        source="tail",
        occurrences=3,
        evidence="e",
        error_class="edit-format-friction",
    ),
    ScopeWarning(
        decision=Decision.WARN,
        error_class=ErrorClass.SCOPE_DENIED,
        failure=Failure.UNKNOWN_WRITE,
        problem="p",
        wave=1,
        task="a",
        tool="Write",
    ),
    ScopeDenied(
        decision=Decision.DENY,
        error_class=ErrorClass.COMMAND_BLOCKED,
        problem="p",
        wave=1,
        task="a",
        tool="Bash",
    ),
    CheckpointFailed(task="a", error="git failed"),
)


def test_every_kind_has_a_sample_and_the_docstring_lists_it() -> None:
    assert sorted(type(s).__name__ for s in SAMPLES) == sorted(k.__name__ for k in KINDS)
    assert len(BY_TAG) == len(KINDS)
    doc = records_module.__doc__ or ""
    assert [tag for tag in BY_TAG if f"``{tag}``" not in doc] == []


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.event)
def test_every_kind_reads_back_as_the_record_written(
    tmp_path: Path, sample: TelemetryEvent
) -> None:
    log = EventLog(tmp_path / "events.jsonl", session="s-1")
    written = log.append(sample)
    assert written.session == "s-1" and written.ts > 0
    assert msgspec.structs.replace(written, ts=0.0, session="") == sample
    assert list(read_events(log.path)) == [written]
    assert list(read_events(log.path, type(sample))) == [written]
    line = json.loads(log.path.read_text())
    assert line["event"] == sample.event and line["session"] == "s-1"


def test_a_record_holds_its_nested_records_as_json_objects(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", session="s")
    for sample in SAMPLES:
        log.append(sample)
    text = log.path.read_text()
    assert "Resolution(" not in text and "StateChange(" not in text and "object at 0x" not in text
    merge = next(json.loads(line) for line in text.splitlines() if '"event":"merge"' in line)
    assert merge["resolutions"][0]["kept"] == "b" and merge["dropped"] == [
        {"task": "c", "reason": "conflict"}
    ]


@pytest.mark.parametrize(
    "thing",
    [
        {"event": "merge", "wave": 1},
        "merge",
        UnknownEvent(event="merge"),
        RunCounts(),
        TelemetryRecord(),
    ],
    ids=["dict", "str", "unknown-event", "other-record", "the-base-class"],
)
def test_anything_but_a_record_of_a_kind_is_refused(tmp_path: Path, thing: object) -> None:
    log = EventLog(tmp_path / "events.jsonl", session="s")
    with pytest.raises(TypeError, match=r"takes a record of seawall\.telemetry"):
        log.append(thing)  # type: ignore[type-var]
    assert not log.path.exists()


def test_listeners_get_the_typed_record_as_written(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", session="s")
    heard: list[TelemetryEvent] = []
    log.listeners.append(heard.append)
    written = log.append(SessionKilled())
    assert heard == [written] and isinstance(heard[0], SessionKilled)


def test_a_file_name_that_is_not_utf8_round_trips(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", session="s")
    written = log.append(WorktreeRecreated(wave=1, path="/w/caf\udce9"))
    assert list(read_events(log.path)) == [written]


def test_lines_written_before_the_records_were_typed_are_read_as_records() -> None:
    records = list(read_events(BEFORE_TYPED))
    assert len(records) == len(BEFORE_TYPED.read_text().splitlines())
    unknown = [r for r in records if isinstance(r, UnknownEvent)]
    assert unknown == []
    merges = [r for r in records if isinstance(r, WaveMerged) and r.resolutions]
    assert [m.resolutions for m in merges] == [
        (
            Resolution(
                path="docs/api.md",
                rule="both-added: later agent's version",
                agents=("docs-auth", "docs-api"),
                kept="docs-auth",
            ),
        )
    ]
    finished = [r for r in records if isinstance(r, AgentFinished)]
    coordinator = [r for r in finished if r.source is FinishSource.COORDINATOR]
    assert coordinator and all(r.counts is not None and r.counts.turns for r in coordinator)
    (hook,) = [r for r in finished if r.source is FinishSource.HOOK]
    assert (hook.agent, hook.status, hook.agent_id) == ("t1", Status.DONE, "agent-7")
    (change,) = [r.change for r in records if isinstance(r, RepoStateChanged)]
    assert (change.area, change.kind, change.agents) == ("hook", ChangeKind.ADDED, ("a",))
    (aside,) = [r.set_aside for r in records if isinstance(r, UnattributedChanges)]
    assert aside.files == ("x.txt",) and aside.restore == "git restore"
    agent_trip, wave_trip = [r for r in records if isinstance(r, BreakerTripped)]
    assert agent_trip.breaker is BreakerKind.LOOP and agent_trip.level is BreakerLevel.AGENT
    assert wave_trip.trigger is WaveTrigger.STALL and wave_trip.level is BreakerLevel.WAVE
    filed = [r for r in records if isinstance(r, CarryoverFiled)]
    assert [(r.task, r.kind, r.outcome, r.number) for r in filed] == [
        ("report-csv", "FAILED", "created", 1),
        ("report-csv", "FAILED", "created", 1),
    ]
    (warning,) = [r for r in records if isinstance(r, ScopeWarning)]
    assert warning.error_class is ErrorClass.SCOPE_DENIED and warning.tool == "Write"


def test_an_unknown_kind_or_unreadable_fields_are_an_unknown_event() -> None:
    foreign = read_line(b'{"ts": 5, "event": "deployed", "session": "s", "where": "prod"}')
    assert isinstance(foreign, UnknownEvent)
    assert (foreign.event, foreign.ts, foreign.session) == ("deployed", 5.0, "s")
    assert foreign.data["where"] == "prod" and "does not know" in foreign.problem
    broken = read_line(b'{"event": "merge", "wave": "two", "integration": null}')
    assert isinstance(broken, UnknownEvent) and broken.event == "merge"
    assert "$.wave" in broken.problem and broken.data["wave"] == "two"


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"   \n",
        b'{"ts": 1, "event": "agent_fin',
        b"[1, 2]",
        b'"merge"',
        b"\xff\xfe",
        b'{"event": 5, "ts": "yesterday"}',
        b'{"event": "merge", "wave": 1, "integration": null, '
        b'"resolutions": ["Resolution(path=open(\'x\'))"]}',
        b'{"event": "merge", "wave": 1, "integration": null, "resolutions": ["'
        + b"(" * 5000
        + b'"]}',
    ],
)
def test_no_line_makes_reading_fail(line: bytes) -> None:
    record = read_line(line)
    assert record is None or isinstance(record, (*KINDS, UnknownEvent))


def test_a_torn_or_foreign_line_does_not_stop_the_file(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"event": "x-tool", "n": 1}\n[]\n{"ts": 1, "event": "sess\n')
    log = EventLog(path, session="s")
    written = log.append(SessionKilled())
    assert [type(r) for r in read_events(path)] == [UnknownEvent, SessionKilled]
    assert list(read_events(path, SessionKilled)) == [written]


def test_a_repr_is_read_as_its_literal_fields_and_nothing_else() -> None:
    assert from_repr("Dropped(task='b', reason='conflict')") == {"task": "b", "reason": "conflict"}
    assert from_repr("PosixPath('/w/a')") == "/w/a"
    nested = from_repr("Outer(inner=Inner(n=1), names=('a',))")
    assert nested == {"inner": {"n": 1}, "names": ("a",)}
    for text in ("Resolution(path=open('x'))", "Read(file=foo.ts)", "plain words", "f(1, 2)"):
        assert from_repr(text) == text
