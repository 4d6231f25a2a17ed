"""Re-filing a carryover whose issue was closed: exactly one new issue, forever.

The normal cycle (fail → issue → fixed → closed) is run again and again on one
fingerprint; each time, two sessions on two machines (two threads, each with its own
client and its own filer) file it at once. GitHub and GitLab are the real clients
against the local fakes; the local tracker is two clients of one issues directory
(two clones sharing it, so each has its own carryover lock file). The same through
``seawall run`` in two processes; and the claims under it: a dead session's claim is
waited for only while valid, a holder renews its claim on the next label, a claim
whose release failed runs out and is cleaned up by the next filing.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from seawall.adapters.trackers.local import LocalTracker
from seawall.carryover import (
    Carryover,
    CarryoverFiler,
    CarryoverKind,
    CarryoverResult,
    RetryPolicy,
    find_marker,
)
from seawall.carryover.filer import ClaimLeases
from seawall.errors import TrackerError
from seawall.testing.http import FakeServer, Fault
from seawall.tracker import IssueTracker
from tests.integration.hostkit import HOSTS, TOKEN, Host, host, server
from tests.integration.sessionkit import make_repo, seawall, write_plan

__all__ = ["host", "server"]

TRIALS = 50
WORK = Carryover(plan="demo", task_id="parser", kind=CarryoverKind.FAILED, session="s0", wave=1)

#: opens a fresh client of the tracker under test
Client = Callable[[], AbstractContextManager[IssueTracker]]


@contextmanager
def _host_clients(kind: str) -> Iterator[tuple[Client, Callable[[], list[str]]]]:
    chosen = next(h for h in HOSTS if h.kind == kind)
    with FakeServer(chosen.service()) as running:

        def client() -> AbstractContextManager[IssueTracker]:
            return chosen.tracker(running, timeout=5)

        def labels() -> list[str]:
            return _claims(running)

        yield client, labels


@contextmanager
def _local_clients(root: Path) -> Iterator[tuple[Client, Callable[[], list[str]]]]:
    shared = root / "shared-issues"

    def client() -> AbstractContextManager[IssueTracker]:
        return LocalTracker(root, issues_dir=shared)

    def labels() -> list[str]:
        return sorted(f"claim:{path.name}" for path in (shared / ".claims").glob("*"))

    yield client, labels


@pytest.fixture(params=["github", "gitlab", "local"])
def clients(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Client, Callable[[], list[str]]]]:
    kind = request.param
    with _local_clients(tmp_path) if kind == "local" else _host_clients(kind) as made:
        yield made


class Waits:
    """A policy's sleep that sleeps and counts the waits, from any thread."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def __call__(self, seconds: float) -> None:
        with self._lock:
            self.count += 1
        time.sleep(seconds)


def _policy(
    sleep: Callable[[float], None] = time.sleep,
    *,
    settle: float = 0.05,
    claim_ttl: float | None = None,
) -> RetryPolicy:
    return RetryPolicy(
        base_delay=0.01, max_delay=0.05, settle=settle, claim_ttl=claim_ttl, sleep=sleep
    )


def _open(tracker: IssueTracker) -> list[int]:
    return sorted(
        i.number
        for i in tracker.list_issues("carryover")
        if find_marker(i.body) == WORK.fingerprint
    )


def _two_filers_at_once(
    client: Client, root: Path, trial: int, waits: Waits
) -> list[CarryoverResult]:
    results: list[CarryoverResult] = []
    barrier = threading.Barrier(2, timeout=10)

    def session(name: str) -> None:
        with client() as tracker:
            lock = root / name / ".seawall" / "carryover.lock"  # one per machine
            filer = CarryoverFiler(tracker, session=name, retry=_policy(waits), lock_path=lock)
            barrier.wait()
            results.append(filer.file(WORK))

    threads = [threading.Thread(target=session, args=(f"t{trial}-{side}",)) for side in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a filer hung"
    return results


def test_refiling_a_closed_fingerprint_from_two_machines_files_once(
    clients: tuple[Client, Callable[[], list[str]]], tmp_path: Path
) -> None:
    client, claim_labels = clients
    with client() as tracker:
        first = CarryoverFiler(tracker, session="s0", retry=_policy()).file(WORK)
        assert first.created, first.error
        previous = first.number
    wrong, waits = [], Waits()
    for trial in range(TRIALS):
        with client() as tracker:
            assert previous is not None
            tracker.close_issue(previous)  # fixed and closed: the cycle starts again
        results = _two_filers_at_once(client, tmp_path, trial, waits)
        with client() as tracker:
            now_open = _open(tracker)
        outcomes = sorted("created" if r.created else str(r.skipped) for r in results)
        if len(now_open) != 1 or outcomes != ["created", "duplicate"]:
            wrong.append((trial, now_open, outcomes, [r.error for r in results]))
        previous = now_open[-1] if now_open else None
        for extra in now_open[:-1]:
            with client() as tracker:
                tracker.close_issue(extra)
    assert not wrong, f"{len(wrong)} of {TRIALS} trials went wrong: {wrong[:5]}"
    assert waits.count > 0, "the two filers never met at the claim: the race was not run"
    leftover = [name for name in claim_labels() if name.startswith("claim")]
    assert leftover == [], f"claims left behind: {leftover}"


def test_a_dead_sessions_claim_is_waited_for_only_while_it_is_valid(
    clients: tuple[Client, Callable[[], list[str]]],
) -> None:
    client, claim_labels = clients
    with client() as dead:
        assert isinstance(dead, ClaimLeases)
        assert dead.take_claim(WORK.fingerprint, holder="dead", ttl=1.0) == 0
    with client() as tracker:
        started = time.monotonic()
        result = CarryoverFiler(tracker, session="s1", retry=_policy(settle=5)).file(WORK)
        waited = time.monotonic() - started
    assert result.created, result.error
    assert 0.5 <= waited < 4, f"waited {waited:.1f}s for a claim valid 1s (settle 5s)"
    assert claim_labels() == [], "the dead session's expired claim was not cleaned up"


def test_a_failed_release_leaves_a_claim_that_runs_out_and_is_cleaned_up(
    host: Host, server: FakeServer
) -> None:
    server.service.inject_operation("delete_label", Fault(status=502))
    policy = _policy(claim_ttl=0.5)
    with host.tracker(server, timeout=5) as tracker:
        result = CarryoverFiler(tracker, session="s1", retry=policy).file(WORK)
        assert result.created and result.number is not None
        assert result.error is not None and "releasing the claim failed" in result.error
        assert _claims(server) == [f"claim:{WORK.fingerprint}:1"]
        tracker.close_issue(result.number)
    time.sleep(0.6)
    with host.tracker(server, timeout=5) as tracker:
        again = CarryoverFiler(tracker, session="s2", retry=policy).file(WORK)
    assert again.created and again.error is None, again
    assert _claims(server) == [], "the next filing's release deletes the expired claim too"


def test_a_holder_renews_its_claim_on_a_new_label_before_a_late_retry(
    host: Host, server: FakeServer
) -> None:
    """The create's answer is lost late: by the retry less than half the lease is left,
    so the holder takes the next label of the chain; both go once the issue exists."""
    server.service.inject_operation("create_issue", Fault(status=502, delay=0.3))
    policy = _policy(settle=0.1, claim_ttl=0.6)
    with host.tracker(server, timeout=5) as tracker:
        result = CarryoverFiler(tracker, session="s1", retry=policy).file(WORK)
        assert result.created and result.error is None, result
        assert _open(tracker) == [result.number]
    created = [
        r.body["name"]
        for r in server.service.requests
        if r.route == "labels" and r.method == "POST" and r.answered == 201
    ]
    claims = [name for name in created if name.startswith("claim:")]
    assert claims == [f"claim:{WORK.fingerprint}:1", f"claim:{WORK.fingerprint}:2"]
    assert _claims(server) == []


def _claims(server: FakeServer) -> list[str]:
    stored = getattr(server.service, "labels")  # noqa: B009 - both fakes keep labels
    return sorted(name for name in stored if name.startswith("claim:"))


def test_two_sessions_refiling_through_the_cli_file_once(
    host: Host, server: FakeServer, tmp_path: Path
) -> None:
    """``seawall run`` on two machines (two clones, two processes) fails the same task
    of the same plan after its earlier issue was closed: one new issue between them."""
    extra = host.plan_tables(server, 5) + "[session.wave_breaker]\nmax_rework_cycles = 0\n"
    tasks = [{"id": "parser", "prompt": "fix the parser", "scope": ["parser.py"]}]

    def machine(name: str) -> subprocess.CompletedProcess[str]:
        """``seawall run`` in a clone of its own; the scripted agent fails the task."""
        repo = make_repo(tmp_path / name / "repo")
        plan = write_plan(
            tmp_path / name / "plan.toml", session='name = "refile"', tasks=tasks, extra=extra
        )
        spec = tmp_path / name / "agents.json"  # its dispatch counters go beside it
        spec.write_text(json.dumps({"parser": [{"final": "STATUS: failed — KeyError: 'u'"}]}))
        env = {host.token_env: TOKEN, "AGENT_SPEC": str(spec)}
        return seawall("run", str(plan), cwd=repo, env=env)

    assert "→ issue #1" in machine("earlier").stderr
    with host.tracker(server, timeout=5) as tracker:
        tracker.close_issue(1)

    runs: dict[str, subprocess.CompletedProcess[str]] = {}

    def session(name: str) -> None:
        runs[name] = machine(name)

    threads = [threading.Thread(target=session, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    lines = sorted(
        line.split("parser: ")[-1]
        for run in runs.values()
        for line in run.stderr.splitlines()
        if "FAILED →" in line
    )
    assert lines == ["FAILED → existing #2", "FAILED → issue #2"], {
        name: run.stderr[-2000:] for name, run in runs.items()
    }
    with host.tracker(server, timeout=5) as tracker:
        listed = tracker.list_issues("carryover")
    assert [i.number for i in listed if find_marker(i.body)] == [2]
    assert _claims(server) == []


def test_a_label_the_host_refuses_but_does_not_have_is_an_error_not_a_loop(
    host: Host, server: FakeServer
) -> None:
    refused = 422 if host.kind == "github" else 409
    server.service.inject_operation("create_label", Fault(status=refused), times=10)
    with host.tracker(server, timeout=5) as tracker:
        assert isinstance(tracker, ClaimLeases)
        with pytest.raises(TrackerError, match="refuses to create label") as raised:
            tracker.take_claim(WORK.fingerprint, holder="h", ttl=5)
    assert raised.value.tracker == host.kind
    assert server.service.count_operation("create_label") == 4, "three retries, then stop"
