"""The fault half of the tracker kit: what an adapter does when its host misbehaves.

These tests drive the adapter through a *fault hook*: an object that makes the next
request of one port operation fail in a chosen way and counts the requests it saw.
``seawall.testing.http.FakeService`` is one (every fake built on it, GitHub's,
GitLab's or your own, gets it for free); provide it with the ``fault_hook`` fixture.
Operations are the port's names: ``list_issues``, ``create_issue``, ``comment``,
``close_issue``, ``create_label``.

The claim tests need no hook: they run on any tracker with the ``claims`` capability
(``seawall.carryover.filer.ClaimLeases``), through ``second_tracker`` too when there is
one. Re-filing after a close runs on every tracker: two filers, each on its own client
when there is a ``second_tracker``, serialised by the host's claims, or by one
machine's lock file when the host holds none.

Each check names the bug it catches, so a failing kit says what the adapter did
wrong, not just ``assert 2 == 1``.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar, Protocol

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
from seawall.errors import TrackerError
from seawall.testing.http import Fault
from seawall.tracker import (
    Capability,
    IssueTracker,
    TrackerRateLimitError,
    TrackerUnavailableError,
)

__all__ = ["FaultHook", "TrackerFaultKit"]


class FaultHook(Protocol):
    """Injects faults into, and counts, the requests of each port operation."""

    def inject_operation(self, operation: str, fault: Fault, *, times: int = 1) -> None: ...

    def count_operation(self, operation: str) -> int: ...


class TrackerFaultKit:
    """Fault tests; mixed into ``TrackerConformance``. Provide ``fault_hook``.

    The ``tracker`` fixture must build the adapter with ``client_timeout`` as its
    request timeout, so the kit can play a write the host applies after the client
    gave up (the real-world 20 s after a 15 s timeout, scaled down).
    """

    #: The client timeout, in seconds, the ``tracker`` fixture gives the adapter.
    client_timeout: ClassVar[float] = 1.0
    #: The label the tests list by (shared with ``TrackerConformance``).
    label: ClassVar[str] = "carryover"
    #: How many times the re-filing test closes the issue and has two filers file again.
    refile_trials: ClassVar[int] = 5

    @pytest.fixture
    def fault_hook(self) -> FaultHook | None:
        """The hook into the host the ``tracker`` fixture talks to; None skips these tests."""
        return None

    @pytest.fixture
    def second_tracker(self) -> IssueTracker | None:
        """A second, independent client of the same host (another machine); None skips."""
        return None

    def rate_limit_faults(self) -> Sequence[tuple[Fault, float]]:
        """The host's rate-limit answers and the wait each asks for. Override for hosts
        that signal it differently (GitHub's 403 with ``X-RateLimit-Reset``)."""
        return [(Fault(status=429, headers={"Retry-After": "7"}), 7.0)]

    def _hook(self, fault_hook: FaultHook | None) -> FaultHook:
        if fault_hook is None:
            pytest.skip("no fault_hook fixture: the fault tests need a hook into the host")
        return fault_hook

    def _filer(self, tracker: IssueTracker, session: str = "kit") -> CarryoverFiler:
        retry = RetryPolicy(
            base_delay=0.1, max_delay=1.0, settle=self.client_timeout * 3, sleep=time.sleep
        )
        return CarryoverFiler(tracker, session=session, label=self.label, retry=retry)

    def _carryovers(self, tracker: IssueTracker) -> list[int]:
        return sorted(i.number for i in tracker.list_issues(self.label) if find_marker(i.body))

    # -- the tests ----------------------------------------------------------------------

    def test_a_create_that_meets_a_5xx_sends_exactly_one_request(
        self, tracker: IssueTracker, fault_hook: FaultHook | None
    ) -> None:
        hook = self._hook(fault_hook)
        tracker.ensure_labels([self.label])
        hook.inject_operation("create_issue", Fault(status=502))
        before = hook.count_operation("create_issue")
        raised = _raised(
            lambda: tracker.create_issue(title="once", body="b\n", labels=[self.label])
        )
        sent = hook.count_operation("create_issue") - before
        assert sent == 1, (
            f"create_issue sent {sent} requests for one call after a 502: the adapter (or its "
            "SDK) retries the create, and a retried POST makes duplicate issues; turn the "
            "SDK's retries off and leave retrying to the carryover filer"
        )
        assert isinstance(raised, TrackerUnavailableError), (
            f"a 502 on create was raised as {type(raised).__name__}, not "
            "TrackerUnavailableError: a 5xx is transient, and raised as a permanent error "
            "the filer gives up instead of listing again and retrying"
        )

    @pytest.mark.parametrize("status", [500, 502, 503])
    def test_a_5xx_is_raised_as_transient(
        self, tracker: IssueTracker, fault_hook: FaultHook | None, status: int
    ) -> None:
        hook = self._hook(fault_hook)
        hook.inject_operation("list_issues", Fault(status=status))
        with pytest.raises(TrackerError) as raised:
            tracker.list_issues(self.label)
        assert isinstance(raised.value, TrackerUnavailableError), (
            f"HTTP {status} was raised as {type(raised.value).__name__}: a 5xx must be "
            "TrackerUnavailableError (transient), or the session gives up on a blip"
        )
        assert raised.value.tracker == tracker.name, "errors must name the tracker"

    def test_a_401_is_a_permanent_error_without_the_token(
        self, tracker: IssueTracker, fault_hook: FaultHook | None
    ) -> None:
        hook = self._hook(fault_hook)
        hook.inject_operation("list_issues", Fault(status=401, body={"message": "Bad token"}))
        with pytest.raises(TrackerError) as raised:
            tracker.list_issues(self.label)
        assert not isinstance(raised.value, TrackerUnavailableError | TrackerRateLimitError), (
            f"a 401 was raised as {type(raised.value).__name__}: a refused token is permanent; "
            "retrying it only burns the rate limit"
        )
        self._assert_no_secret(str(raised.value))

    def test_a_rate_limit_is_raised_with_the_wait_it_asked_for(
        self, tracker: IssueTracker, fault_hook: FaultHook | None
    ) -> None:
        hook = self._hook(fault_hook)
        for fault, wait in self.rate_limit_faults():
            hook.inject_operation("list_issues", fault)
            with pytest.raises(TrackerError) as raised:
                tracker.list_issues(self.label)
            error = raised.value
            assert isinstance(error, TrackerRateLimitError), (
                f"HTTP {fault.status} with {dict(fault.headers)} was raised as "
                f"{type(error).__name__}, not TrackerRateLimitError: the filer cannot wait "
                "for the limit to reset"
            )
            assert error.retry_after is not None and abs(error.retry_after - wait) <= 5, (
                f"the rate limit asked for a {wait:.0f}s wait; the adapter said "
                f"retry_after={error.retry_after}"
            )

    def test_an_applied_create_whose_answer_was_lost_files_once(
        self, tracker: IssueTracker, fault_hook: FaultHook | None
    ) -> None:
        hook = self._hook(fault_hook)
        hook.inject_operation("create_issue", Fault(status=502, apply=True))
        result = self._filer(tracker).file(_work("lost-answer"))
        assert result.created, result.error
        found = self._carryovers(tracker)
        assert found == [result.number], (
            f"one carryover whose create answer was lost left issues {found}: "
            "the create was retried without listing first"
        )

    def test_a_create_applied_after_the_client_timed_out_files_once(
        self, tracker: IssueTracker, fault_hook: FaultHook | None
    ) -> None:
        hook = self._hook(fault_hook)
        late = self.client_timeout * 1.4
        hook.inject_operation("create_issue", Fault(apply_after=late))
        tracker.ensure_labels([self.label])  # so the create is the only request timed
        before = hook.count_operation("create_issue")
        started = time.monotonic()
        raised = _raised(
            lambda: tracker.create_issue(title="late", body="b\n", labels=[self.label])
        )
        waited = time.monotonic() - started
        sent = hook.count_operation("create_issue") - before
        assert sent == 1, (
            f"create_issue sent {sent} requests after one timed out: a create whose answer "
            "was lost may have been applied, so it is never retried by the adapter"
        )
        assert waited < late, (
            f"create_issue waited {waited:.1f}s for an answer that came after {late:.1f}s: "
            f"the adapter ignores its {self.client_timeout}s client timeout"
        )
        assert isinstance(raised, TrackerUnavailableError), (
            f"a timeout was raised as {type(raised).__name__}: it must be "
            "TrackerUnavailableError (the write may have been applied)"
        )
        time.sleep(late - waited + 0.2)  # the late create lands
        hook.inject_operation("create_issue", Fault(apply_after=late))
        result = self._filer(tracker).file(_work("late-create"))
        assert result.created, result.error
        assert len(self._carryovers(tracker)) == 1, (
            "a create applied after the client's timeout was filed twice: list again over "
            "a settle window before retrying"
        )

    def test_closed_issues_are_not_listed(self, tracker: IssueTracker) -> None:
        tracker.ensure_labels([self.label])
        kept = tracker.create_issue(title="kept", body="k\n", labels=[self.label])
        gone = tracker.create_issue(title="gone", body="g\n", labels=[self.label])
        tracker.close_issue(gone.number)
        tracker.close_issue(gone.number)  # closing twice is harmless
        listed = {issue.number: issue for issue in tracker.list_issues(self.label)}
        assert gone.number not in listed, (
            f"list_issues returned closed issue #{gone.number} (state "
            f"{listed[gone.number].state!r}): list only open issues, or a recurring "
            "failure matches a closed issue forever and is never filed again"
        )
        assert kept.number in listed, f"the open issue #{kept.number} is not listed"

    def test_labels_are_created_once(
        self, tracker: IssueTracker, fault_hook: FaultHook | None
    ) -> None:
        hook = self._hook(fault_hook)
        before = hook.count_operation("create_label")
        tracker.ensure_labels([self.label, "status:spiral"])
        tracker.ensure_labels([self.label, "status:spiral"])
        tracker.ensure_labels([self.label, "status:spiral", "priority:low"])
        created = hook.count_operation("create_label") - before
        assert created <= 3, (
            f"ensure_labels sent {created} label creates for 3 distinct labels: it creates "
            "labels that exist (remember them, or list them once)"
        )

    def test_two_clients_filing_at_once_file_once(
        self, tracker: IssueTracker, second_tracker: IssueTracker | None
    ) -> None:
        if second_tracker is None:
            pytest.skip("no second_tracker fixture: needs a second client of the same host")
        if Capability.CLAIMS not in tracker.capabilities:
            pytest.skip("the tracker holds no claims; one machine's lock serialises its filers")
        work = _work("race")
        assert tracker.claim(work.fingerprint), "the first claim on a fresh key must be taken"
        assert tracker.claim(work.fingerprint), "a claim must stay ours when asked again"
        assert not second_tracker.claim(work.fingerprint), (
            "two clients both took the same claim: claim() must be one atomic write the "
            "host refuses the second time"
        )

    def test_refiling_after_close_two_filers_file_once(
        self, tracker: IssueTracker, second_tracker: IssueTracker | None, tmp_path: Path
    ) -> None:
        """Fail, issue, fixed, closed, and again: each time two sessions file at once."""
        self._refile("refile", tracker, second_tracker, tmp_path, trials=self.refile_trials)

    def test_refiling_after_close_with_lost_create_answers_files_once(
        self,
        tracker: IssueTracker,
        second_tracker: IssueTracker | None,
        fault_hook: FaultHook | None,
        tmp_path: Path,
    ) -> None:
        """The same while the host loses the answer to the create it applied: at once
        (a 502), or after the client gave up waiting (a late apply)."""
        hook = self._hook(fault_hook)
        for name, fault in [
            ("lost", Fault(status=502, apply=True)),
            ("late", Fault(apply_after=self.client_timeout * 1.4)),
        ]:
            self._refile(
                f"refile-{name}",
                tracker,
                second_tracker,
                tmp_path,
                trials=2,
                before_each=functools.partial(hook.inject_operation, "create_issue", fault),
                settle=self.client_timeout * 3,
            )

    def _refile(
        self,
        task: str,
        tracker: IssueTracker,
        second_tracker: IssueTracker | None,
        tmp_path: Path,
        *,
        trials: int,
        before_each: Callable[[], None] = lambda: None,
        settle: float = 0.05,
    ) -> None:
        other = second_tracker if second_tracker is not None else tracker
        lock = None if _leases(tracker) else tmp_path / "carryover.lock"  # one machine's
        work = _work(task)
        first = self._racer(tracker, "first", lock, settle).file(work)
        assert first.created, first.error
        self._assert_claim_free(_leases(tracker), work.fingerprint, "after the first filing")
        previous = first.number
        for trial in range(trials):
            assert previous is not None
            tracker.close_issue(previous)
            before_each()
            results = _at_once(
                self._racer(tracker, f"a{trial}", lock, settle),
                self._racer(other, f"b{trial}", lock, settle),
                work=work,
            )
            found = [
                i.number
                for i in tracker.list_issues(self.label)
                if find_marker(i.body) == work.fingerprint
            ]
            outcomes = sorted("created" if r.created else str(r.skipped) for r in results)
            assert len(found) == 1 and outcomes == ["created", "duplicate"], (
                f"re-filing #{trial + 1}: two filers of a fingerprint whose issue was closed "
                f"left open issues {found} ({outcomes}, errors "
                f"{[r.error for r in results if r.error]}): a claim must belong to one "
                "filing attempt, be taken again when the fingerprint is filed again, last "
                "while its holder settles a lost create, and be released once the issue "
                "exists, never kept per fingerprint forever"
            )
            self._assert_claim_free(_leases(tracker), work.fingerprint, "after re-filing")
            previous = found[0]

    def test_a_claim_is_held_while_valid_then_taken_over(
        self, tracker: IssueTracker, second_tracker: IssueTracker | None
    ) -> None:
        host, other = self._claim_hosts(tracker, second_tracker)
        key = _work("lease").fingerprint
        assert host.take_claim(key, holder="first", ttl=1.0) == 0, "a free claim must be taken"
        left = other.take_claim(key, holder="second", ttl=1.0)
        assert 0 < left <= 1.0, (
            f"another holder's valid claim was answered with {left}: take_claim must "
            "refuse it and say how long the claim stays valid (0 < left <= ttl)"
        )
        assert host.take_claim(key, holder="first", ttl=1.0) == 0, (
            "the holder asking again must keep (renew) its own claim"
        )
        time.sleep(1.1)
        assert other.take_claim(key, holder="second", ttl=5) == 0, (
            "an expired claim was not taken over: a session that died holding a claim "
            "would block its fingerprint forever"
        )
        assert host.take_claim(key, holder="first", ttl=5) > 0, (
            "the first holder took back a claim another holder had taken over"
        )
        other.release_claim(key, holder="second")
        self._assert_claim_free(host, key, "after its holder released it")

    def test_a_release_leaves_another_holders_claim_alone(
        self, tracker: IssueTracker, second_tracker: IssueTracker | None
    ) -> None:
        host, other = self._claim_hosts(tracker, second_tracker)
        key = _work("release").fingerprint
        assert host.take_claim(key, holder="holder", ttl=5) == 0
        other.release_claim(key, holder="stranger")
        assert other.take_claim(key, holder="stranger", ttl=5) > 0, (
            "release_claim by someone who does not hold the claim removed it"
        )
        host.release_claim(key, holder="holder")
        self._assert_claim_free(other, key, "after its holder released it")

    def _claim_hosts(
        self, tracker: IssueTracker, second_tracker: IssueTracker | None
    ) -> tuple[ClaimLeases, ClaimLeases]:
        host = _leases(tracker)
        if host is None:
            pytest.skip("the tracker holds no claims; one machine's lock serialises its filers")
        other = _leases(second_tracker) if second_tracker is not None else host
        assert other is not None, "the second client of a host with claims holds none"
        return host, other

    def _racer(
        self, tracker: IssueTracker, session: str, lock: Path | None, settle: float
    ) -> CarryoverFiler:
        retry = RetryPolicy(base_delay=0.01, max_delay=0.05, settle=settle, sleep=time.sleep)
        return CarryoverFiler(
            tracker, session=session, label=self.label, retry=retry, lock_path=lock
        )

    def _assert_claim_free(self, host: ClaimLeases | None, key: str, when: str) -> None:
        if host is None:
            return
        left = host.take_claim(key, holder="kit-check", ttl=1)
        assert left == 0, (
            f"{when}, the claim on {key} was still held for {left:.1f}s: the holder must "
            "release its claim once the issue exists (or it piles up on the host and "
            "delays the next filing)"
        )
        host.release_claim(key, holder="kit-check")

    def _assert_no_secret(self, text: str) -> None:
        secret: str | None = getattr(self, "secret", None)
        if secret:
            at = text.find(secret)
            shown = text[max(0, at - 40) : at]
            assert at < 0, (
                f"the tracker's token appears in {text.count(secret)} place(s) of a text users "
                f"see (a repr, an error), first after {shown!r}: keep the token out of every "
                "message and repr; logs and carryover issues are read by others"
            )


def _raised(call: Callable[[], object]) -> TrackerError | None:
    """The TrackerError ``call`` raised, or None when it returned."""
    try:
        call()
    except TrackerError as exc:
        return exc
    return None


def _leases(tracker: IssueTracker) -> ClaimLeases | None:
    if Capability.CLAIMS in tracker.capabilities and isinstance(tracker, ClaimLeases):
        return tracker
    return None


def _at_once(*filers: CarryoverFiler, work: Carryover) -> list[CarryoverResult]:
    """``filers`` file ``work`` in threads released together; the results, any order."""
    results: list[CarryoverResult] = []
    barrier = threading.Barrier(len(filers), timeout=30)

    def run(filer: CarryoverFiler) -> None:
        barrier.wait()
        results.append(filer.file(work))

    threads = [threading.Thread(target=run, args=(filer,)) for filer in filers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a filer did not finish within 120 s"
    return results


def _work(task: str) -> Carryover:
    return Carryover(plan="kit", task_id=task, kind=CarryoverKind.FAILED, session="kit", wave=1)
