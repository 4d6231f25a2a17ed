"""The per-agent breaker: eight breakers over one agent's event stream.

One ``AgentBreaker`` watches one agent. Driven mode feeds it every event through
``observe``; hook mode calls ``admit`` before each tool call and ``observe`` with the
result after it, loading and saving the breaker between calls (``saved``/``resumed``, a record the
codec converts).
The first trip wins; only unverified-edits can be cleared by the agent itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from seawall.breakers.admission import Effect, after_trip
from seawall.breakers.commands import (
    command_key,
    is_verify_command,
    may_have_key,
    reads_only,
    verify_passed,
    verify_run,
)
from seawall.breakers.keys import call_key
from seawall.breakers.memory import (
    KEY_CHARS,
    FailureCounts,
    Pending,
    Repeat,
    Seen,
    compact_key,
    failed_otherwise,
    first_line,
    is_guard_denial,
    normal_path,
    short,
)
from seawall.breakers.polls import BackgroundWatch, CallFacts, is_status_query, timed_out
from seawall.breakers.saved import SavedBreaker, dump_state, load_state
from seawall.breakers.signature import failure_print
from seawall.breakers.trip import (
    Admission,
    BreakerKind,
    BreakerNotice,
    BreakerState,
    BreakerStatistics,
    NoticeKind,
    Trip,
)
from seawall.events import (
    Event,
    Final,
    HumanTurn,
    Message,
    ToolCall,
    ToolResult,
    Usage,
)
from seawall.model import BreakerLimits

__all__ = ["AgentBreaker", "BreakerListener", "BreakerStatistics"]

BreakerListener = Callable[[BreakerNotice], None]
RUN_KEY = "(the run)"
"""The failure key of a whole run: a failed ``Final`` (Codex ``turn.failed``, a Claude
``result`` with ``is_error``), so an agent restarted only to fail the same way trips
like a command failing identically."""
_REMEMBERED_CALLS = 512
"""Distinct call keys the loop breaker remembers (least recently seen forgotten first):
a loop repeats a few recent calls, and an agent's memory must not grow with its calls."""


class AgentBreaker:
    """The per-agent breakers with the defaults of ``BreakerLimits``.

    Duties: count tool calls, edits, failures, polls, files and time from the event
    stream; trip on the first limit crossed and keep that trip (first trip wins);
    exempt polls and waits from the loop count; warn once at the tool-budget warning
    fraction; let a passing test or build clear an unverified-edits trip; in hook mode,
    refuse every call after a trip except the cleanup allowance and BLOCKED.md edits.
    """

    def __init__(
        self,
        *,
        limits: BreakerLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
        started_at: float | None = None,
        agent: str = "TASK",
        verify_command: str | None = None,
    ) -> None:
        """``verify_command``: the check an unverified-edits trip names (else the
        limits' ``verify_command``, else the last test or build command the agent ran)."""
        self.limits = limits or BreakerLimits()
        self.agent = agent
        self.verify_command = verify_command
        self.last_verify: str | None = None
        self._clock = clock
        self._started = clock() if started_at is None else started_at
        self._deadline = self._started + self.limits.max_session_minutes * 60.0
        self._warn_at = max(
            1, int(self.limits.max_tool_calls * self.limits.tool_budget_warn_fraction)
        )
        self.tool_calls = 0
        self.edits_since_verify = 0
        self.consecutive_failures = 0
        self.consecutive_polls = 0
        self.scope_denials = 0
        self.files: set[str] = set()
        self.warned = False
        self.cleanup_used = 0
        self.trip: Trip | None = None
        self._pending: dict[str, Pending] = {}
        self._repeats: dict[str, Repeat | Seen] = {}
        self._command_failures: dict[str, FailureCounts] = {}
        self._background = BackgroundWatch()
        self._listeners: list[BreakerListener] = []

    # -- public surface -------------------------------------------------------------

    @property
    def background(self) -> BackgroundWatch:
        """The files this agent's background commands write (kept across ``reset``)."""
        return self._background

    @property
    def state(self) -> BreakerState:
        return BreakerState.ARMED if self.trip is None else BreakerState.TRIPPED

    def add_listener(self, listener: BreakerListener) -> None:
        """Call ``listener`` on every trip, warning and self-service clear."""
        self._listeners.append(listener)

    def observe(self, event: Event) -> Trip | None:
        """Count one event; return the trip if this event tripped the breaker."""
        if type(event) is ToolCall:
            return self.observe_call(event, None)
        if type(event) is ToolResult:
            return self.observe_result(event)
        if type(event) is Usage or type(event) is Message:
            return None  # time is checked on turns, calls and results
        if type(event) is Final:
            return self._on_final(event)
        if type(event) is HumanTurn:
            self.human_turn()
        return self.check_time()

    def human_turn(self) -> None:
        """A person spoke: streaks of failures and identical calls end (budgets do not)."""
        self.consecutive_failures = 0
        self.consecutive_polls = 0
        self._repeats.clear()

    def admit(
        self, call: ToolCall, *, stop_note: Path | None = None, cwd: Path | None = None
    ) -> Admission:
        """Hook mode, before a call runs: allow it (and count it) or refuse it.

        ``stop_note`` is the session's BLOCKED.md: after a trip, edits of exactly that
        file stay open (paths in the call are relative to ``cwd``).
        """
        if self.trip is None:
            warned_before = self.warned
            trip = self.observe_call(call, None)
            if trip is not None:
                return Admission(allowed=False, reason=trip.message(self.agent), trip=trip)
            warning = self._warning_text() if self.warned and not warned_before else None
            return Admission(allowed=True, warning=warning)
        return self._admit_tripped(call, self.trip, stop_note, cwd)

    def statistics(self) -> BreakerStatistics:
        return BreakerStatistics(
            state=self.state,
            tool_calls=self.tool_calls,
            edits_since_verify=self.edits_since_verify,
            files_touched=len(self.files),
            consecutive_failures=self.consecutive_failures,
            consecutive_polls=self.consecutive_polls,
            warned=self.warned,
            cleanup_used=self.cleanup_used,
            elapsed_s=self._clock() - self._started,
            trip=self.trip,
        )

    # -- calls ----------------------------------------------------------------------

    def observe_call(
        self, call: ToolCall, full_key: str | None = None, facts: CallFacts | None = None
    ) -> Trip | None:
        """``observe`` for a call; ``full_key`` (its ``call_key``) and ``facts``
        (``background.judge``) when the caller already derived them."""
        self.tool_calls += 1
        name = call.name
        key = full_key if full_key is not None else call_key(name, call.arguments)
        if len(key) > KEY_CHARS:
            key = compact_key(key)
        if facts is None:
            facts = self._background.judge(call)
        command = facts.command
        self._pending[call.call_id] = (key, name, command, facts.paths, facts.poll)
        if self.trip is not None:
            return None
        limits = self.limits
        if self.tool_calls >= self._warn_at and not self.warned:
            self.warned = True
            self._notify(BreakerNotice(kind=NoticeKind.WARNED, message=self._warning_text()))
        if not facts.poll:
            repeat = self._repeats.get(key)
            streak = 0 if repeat is None else 1 if isinstance(repeat, tuple) else repeat.streak
            if streak and streak + 1 >= limits.max_repeat_identical:
                shown = short(command or call_key(name, call.arguments))
                return self._trip(
                    BreakerKind.LOOP,
                    f"the identical {name} call `{shown}` ran {streak + 1} times with "
                    "the same result",
                    streak + 1,
                    limits.max_repeat_identical,
                )
        if self.tool_calls > limits.max_tool_calls:
            return self._trip(
                BreakerKind.TOOL_BUDGET,
                f"{self.tool_calls} tool calls, over the budget of {limits.max_tool_calls}",
                self.tool_calls,
                limits.max_tool_calls,
            )
        now = self._clock()
        return None if now <= self._deadline else self._time_trip(now)

    def _warning_text(self) -> str:
        return (
            f"seawall: {self.tool_calls} of {self.limits.max_tool_calls} tool calls used; "
            "start converging: finish, commit what works and report STATUS."
        )

    # -- results --------------------------------------------------------------------

    def observe_result(self, result: ToolResult) -> Trip | None:
        """``observe`` for a result (skips the type dispatch)."""
        pending = self._pending.pop(result.call_id, None)
        if result.cancelled or result.refused:
            # dropped because a sibling call failed, or refused by a person: no failure
            return None if self.trip is not None else self.check_time()
        text = result.text
        exit_code = result.exit_code
        ok = not result.is_error and (exit_code is None or exit_code == 0)
        if pending is None:
            if not ok and is_guard_denial(text):
                return self._count_denial(text)
            return self._count_outcome(ok, None, text, exit_code)
        key, shown, command, paths, was_poll = pending
        repeats = self._repeats
        verified = (
            command is not None
            and ok
            and (bool(self.edits_since_verify) or self.trip is not None or key in repeats)
            and is_verify_command(command)
            and verify_passed(command, exit_ok=ok, output=text)
        )  # (a passing verify is only parsed when it would change something)
        if verified:
            assert command is not None
            self.last_verify = command
            self._verified(clears_trip=verify_run(command))
        elif command is not None and not ok and not was_poll and is_verify_command(command):
            self.last_verify = command
            if failed_otherwise(self._command_failures, command_key(command), text, exit_code):
                self._verified(clears_trip=verify_run(command))  # a check that moved on
        poll = was_poll
        if not poll:  # the loop breaker's memory of this call key
            repeat = repeats.get(key)
            if verified:
                repeats.pop(key, None)  # passing verifies are never loops
            elif repeat is None:
                # seen once: a ``Repeat`` when seen again; a failure keeps its print (made
                # now or just after for its counts), which the cache may forget by then
                if ok:
                    repeats[key] = (text, ok)
                else:
                    repeats[key] = Repeat(1, text, None, failure_print(text), True)
                if len(repeats) > _REMEMBERED_CALLS:
                    del repeats[next(iter(repeats))]
            else:
                del repeats[key]
                repeat = repeats[key] = Repeat.of(repeat)  # now the most recently seen
                if repeat.same_result(text, ok=ok):
                    repeat.streak += 1
                else:
                    repeat.streak = 1
                    poll = True  # the same call saw something new: a wait, not a loop
        if self.trip is not None:
            return None
        if poll:
            self.consecutive_polls += 1
            if self.consecutive_polls >= self.limits.max_consecutive_polls:
                return self._trip(
                    BreakerKind.NO_PROGRESS,
                    f"{self.consecutive_polls} consecutive polls with nothing else happening "
                    f"(last: {shown})",
                    self.consecutive_polls,
                    self.limits.max_consecutive_polls,
                )
        else:
            self.consecutive_polls = 0
        if ok:
            return self._count_edit(paths) if paths else self._count_outcome(True, command, text)
        if was_poll or timed_out(text):
            return self.check_time()  # a wait that saw "not yet" is not a failure
        if command is not None and (
            is_status_query(command) or (poll and reads_only(command))
        ):  # a status query's "not yet", or a read whose answer changed: no failure
            return self.check_time()
        if is_guard_denial(text):
            return self._count_denial(text)
        return self._count_outcome(False, command, text, exit_code)

    def _count_denial(self, text: str) -> Trip | None:
        """A call seawall's guard refused (out of scope, a blocked command): counted on
        its own, neither a failure nor a success, so in-scope work goes on."""
        self.scope_denials += 1
        if self.scope_denials >= self.limits.max_scope_denials:
            return self._trip(
                BreakerKind.SCOPE_DENIALS,
                f"{self.scope_denials} calls denied by the scope guard; last: "
                f"{short(first_line(text))}",
                self.scope_denials,
                self.limits.max_scope_denials,
            )
        return self.check_time()

    def _count_edit(self, paths: tuple[str, ...]) -> Trip | None:
        self.consecutive_failures = 0
        self.edits_since_verify += 1
        for path in paths:
            self.files.add(normal_path(path))
        if len(self.files) > self.limits.max_files_touched:
            return self._trip(
                BreakerKind.BLAST_RADIUS,
                f"{len(self.files)} distinct files edited, over {self.limits.max_files_touched}",
                len(self.files),
                self.limits.max_files_touched,
            )
        if self.edits_since_verify >= self.limits.max_edits_without_verify:
            check = self.verify_command or self.limits.verify_command or self.last_verify
            run = f"; run `{short(check)}`" if check else ""
            return self._trip(
                BreakerKind.UNVERIFIED_EDITS,
                f"{self.edits_since_verify} edits without a test or build run{run}",
                self.edits_since_verify,
                self.limits.max_edits_without_verify,
            )
        return self.check_time()

    def _on_final(self, final: Final) -> Trip | None:
        """A run ended: a failed one is a failure of the run (its text is the error)."""
        if self.trip is not None:
            return None
        if not final.is_error:
            return self._count_outcome(True, RUN_KEY, "")
        return self._count_outcome(False, RUN_KEY, final.text or final.subtype or "failed")

    def _count_outcome(
        self, ok: bool, command: str | None, text: str, exit_code: int | None = None
    ) -> Trip | None:
        if ok:
            self.consecutive_failures = 0
            failures = self._command_failures
            if command is not None and failures and may_have_key(command, failures):
                failures.pop(command_key(command), None)
            return self.check_time()
        self.consecutive_failures += 1
        if command is not None:
            key = command_key(command)
            counts = self._command_failures.get(key)
            if counts is None:
                counts = self._command_failures[key] = FailureCounts()
            count = counts.add(text, exit_code)
            if count >= self.limits.max_same_command_failures:
                what = "the run" if command == RUN_KEY else f"`{short(command)}`"
                return self._trip(
                    BreakerKind.COMMAND_FAILURES,
                    f"{what} failed {count} times with the same error: {short(first_line(text))}",
                    count,
                    self.limits.max_same_command_failures,
                )
        if self.consecutive_failures >= self.limits.max_consecutive_failures:
            return self._trip(
                BreakerKind.CONSECUTIVE_FAILURES,
                f"{self.consecutive_failures} tool calls failed in a row; last: "
                f"{short(first_line(text))}",
                self.consecutive_failures,
                self.limits.max_consecutive_failures,
            )
        return self.check_time()

    def _verified(self, *, clears_trip: bool) -> None:
        """A verify passed, or failed otherwise than before. Only a verify run alone
        (``verify_run``) clears the trip; a verify inside a longer command line still
        resets the edit count."""
        self.edits_since_verify = 0
        trip = self.trip
        if clears_trip and trip is not None and trip.kind is BreakerKind.UNVERIFIED_EDITS:
            self.trip = None
            self._notify(
                BreakerNotice(
                    kind=NoticeKind.CLEARED,
                    message="seawall: a test or build run cleared breaker/unverified-edits",
                )
            )

    # -- trips ----------------------------------------------------------------------

    def check_time(self) -> Trip | None:
        """Trip session-time if the wall clock ran out (also checked on every event)."""
        if self.trip is not None:
            return None
        now = self._clock()
        return None if now <= self._deadline else self._time_trip(now)

    def _time_trip(self, now: float) -> Trip:
        minutes = (now - self._started) / 60.0
        return self._trip(
            BreakerKind.SESSION_TIME,
            f"{minutes:.1f} minutes of wall clock, over {self.limits.max_session_minutes:g}",
            round(minutes, 1),
            self.limits.max_session_minutes,
        )

    def _trip(self, kind: BreakerKind, evidence: str, count: float, limit: float) -> Trip:
        trip = Trip(kind=kind, evidence=evidence, count=count, limit=limit, at=self._clock())
        self.trip = trip
        self._notify(
            BreakerNotice(kind=NoticeKind.TRIPPED, message=trip.message(self.agent), trip=trip)
        )
        return trip

    def _notify(self, notice: BreakerNotice) -> None:
        for listener in self._listeners:
            listener(notice)

    def _admit_tripped(
        self, call: ToolCall, trip: Trip, stop_note: Path | None, cwd: Path | None
    ) -> Admission:
        admission, effect = after_trip(
            call, trip, agent=self.agent, cleanup_used=self.cleanup_used,
            stop_note=stop_note, cwd=cwd,
        )  # fmt: skip
        if effect is Effect.COUNT:
            self.observe_call(call, None)
        elif effect is Effect.CLEANUP:
            self.cleanup_used += 1
        return admission

    # -- persistence ----------------------------------------------------------------

    def reset(self) -> None:
        """Clear the trip and every counter (``seawall reset --agent``, after review)."""
        fresh = AgentBreaker(
            limits=self.limits, clock=self._clock, agent=self.agent,
            verify_command=self.verify_command,
        )  # fmt: skip
        listeners = self._listeners
        for slot in _STATE_FIELDS:
            setattr(self, slot, getattr(fresh, slot))
        self._listeners = listeners

    def saved(self) -> SavedBreaker:
        """Everything needed to resume counting in another process, as a record."""
        return dump_state(self)

    @classmethod
    def resumed(
        cls,
        saved: SavedBreaker,
        *,
        limits: BreakerLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> AgentBreaker:
        """Rebuild a breaker from ``saved`` (limits come from the plan, not the record)."""
        breaker = cls(limits=limits, clock=clock, started_at=saved.started_at, agent=saved.agent)
        load_state(breaker, saved)
        return breaker


_STATE_FIELDS = (
    "_started",
    "_deadline",
    "tool_calls",
    "edits_since_verify",
    "consecutive_failures",
    "consecutive_polls",
    "scope_denials",
    "last_verify",
    "files",
    "warned",
    "cleanup_used",
    "trip",
    "_pending",
    "_repeats",
    "_command_failures",
)
