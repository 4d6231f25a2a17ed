"""Exactly one issue per carryover on GitHub and GitLab, under slow writes and concurrency.

The real clients (PyGithub, python-gitlab) run against the local fakes. Real-world
times are scaled down by the same factor: a create the host applies 20 s after a
15 s client timeout is played as one applied ~1.4x the client's timeout after it was
sent, with a settle window that covers the gap, so no test waits 20 real seconds.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from seawall.carryover import (
    Carryover,
    CarryoverFiler,
    CarryoverKind,
    CarryoverResult,
    RetryPolicy,
    find_marker,
)
from seawall.carryover.filer import ClaimLeases
from seawall.testing.http import FakeServer, Fault
from seawall.tracker import IssueTracker
from tests.integration.hostkit import TOKEN, Host, host, server
from tests.integration.sessionkit import make_repo, seawall, write_plan

__all__ = ["host", "server"]

#: the client's timeout and the host's late apply, 15 s and 20 s scaled down
TIMEOUT = 1.0
APPLIED_AFTER = 1.4
#: the settle window: longer than the late apply's gap after the timeout, plus lag
SETTLE = 3.0

WORK = Carryover(plan="demo", task_id="parser", kind=CarryoverKind.FAILED, session="s1", wave=2)


def open_carryovers(server: FakeServer, tracker: IssueTracker) -> list[int]:
    return sorted(i.number for i in tracker.list_issues("carryover") if find_marker(i.body))


def filer(tracker: IssueTracker, session: str, settle: float = SETTLE) -> CarryoverFiler:
    retry = RetryPolicy(base_delay=0.2, max_delay=1.0, settle=settle)
    return CarryoverFiler(tracker, session=session, retry=retry)


def test_a_create_applied_after_the_client_timed_out_leaves_one_issue(
    host: Host, server: FakeServer
) -> None:
    server.service.inject_operation("create_issue", Fault(apply_after=APPLIED_AFTER))
    with host.tracker(server, timeout=TIMEOUT) as tracker:
        started = time.monotonic()
        result = filer(tracker, "s1").file(WORK)
        elapsed = time.monotonic() - started
    assert result.created, result.error
    assert server.service.count_operation("create_issue") == 1, "the create was not retried"
    assert elapsed >= APPLIED_AFTER, "the issue can only be found once the host applied it"
    with host.tracker(server, timeout=TIMEOUT) as tracker:
        assert open_carryovers(server, tracker) == [result.number]


def test_without_a_settle_window_the_late_create_is_duplicated(
    host: Host, server: FakeServer
) -> None:
    """The failure the settle window prevents: one re-list, then a retried create."""
    server.service.inject_operation("create_issue", Fault(apply_after=APPLIED_AFTER))
    with host.tracker(server, timeout=TIMEOUT) as tracker:
        filer(tracker, "s1", settle=0.0).file(WORK)
    time.sleep(APPLIED_AFTER)  # let the late create land
    with host.tracker(server, timeout=TIMEOUT) as tracker:
        assert len(open_carryovers(server, tracker)) == 2


def test_two_sessions_filing_at_once_leave_one_issue(host: Host, server: FakeServer) -> None:
    # a slow create makes the race window wide: both filers list before either creates
    server.service.inject_operation("create_issue", Fault(delay=0.5, apply=True), times=2)
    results: dict[str, CarryoverResult] = {}
    barrier = threading.Barrier(2, timeout=10)

    def session(name: str) -> None:
        with host.tracker(server, timeout=TIMEOUT) as tracker:
            one = filer(tracker, name)
            one.known()  # both sessions have listed: neither saw an issue
            barrier.wait()
            results[name] = one.file(WORK)

    threads = [threading.Thread(target=session, args=(name,)) for name in ("s1", "s2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    outcomes = sorted("created" if r.created else str(r.skipped) for r in results.values())
    assert outcomes == ["created", "duplicate"], results
    assert {r.number for r in results.values()} == {results["s1"].number}
    assert server.service.count_operation("create_issue") == 1
    with host.tracker(server, timeout=TIMEOUT) as tracker:
        assert len(open_carryovers(server, tracker)) == 1


def test_a_claim_whose_answer_was_lost_is_still_ours(host: Host, server: FakeServer) -> None:
    server.service.inject_operation("create_label", Fault(status=502, apply=True))
    with host.tracker(server, timeout=TIMEOUT) as tracker:
        result = filer(tracker, "s1").file(WORK)
    assert result.created, result.error
    with host.tracker(server, timeout=TIMEOUT) as tracker:
        assert open_carryovers(server, tracker) == [result.number]


def test_a_stale_claim_does_not_block_filing_forever(host: Host, server: FakeServer) -> None:
    """A claimant that died before filing: the next filer waits while its claim is valid,
    then takes it over and files."""
    with host.tracker(server, timeout=TIMEOUT) as dead:
        assert isinstance(dead, ClaimLeases)
        assert dead.take_claim(WORK.fingerprint, holder="dead", ttl=0.5) == 0
    with host.tracker(server, timeout=TIMEOUT) as tracker:
        result = filer(tracker, "s2", settle=0.5).file(WORK)
        assert result.created, result.error
        assert open_carryovers(server, tracker) == [result.number]


@pytest.mark.slow
def test_a_real_session_and_validate_leave_one_issue_for_a_late_create(
    host: Host, server: FakeServer, tmp_path: Path
) -> None:
    """Through ``seawall run`` and ``seawall carryover validate``: the session's create is
    applied after its client timed out, and nothing files it a second time."""
    repo = make_repo(tmp_path / "repo")
    spec = tmp_path / "agents.json"
    spec.write_text(json.dumps({"parser": [{"final": "STATUS: failed — KeyError: 'user'"}]}))
    extra = host.plan_tables(server, TIMEOUT) + "[session.wave_breaker]\nmax_rework_cycles = 0\n"
    tasks = [{"id": "parser", "prompt": "fix the parser", "scope": ["parser.py"]}]
    plan = write_plan(tmp_path / "plan.toml", session='name = "late"', tasks=tasks, extra=extra)
    server.service.inject_operation("create_issue", Fault(apply_after=APPLIED_AFTER))
    env = {host.token_env: TOKEN, "AGENT_SPEC": str(spec)}
    run = seawall("run", str(plan), cwd=repo, env=env)
    assert "→ issue #1" in run.stderr, run.stdout + run.stderr
    validate = seawall("carryover", "validate", "--repo", str(repo), cwd=repo, env=env)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert "every SPIRAL/FAILED line has its issue" in validate.stdout
    assert server.service.count_operation("create_issue") == 1
    with host.tracker(server, timeout=TIMEOUT) as tracker:
        assert open_carryovers(server, tracker) == [1]
