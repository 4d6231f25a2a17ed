"""One tick at a time, with injected time and an injected executor (no sleeping)."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from seawall.runtime.files import file_lock
from seawall.unattended.breaker import BreakerState
from seawall.unattended.config import RunnerSettings
from seawall.unattended.executor import ExecutionRequest, ExecutionResult
from seawall.unattended.ledger import AttemptRow, Ledger
from seawall.unattended.paths import RunnerPaths
from seawall.unattended.queue import IntakeIssue, IssueLister, QueueFile
from seawall.unattended.report import TickAction, TickReport
from seawall.unattended.tick import run_tick

START = 1_800_000_000.0
COOLDOWN = 1800.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Executor:
    """Returns scripted results; records each request and what the ledger held then."""

    def __init__(self, clock: Clock, ledger: Ledger, run_seconds: float = 60.0) -> None:
        self.clock = clock
        self.ledger = ledger
        self.run_seconds = run_seconds
        self.results: list[ExecutionResult] = []
        self.requests: list[ExecutionRequest] = []
        self.rows_seen: list[tuple[AttemptRow, ...]] = []

    def script(self, *outcomes: str, gate: str | None = None) -> None:
        self.results += [
            ExecutionResult(outcome=o, publish_gate=gate, detail="scripted") for o in outcomes
        ]

    def __call__(self, request: ExecutionRequest) -> ExecutionResult:
        self.requests.append(request)
        self.rows_seen.append(self.ledger.read().rows)
        self.clock.advance(self.run_seconds)
        return self.results.pop(0)


class Runner:
    def __init__(self, tmp_path: Path, **settings: Any) -> None:
        self.dir = tmp_path / "runner"
        self.paths = RunnerPaths(dir=self.dir)
        self.clock = Clock()
        self.ledger = Ledger(self.paths.attempted)
        self.queue = QueueFile(self.paths.queue)
        self.executor = Executor(self.clock, self.ledger)
        base = RunnerSettings(breaker_cooldown_sec=COOLDOWN, repo=tmp_path, max_attempts=0)
        self.settings = replace(base, **settings)
        self.tmp = tmp_path

    def enqueue(self, *names: str) -> list[str]:
        ids = []
        for name in names:
            plan = self.tmp / f"{name}.toml"
            plan.write_text('[session]\n\n[[task]]\nid = "t"\nprompt = "do it"\n')
            ids.append(self.queue.enqueue_plan(plan, now=self.clock()).id)
        return ids

    def tick(self, lister: IssueLister | None = None) -> TickReport:
        return run_tick(
            self.dir,
            settings=self.settings,
            executor=self.executor,
            clock=self.clock,
            lister=lister,
        )

    def ticks(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.paths.ticks.read_text().splitlines()]

    def outcomes(self) -> list[str]:
        return [row.outcome for row in self.ledger.read().rows]

    def log(self) -> str:
        return self.paths.log.read_text()


@pytest.fixture
def runner(tmp_path: Path) -> Runner:
    return Runner(tmp_path)


def fail_three(runner: Runner) -> list[TickReport]:
    runner.executor.script("failed", "timed-out", "failed")
    reports = []
    for _ in range(3):
        reports.append(runner.tick())
        runner.clock.advance(300)
    return reports


def last_attempt_ts(runner: Runner) -> float:
    return runner.ledger.read().rows[-1].ts


def test_a_tick_records_the_attempt_before_and_after_the_run(runner: Runner) -> None:
    [item] = runner.enqueue("alpha")
    runner.executor.script("done")

    report = runner.tick()

    [seen] = runner.executor.rows_seen
    assert [(r.item, r.outcome) for r in seen] == [(item, "running")]
    rows = runner.ledger.read().rows
    assert [r.outcome for r in rows] == ["running", "done"]
    assert rows[0].task == rows[1].task == report.task
    assert rows[1].duration_sec == 60.0
    assert report.action is TickAction.RAN and report.outcome == "done"
    assert runner.queue.load().items == ()  # finished items leave the queue
    [line] = runner.ticks()
    assert line["action"] == "ran" and line["outcome"] == "done" and line["item"] == item
    assert line["consecutive_failures_before"] == 0 and line["duration_sec"] == 60.0
    request = runner.executor.requests[0]
    assert request.repo == runner.tmp and request.log_path == runner.paths.log
    assert request.item.plan == str(runner.tmp / "alpha.toml")


def test_an_empty_queue_is_an_idle_tick(runner: Runner) -> None:
    report = runner.tick()
    assert report.action is TickAction.IDLE
    assert runner.ticks()[0]["action"] == "idle"
    assert runner.executor.requests == []


def test_three_consecutive_failures_open_the_breaker_and_refuse_new_work(runner: Runner) -> None:
    items = runner.enqueue("a", "b", "c", "d")
    reports = fail_three(runner)

    assert [r.consecutive_failures_before for r in reports] == [0, 1, 2]
    assert reports[2].events == ("breaker-open",)
    assert reports[2].breaker is BreakerState.OPEN
    reason = runner.queue.load().blocked_reason
    assert reason is not None
    assert "3 consecutive failed attempts" in reason
    assert "outcome 'failed' of item c-3" in reason
    assert "seawall runner resume" in reason and "SEAWALL_RUNNER_BREAKER_LIMIT=0" in reason
    assert reason in runner.log()

    refused = runner.tick()

    assert refused.action is TickAction.BREAKER_OPEN
    assert refused.consecutive_failures_before == 3
    assert len(runner.executor.requests) == 3  # nothing ran
    last = runner.ledger.read().rows[-1]
    assert (last.item, last.outcome) == (items[3], "blocked-breaker")
    assert runner.ticks()[-1]["action"] == "breaker-open"
    assert runner.log().count(reason) == 2  # opening and the refused tick


def test_parked_outcomes_end_the_chain_in_a_tick_sequence(runner: Runner) -> None:
    runner.enqueue("a", "b", "c", "d", "e")
    runner.executor.script("failed", "failed", "needs-input", "failed", "failed", "done")
    for _ in range(5):
        report = runner.tick()
        assert report.action is TickAction.RAN
    assert report.breaker is BreakerState.CLOSED
    assert runner.tick().consecutive_failures_before == 2


def test_environmental_publish_refusals_open_the_breaker(runner: Runner) -> None:
    runner.enqueue("a", "b", "c")
    runner.executor.script("verification-failed", "verification-failed", "failed", gate="push")
    reports = [runner.tick() for _ in range(3)]
    assert reports[-1].breaker is BreakerState.OPEN
    assert "publish gate push" in (runner.queue.load().blocked_reason or "")


def test_the_cooldown_probe_closes_on_success(runner: Runner) -> None:
    runner.enqueue("a", "b", "c", "d", "e")
    fail_three(runner)
    opened_at = last_attempt_ts(runner)
    runner.clock.now = opened_at + COOLDOWN - 1
    assert runner.tick().action is TickAction.BREAKER_OPEN

    runner.clock.now = opened_at + COOLDOWN
    runner.executor.script("done")
    probe = runner.tick()

    assert probe.action is TickAction.RAN and probe.probe
    assert probe.breaker is BreakerState.CLOSED
    assert probe.events == ("breaker-closed",)
    assert runner.queue.load().blocked_reason is None
    assert "breaker closed" in runner.log()
    runner.executor.script("done")
    assert runner.tick().action is TickAction.RAN  # closed: work goes on at once


def test_a_failed_probe_reopens_for_another_cooldown(runner: Runner) -> None:
    runner.enqueue("a", "b", "c", "d", "e")
    fail_three(runner)
    runner.clock.now = last_attempt_ts(runner) + COOLDOWN
    runner.executor.script("failed")

    probe = runner.tick()

    assert probe.probe and probe.outcome == "failed"
    assert probe.breaker is BreakerState.OPEN and probe.events == ("breaker-open",)
    failed_at = runner.clock.now
    runner.clock.now = failed_at + COOLDOWN - 1
    assert runner.tick().action is TickAction.BREAKER_OPEN
    runner.clock.now = failed_at + COOLDOWN
    runner.executor.script("done")
    assert runner.tick().probe


def test_only_one_probe_per_cooldown(runner: Runner) -> None:
    runner.enqueue("a", "b", "c", "d", "e")
    fail_three(runner)
    runner.clock.now = last_attempt_ts(runner) + COOLDOWN
    runner.ledger.append(  # a probe that is still running (or was lost) is the newest attempt
        AttemptRow(item="x", task="probe", outcome="running", ts=runner.clock.now)
    )
    runner.executor.script("failed")
    report = runner.tick()  # retires the probe as died, which moved the clock
    assert report.action is TickAction.BREAKER_OPEN


def test_blocked_rows_do_not_move_the_cooldown(runner: Runner) -> None:
    runner.enqueue("a", "b", "c", "d")
    fail_three(runner)
    opened_at = last_attempt_ts(runner)
    refused = 0
    for offset in range(60, int(COOLDOWN), 120):  # a timer ticking every two minutes
        runner.clock.now = opened_at + offset
        refused += runner.tick().action is TickAction.BREAKER_OPEN
    assert refused == len(range(60, int(COOLDOWN), 120))
    assert runner.outcomes().count("blocked-breaker") == refused
    runner.clock.now = opened_at + COOLDOWN
    runner.executor.script("done")
    assert runner.tick().probe


def test_one_run_with_two_rows_counts_once(runner: Runner) -> None:
    [a, _] = runner.enqueue("a", "b")
    for task, outcome in (("x", "running"), ("x", "timed-out"), ("y", "failed")):
        runner.ledger.append(AttemptRow(item=a, task=task, outcome=outcome, ts=START))
    runner.ledger.append(AttemptRow(item=a, task="x", outcome="failed", ts=START + 1))
    runner.clock.advance(10)
    runner.executor.script("done")
    assert runner.tick().consecutive_failures_before == 2


def test_resume_lets_one_tick_run_and_a_failure_reopens_at_once(runner: Runner) -> None:
    runner.enqueue("a", "b", "c", "d", "e")
    fail_three(runner)
    runner.queue.resume()
    assert runner.queue.load().blocked_reason is None and runner.queue.load().override

    runner.executor.script("failed")
    forced = runner.tick()

    assert forced.action is TickAction.RAN and forced.override and not forced.probe
    assert forced.breaker is BreakerState.OPEN  # no silent bypass
    queue = runner.queue.load()
    assert not queue.override and queue.blocked_reason is not None
    assert runner.tick().action is TickAction.BREAKER_OPEN


def test_rate_limits_back_off_doubling(runner: Runner) -> None:
    runner.settings = replace(
        runner.settings, rate_limit_backoff_sec=100.0, rate_limit_backoff_max_sec=10_000.0
    )
    runner.enqueue("a")
    runner.executor.run_seconds = 0.0
    runner.executor.script("rate-limited", "rate-limited", "done")
    assert runner.tick().outcome == "rate-limited"
    first = runner.clock.now
    runner.clock.now = first + 99
    wait = runner.tick()
    assert wait.action is TickAction.RATE_LIMIT_WAIT
    assert runner.outcomes()[-1] == "blocked-rate-limit"
    runner.clock.now = first + 100
    assert runner.tick().outcome == "rate-limited"
    second = runner.clock.now
    runner.clock.now = second + 199
    assert runner.tick().action is TickAction.RATE_LIMIT_WAIT
    runner.clock.now = second + 200
    report = runner.tick()
    assert report.outcome == "done" and report.breaker is BreakerState.CLOSED


def test_a_lost_run_is_retired_as_died_and_does_not_count(runner: Runner) -> None:
    [a] = runner.enqueue("a")
    runner.ledger.append(AttemptRow(item=a, task="lost", outcome="running", ts=START))
    runner.executor.script("done")
    report = runner.tick()
    rows = runner.ledger.read().rows
    assert [(r.task, r.outcome) for r in rows[:2]] == [("lost", "running"), ("lost", "died")]
    assert report.consecutive_failures_before == 0
    assert "recorded as died" in runner.log()


def test_an_executor_that_raises_leaves_a_running_row_for_the_next_tick(runner: Runner) -> None:
    runner.enqueue("a")

    def explode(request: ExecutionRequest) -> ExecutionResult:
        raise RuntimeError("executor bug")

    with pytest.raises(RuntimeError, match="executor bug"):
        run_tick(runner.dir, settings=runner.settings, executor=explode, clock=runner.clock)
    assert runner.outcomes() == ["running"]
    runner.executor.script("done")
    runner.tick()
    assert runner.outcomes() == ["running", "died", "running", "done"]


def test_a_second_tick_while_one_runs_is_busy(runner: Runner) -> None:
    runner.enqueue("a")
    with file_lock(runner.paths.lock):
        report = runner.tick()
    assert report.action is TickAction.BUSY
    assert runner.executor.requests == []
    assert runner.ticks()[-1]["action"] == "busy"


def test_parked_and_given_up_items_are_not_taken_again(tmp_path: Path) -> None:
    runner = Runner(tmp_path, max_attempts=2, breaker_limit=0)
    parked, flaky, fresh = runner.enqueue("parked", "flaky", "fresh")
    runner.executor.script("needs-input", "failed", "failed", "failed")
    taken = []
    for _ in range(4):
        taken.append(runner.tick().item)
        runner.clock.advance(10)
    # Least recently attempted first: parked, flaky, fresh, then flaky again.
    assert taken == [parked, flaky, fresh, flaky]
    runner.executor.script("done")
    assert runner.tick().item == fresh  # flaky gave up after 2 failures
    assert runner.tick().action is TickAction.IDLE
    assert [i.id for i in runner.queue.load().items] == [parked, flaky]


def test_housekeeping_keeps_every_file_bounded(tmp_path: Path) -> None:
    runner = Runner(
        tmp_path, log_max_bytes=1000, ticks_max_bytes=500, ticks_keep=3, attempted_max_bytes=300
    )
    runner.paths.dir.mkdir(parents=True)
    runner.paths.log.write_text("old line\n" * 500)
    runner.paths.ticks.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(200)))
    for i in range(20):
        runner.ledger.append(
            AttemptRow(item="gone", task=f"t{i}", outcome="failed", ts=START - 40 * 86_400 + i)
        )
    runner.ledger.append(
        AttemptRow(item="gone", task="t-done", outcome="done", ts=START - 40 * 86_400 + 30)
    )

    runner.tick()

    assert runner.paths.log.stat().st_size < 1000
    assert "runner.log truncated" in runner.log()
    assert (tmp_path / "runner" / "runner.log.1").read_text().endswith("old line\n")
    assert [t.get("n") for t in runner.ticks()] == [197, 198, 199, None]
    assert [r.task for r in runner.ledger.read().rows] == ["t-done"]
    assert "attempted.jsonl compacted: 21 -> 1 rows" in runner.log()


def test_intake_queues_labelled_issues_once(runner: Runner) -> None:
    issues = [IntakeIssue(id="12", title="Fix the login", body='Say "hi"\n\x7f')]

    def lister() -> Iterable[IntakeIssue]:
        return issues

    runner.executor.script("done")
    report = runner.tick(lister)
    assert report.item == "issue-12" and report.outcome == "done"
    plan = Path(runner.executor.requests[0].item.plan)
    assert plan.parent == runner.paths.plans
    data = tomllib.loads(plan.read_text())
    assert data["task"][0]["prompt"] == 'Fix the login\n\nSay "hi"\n\x7f'
    assert runner.tick(lister).action is TickAction.IDLE  # finished: never queued again


def test_disabling_the_breaker_lets_work_through_and_clears_the_reason(runner: Runner) -> None:
    runner.enqueue("a", "b", "c", "d")
    fail_three(runner)
    assert runner.queue.load().blocked_reason is not None
    runner.settings = replace(runner.settings, breaker_limit=0)
    runner.executor.script("failed")
    report = runner.tick()
    assert report.action is TickAction.RAN and report.breaker is BreakerState.DISABLED
    assert runner.queue.load().blocked_reason is None


def test_an_idle_tick_keeps_an_open_breakers_reason_and_the_override(runner: Runner) -> None:
    [a] = runner.enqueue("a")
    runner.executor.script("failed", "failed", "failed")
    for _ in range(3):
        runner.tick()
    # a failed three times; with max_attempts 1 it is given up, so the queue is idle.
    runner.settings = replace(runner.settings, max_attempts=1)
    runner.queue.resume()
    report = runner.tick()
    assert report.action is TickAction.IDLE
    queue = runner.queue.load()
    assert queue.override and queue.blocked_reason is None
    assert [i.id for i in queue.items] == [a]


def test_intake_reads_a_real_local_tracker_by_label(tmp_path: Path) -> None:
    from seawall.model import TrackerConfig
    from seawall.tracker import open_tracker

    repo = tmp_path / "repo"
    repo.mkdir()
    with open_tracker(TrackerConfig(kind="local"), root=repo) as tracker:
        tracker.ensure_labels(["seawall-queue", "other"])
        wanted = tracker.create_issue(title="Add a flag", body="Please.", labels=["seawall-queue"])
        tracker.create_issue(title="Not for the runner", body="", labels=["other"])
    runner = Runner(tmp_path, repo=repo, intake_label="seawall-queue", intake_agent="command")
    runner.executor.script("done")

    report = runner.tick()

    assert report.item == f"issue-{wanted.number}" and report.outcome == "done"
    plan = tomllib.loads(Path(runner.executor.requests[0].item.plan).read_text())
    assert plan["session"] == {"agent": "command"}
    assert plan["task"][0]["prompt"] == "Add a flag\n\nPlease."
    assert f"intake: queued issue {wanted.number}" in runner.log()


def test_a_tracker_failure_skips_intake_but_not_the_queue(runner: Runner) -> None:
    from seawall.errors import TrackerError

    def broken() -> list[IntakeIssue]:
        raise TrackerError("502 Bad Gateway", tracker="github", operation="list issues")

    [a] = runner.enqueue("a")
    runner.executor.script("done")
    report = runner.tick(broken)
    assert report.item == a and report.outcome == "done"
    assert "intake skipped: github: list issues failed: 502 Bad Gateway" in runner.log()
