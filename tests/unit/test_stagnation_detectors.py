"""Spec 004's detectors, each threshold with its negative twin."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from seawall.breakers import BreakerKind, call_key, turn_key
from seawall.breakers.polls import BackgroundWatch
from seawall.codec import decode, encode, to_data
from seawall.events import Event, HumanTurn, Message, ToolCall, ToolResult, Turn
from seawall.model import BreakerLimits, StagnationConfig, Status
from seawall.stagnation import (
    AgentMonitor,
    AgentStagnation,
    ErrorClass,
    ErrorEchoDetector,
    Finding,
    PaginationDetector,
    Pattern,
    Source,
    TurnKeyDetector,
    Verdict,
    classify_error,
    write_finding,
)
from seawall.telemetry import BreakerTripped, EventLog, StagnationDetected, read_events

_ids = itertools.count()


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id=f"d{next(_ids)}", name=name, arguments=arguments)


def pair(name: str, text: str = "ok", *, error: bool = False, **arguments: Any) -> list[Event]:
    tool_call = call(name, **arguments)
    return [tool_call, ToolResult(call_id=tool_call.call_id, text=text, is_error=error)]


def monitor(tmp_path: Path, agent: str = "t1", log: EventLog | None = None) -> AgentMonitor:
    return AgentMonitor(
        session="s1", wave=1, agent=agent, workspace=tmp_path, repo=tmp_path, event_log=log,
        clock=lambda: 0.0,
    )  # fmt: skip


def run(m: AgentMonitor, events: list[Event]) -> tuple[Finding, ...]:
    for event in events:
        m.observe(event)
    return m.finish()


def patterns(findings: tuple[Finding, ...]) -> list[Pattern]:
    return [finding.pattern for finding in findings]


# -- pagination spiral ---------------------------------------------------------------------


def paging(path: str, pages: int, tool: str = "Read") -> list[Event]:
    events: list[Event] = []
    for n in range(pages):
        events += pair(tool, f"lines {n}", file_path=path, offset=n * 200, limit=200)
    return events


def test_three_paged_reads_without_an_edit_are_a_pagination_spiral(tmp_path: Path) -> None:
    findings = run(monitor(tmp_path), paging("/r/foo.ts", 3))
    assert patterns(findings) == [Pattern.PAGINATION_SPIRAL]
    finding = findings[0]
    assert finding.verdict is Verdict.STAGNANT and finding.status is Status.PARTIAL
    assert finding.source is Source.COORDINATOR and finding.occurrences == 3
    assert finding.subject == "/r/foo.ts" and finding.error_class is None


def test_a_sequential_read_ending_in_an_edit_is_not_a_spiral(tmp_path: Path) -> None:
    events = paging("/r/foo.ts", 4) + pair("Edit", file_path="/r/foo.ts", old_string="a",
                                           new_string="b")  # fmt: skip
    assert run(monitor(tmp_path), events) == ()


def test_an_edit_between_the_reads_breaks_the_streak(tmp_path: Path) -> None:
    events = paging("/r/foo.ts", 2) + pair("Edit", file_path="/r/bar.ts") + paging("/r/foo.ts", 2)
    assert run(monitor(tmp_path), events) == ()


def test_two_paged_reads_are_not_a_spiral(tmp_path: Path) -> None:
    assert run(monitor(tmp_path), paging("/r/foo.ts", 2)) == ()


def test_failed_reads_read_nothing_and_do_not_count(tmp_path: Path) -> None:
    events = pair("Read", "file too large", error=True, file_path="/r/big.json")
    events += paging("/r/big.json", 2)
    assert run(monitor(tmp_path), events) == ()


def test_paged_greps_count_too(tmp_path: Path) -> None:
    events: list[Event] = []
    for n in range(3):
        events += pair("Grep", f"hits {n}", pattern="foo", path="/r/src", head_limit=10, offset=n)
    assert patterns(run(monitor(tmp_path), events)) == [Pattern.PAGINATION_SPIRAL]


def test_two_agents_paging_one_file_is_coordination(tmp_path: Path) -> None:
    first, second = monitor(tmp_path, "t1"), monitor(tmp_path, "t2")
    events = paging("/r/foo.ts", 4)
    for n, event in enumerate(events):
        (first if (n // 2) % 2 == 0 else second).observe(event)
    assert first.finish() == () and second.finish() == ()


# -- turn-key repetition ---------------------------------------------------------------------


def test_three_identical_consecutive_calls_are_a_spiral(tmp_path: Path) -> None:
    events: list[Event] = []
    for _ in range(3):
        events += pair("Bash", "FAIL: 1 test failed", error=True, command="pnpm test")
    findings = [f for f in run(monitor(tmp_path), events)
                if f.pattern is Pattern.TURN_KEY_REPETITION]  # fmt: skip
    assert len(findings) == 1
    assert findings[0].verdict is Verdict.SPIRAL and findings[0].status is Status.SPIRAL
    assert findings[0].occurrences == 3 and "pnpm test" in findings[0].evidence


def test_pagination_arguments_are_stripped_from_the_turn_key(tmp_path: Path) -> None:
    events: list[Event] = []
    for n in range(3):
        events += pair("Read", "same text", file_path="/r/a.py", offset=n, limit=1)
    found = patterns(run(monitor(tmp_path), events))
    assert Pattern.TURN_KEY_REPETITION in found


def test_another_call_between_breaks_the_repetition(tmp_path: Path) -> None:
    events: list[Event] = []
    for n in range(3):
        events += pair("Bash", "1 failed", command="pnpm test")
        events += pair("Edit", file_path="/r/a.ts", old_string=str(n), new_string=f"{n}!")
    assert Pattern.TURN_KEY_REPETITION not in patterns(run(monitor(tmp_path), events))


def test_a_repeated_call_seeing_changing_output_is_a_poll(tmp_path: Path) -> None:
    events: list[Event] = []
    for n in range(5):
        events += pair("Bash", f"{n * 20}% done", command="tail -1 build.log")
    assert run(monitor(tmp_path), events) == ()


def test_timing_noise_is_not_a_change(tmp_path: Path) -> None:
    events: list[Event] = []
    for n in range(3):
        events += pair("Bash", f"5 passed in 0.{n}1s", command="pytest -q")
    assert Pattern.TURN_KEY_REPETITION in patterns(run(monitor(tmp_path), events))


def test_polling_a_background_task_is_not_turn_key_repetition(tmp_path: Path) -> None:
    events: list[Event] = []
    for _ in range(5):
        events += pair("TaskOutput", "running", task_id="b1", block=True)
    assert run(monitor(tmp_path), events) == ()


# -- error echo ------------------------------------------------------------------------------


def echo(old: str, times: int, error: str, *, vary_new: bool = True) -> list[Event]:
    events: list[Event] = []
    for n in range(times):
        events += pair("Read", f"file body {n}", file_path="/r/a.py")
        new = f"fixed {n}" if vary_new else "fixed"
        events += pair("Edit", error, error=True, file_path="/r/a.py", old_string=old,
                       new_string=new)  # fmt: skip
    return events


def test_the_same_edit_failing_three_times_is_error_echo(tmp_path: Path) -> None:
    error = (
        "<tool_use_error>String to replace not found in file.\nString: def f(x):</tool_use_error>"
    )
    m = monitor(tmp_path)
    live: list[Finding] = []
    m.add_listener(live.append)
    for event in echo("def f(x):", 3, error):
        m.observe(event)
    assert [f.pattern for f in live] == [Pattern.ERROR_ECHO]  # live, before finish
    finding = live[0]
    assert finding.error_class is ErrorClass.EDIT_FORMAT_FRICTION
    assert finding.verdict is Verdict.FAILED and finding.status is Status.FAILED
    assert finding.source is Source.TAIL and finding.occurrences == 3


def test_the_same_error_twice_is_not_yet_an_echo(tmp_path: Path) -> None:
    findings = run(monitor(tmp_path), echo("def f(x):", 2, "String to replace not found"))
    assert Pattern.ERROR_ECHO not in patterns(findings)


def test_different_fixes_failing_alike_are_not_an_echo(tmp_path: Path) -> None:
    events: list[Event] = []
    for n in range(3):
        events += pair("Edit", "String to replace not found", error=True, file_path="/r/a.py",
                       old_string=f"variant {n}", new_string="x")  # fmt: skip
    assert Pattern.ERROR_ECHO not in patterns(run(monitor(tmp_path), events))


def test_a_cancelled_sibling_is_not_an_echo(tmp_path: Path) -> None:
    m = monitor(tmp_path)
    for _ in range(3):
        tool_call = call("Bash", command="make")
        m.observe(tool_call)
        m.observe(ToolResult(call_id=tool_call.call_id, text="Sibling tool call errored",
                             is_error=True, cancelled=True))  # fmt: skip
    assert m.finish() == ()


@pytest.mark.parametrize(
    ("text", "exit_code", "expected"),
    [
        ("String to replace not found in file.", None, ErrorClass.EDIT_FORMAT_FRICTION),
        ("Found 3 matches of the string to replace, but replace_all is false", None,
         ErrorClass.EDIT_FORMAT_FRICTION),
        ("old_string is not unique in the file", None, ErrorClass.EDIT_FORMAT_FRICTION),
        ("seawall: scope violation: src/other.py is outside the wave scope", 2,
         ErrorClass.SCOPE_DENIED),
        ("PreToolUse:Edit hook error: denied", 2, ErrorClass.SCOPE_DENIED),
        ("seawall: command blocked by the command policy: npm publish", 2,
         ErrorClass.COMMAND_BLOCKED),
        ("seawall scope-denied: docs/x.md is outside this task's scope", None,
         ErrorClass.SCOPE_DENIED),
        ("seawall command-blocked: `git push --force` is denied", None,
         ErrorClass.COMMAND_BLOCKED),
        ("error: mismatched types", 1, ErrorClass.OTHER),
    ],
)  # fmt: skip
def test_error_class_taxonomy(text: str, exit_code: int | None, expected: ErrorClass) -> None:
    assert classify_error(text, exit_code=exit_code) is expected


# -- status-partial --------------------------------------------------------------------------


def test_a_live_status_partial_is_recorded_once(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", session="s1")
    m = monitor(tmp_path, log=log)
    m.observe(Message(text="Progress so far.\nSTATUS: partial — parser done | REMAINING: tests"))
    m.observe(Message(text="STATUS: partial — still"))
    records = list(read_events(tmp_path / "events.jsonl", StagnationDetected))
    assert len(records) == 1  # durable at once, even if the agent is killed now
    assert records[0].pattern == "status-partial" and records[0].source == "tail"
    assert records[0].occurrences == 1 and records[0].error_class is None
    assert "error_class" not in (tmp_path / "events.jsonl").read_text()
    assert m.live_status is Status.PARTIAL


def test_a_quoted_status_is_not_a_status(tmp_path: Path) -> None:
    m = monitor(tmp_path)
    m.observe(Message(text="The prompt says to end with `STATUS: partial` when unfinished."))
    m.observe(Message(text="> STATUS: failed — quoted"))
    assert m.finish() == () and m.live_status is None


def test_status_done_is_no_finding(tmp_path: Path) -> None:
    m = monitor(tmp_path)
    m.observe(Message(text="All good.\nSTATUS: done — implemented the parser"))
    assert m.finish() == () and m.live_status is Status.DONE


def test_records_carry_the_schema_fields(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", session="s1")
    m = monitor(tmp_path, log=log)
    run(m, echo("x = 1", 3, "String to replace not found") + paging("/r/b.py", 3))
    lines = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    by_pattern = {line["pattern"]: line for line in lines}
    assert set(by_pattern) == {"error-echo", "pagination-spiral"}
    for line in lines:
        assert {"ts", "event", "session", "wave", "agent", "pattern", "source", "occurrences",
                "evidence"} <= set(line)  # fmt: skip
        assert line["session"] == "s1" and line["wave"] == 1 and line["agent"] == "t1"
    assert by_pattern["error-echo"]["error_class"] == "edit-format-friction"
    assert "error_class" not in by_pattern["pagination-spiral"]
    records = list(read_events(tmp_path / "events.jsonl", StagnationDetected))
    assert [r.pattern for r in records] == [line["pattern"] for line in lines]


def test_finish_is_idempotent(tmp_path: Path) -> None:
    m = monitor(tmp_path, log=EventLog(tmp_path / "e.jsonl", session="s1"))
    run(m, paging("/r/a.py", 3))
    assert len(m.finish()) == 1
    assert len(list(read_events(tmp_path / "e.jsonl"))) == 1


def test_stagnation_thresholds_come_from_the_config(tmp_path: Path) -> None:
    m = AgentMonitor(session="s1", wave=1, agent="t1", workspace=tmp_path, repo=tmp_path,
                     stagnation=StagnationConfig(pagination_reads=5))  # fmt: skip
    assert run(m, paging("/r/a.py", 4)) == ()


# -- each detector alone: its own rules over the turn key and facts it is given ------------


def observe_calls(
    detector: PaginationDetector | TurnKeyDetector, events: list[Event], watch: BackgroundWatch
) -> None:
    for event in events:
        if isinstance(event, ToolCall):
            detector.observe_call(event, turn_key(event.name, event.arguments), watch.judge(event))
        elif isinstance(event, ToolResult):
            detector.observe_result(event)


def test_the_pagination_detector_alone_keeps_a_spiral_until_its_path_is_edited() -> None:
    detector, watch = PaginationDetector(agent="t1"), BackgroundWatch()
    observe_calls(detector, paging("/r/foo.ts", 3) + paging("/r/bar.ts", 2), watch)
    assert [(f.subject, f.occurrences) for f in detector.finish()] == [("/r/foo.ts", 3)]
    observe_calls(detector, pair("Edit", file_path="/r/foo.ts", old_string="a"), watch)
    assert detector.finish() == []


def test_the_turn_key_detector_alone_counts_runs_but_no_waits_or_cancelled_calls() -> None:
    def make() -> list[Event]:
        return pair("Bash", "same", command="make")

    detector, watch = TurnKeyDetector(agent="t1", threshold=3), BackgroundWatch()
    waits = [e for _ in range(4) for e in pair("TaskOutput", "running", task_id="b1")]
    observe_calls(detector, make() + waits + make() + make(), watch)  # waits neither count
    (finding,) = detector.finish()  # nor break the run
    assert finding.occurrences == 3 and finding.subject == call_key("Bash", {"command": "make"})
    detector = TurnKeyDetector(agent="t1", threshold=3)
    third = call("Bash", command="make")
    cancelled = ToolResult(call_id=third.call_id, is_error=True, cancelled=True)
    observe_calls(detector, make() + make() + [third, cancelled], watch)
    assert detector.finish() == []  # the third never ran: two repeats only


def test_a_person_speaking_ends_the_turn_key_run() -> None:
    def make() -> list[Event]:
        return pair("Bash", "same", command="make")

    watcher = AgentStagnation(agent="t1")
    for event in [*make(), *make(), HumanTurn(text="try once more"), *make(), *make()]:
        watcher.observe(event)
    assert watcher.findings() == ()  # two and two, never three in a row
    watcher = AgentStagnation(agent="t1")
    for event in [*make(), *make(), Message(text="retrying"), *make()]:
        watcher.observe(event)  # the agent's own words are no person's
    assert [f.occurrences for f in watcher.findings()] == [3]


def test_the_error_echo_detector_alone_returns_its_finding_live() -> None:
    detector = ErrorEchoDetector(agent="t1", threshold=2)
    found: list[Finding | None] = []
    for _ in range(2):
        failing = call("Bash", command="make  build")
        detector.observe_call(failing, call_key(failing.name, failing.arguments))
        found.append(detector.observe_result(
            ToolResult(call_id=failing.call_id, is_error=True, text="error: no rule")
        ))  # fmt: skip
    assert found[0] is None and found[1] is not None
    assert found[1].pattern is Pattern.ERROR_ECHO and found[1].subject == "Bash:make build"


# -- AgentStagnation without the breaker ---------------------------------------------------


def test_agent_stagnation_alone_returns_live_findings_and_runs_post_wave_once() -> None:
    watcher = AgentStagnation(agent="t1", workspace=Path("/r"), repo=Path("/r"))
    live = [watcher.observe(event) for event in pair("Bash", "ok", command="git stash")]
    assert [f.pattern for f in live if f is not None] == [Pattern.GIT_WRITE]
    for event in paging("/r/a.py", 3):
        assert watcher.observe(event) is None
    first = watcher.findings()
    assert [f.pattern for f in first] == [Pattern.GIT_WRITE, Pattern.PAGINATION_SPIRAL]
    assert watcher.findings() == first and watcher.finished


def test_without_a_workspace_git_write_detection_is_off() -> None:
    watcher = AgentStagnation(agent="t1")
    assert all(watcher.observe(e) is None for e in pair("Bash", "ok", command="git push"))


def test_a_finding_round_trips_through_its_ledger_record(tmp_path: Path) -> None:
    finding = Finding(
        agent="t1", pattern=Pattern.ERROR_ECHO, source=Source.TAIL, verdict=Verdict.FAILED,
        occurrences=3, evidence="e", error_class=ErrorClass.SCOPE_DENIED, subject="Edit:a",
    )  # fmt: skip
    record = json.loads(encode(finding))
    assert record["error_class"] == "scope-denied" and record["verdict"] == "failed"
    assert decode(encode(finding), Finding) == finding
    event = to_data(finding.event(wave=2))
    assert event == {"wave": 2, "agent": "t1", "pattern": "error-echo", "source": "tail",
                     "occurrences": 3, "evidence": "e", "error_class": "scope-denied"}  # fmt: skip
    log = EventLog(tmp_path / "events.jsonl", session="s")
    write_finding(log, replace(finding, pattern=Pattern.GIT_WRITE, error_class=None), wave=2)
    write_finding(log, finding, wave=2)
    lines = [json.loads(line) for line in log.path.read_text().splitlines()]
    written = [{k: v for k, v in line.items() if k != "ts"} for line in lines]
    assert written == [
        {"event": "stagnation_detected", "session": "s", "wave": 2, "agent": "t1",
         "pattern": "git-write", "source": "tail", "occurrences": 3, "evidence": "e"},
        {"event": "stagnation_detected", "session": "s", **event},
    ]  # fmt: skip
    records = list(read_events(log.path, StagnationDetected))
    assert [(r.event, r.session, r.pattern, r.error_class) for r in records] == [
        ("stagnation_detected", "s", "git-write", None),
        ("stagnation_detected", "s", "error-echo", "scope-denied"),
    ]
    assert len(list(read_events(log.path))) == 2


def test_a_turn_past_the_deadline_trips_once_and_records_it(tmp_path: Path) -> None:
    now = [0.0]
    log = EventLog(tmp_path / "events.jsonl", session="s")
    monitor = AgentMonitor(
        session="s", wave=1, agent="t1", workspace=tmp_path, repo=tmp_path,
        limits=BreakerLimits(max_session_minutes=1), event_log=log, clock=lambda: now[0],
    )  # fmt: skip
    assert monitor.observe(Turn(number=1)) is None
    now[0] = 61.0
    trip = monitor.observe(Turn(number=2))
    assert trip is not None and trip.kind is BreakerKind.SESSION_TIME
    assert monitor.observe(Turn(number=3)) is None  # the first trip wins, recorded once
    records = list(read_events(log.path, BreakerTripped))
    assert [(r.agent, r.breaker) for r in records] == [("t1", trip.kind)]
