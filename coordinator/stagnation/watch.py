"""``AgentStagnation``: the five detectors of one agent, without the breaker."""

from __future__ import annotations

from pathlib import Path

from seawall.breakers._memory import Repeat
from seawall.breakers.keys import PAGINATION_ARGS, KeyEncoder, canonical_json
from seawall.breakers.polls import BackgroundWatch, CallFacts
from seawall.events import EDIT_TOOLS, Event, Message, ToolCall, ToolResult
from seawall.model import Isolation, StagnationConfig, Status
from seawall.stagnation.detectors import (
    ErrorEchoDetector,
    PaginationDetector,
    StatusPartialDetector,
    TurnKeyDetector,
)
from seawall.stagnation.finding import Finding, Pattern
from seawall.stagnation.gitwrite import GitWriteDetector

__all__ = ["AgentStagnation"]


class AgentStagnation:
    """The five stagnation detectors over one agent's events.

    Duties: ``observe`` each event and return a live finding (error echo, git write,
    status-partial) the moment it fires; ``findings()`` runs the post-wave checks
    (pagination spiral, turn-key repetition) once and returns every finding. Git-write
    detection needs to know the agent's ``workspace`` and the shared ``repo``; without
    either it is off. Writes nothing: ``AgentMonitor`` records the findings.

    Each call and result goes through every detector's memory in one pass (the rules
    are the detectors' own, written where they are fed: a live watch sees many events).
    """

    __slots__ = (
        "_background",
        "_echo",
        "_findings",
        "_finished",
        "_git",
        "_keys",
        "_pagination",
        "_status",
        "_turn_keys",
    )

    def __init__(
        self,
        *,
        config: StagnationConfig | None = None,
        agent: str = "",
        workspace: Path | None = None,
        repo: Path | None = None,
        isolation: Isolation = Isolation.NONE,
        background: BackgroundWatch | None = None,
        keys: KeyEncoder | None = None,
    ) -> None:
        """``background`` is a watch of background jobs shared with the agent's breaker;
        without one the detectors keep their own. ``keys`` writes the call keys (the
        standard encoder unless given)."""
        config = config or StagnationConfig()
        self._keys = keys if keys is not None else KeyEncoder()
        self._pagination = PaginationDetector(agent=agent, threshold=config.pagination_reads)
        self._turn_keys = TurnKeyDetector(agent=agent, threshold=config.turn_key_repeats)
        self._background = background if background is not None else BackgroundWatch()
        self._echo = ErrorEchoDetector(agent=agent, threshold=config.error_echo_repeats)
        self._status = StatusPartialDetector(agent=agent)
        self._git = (
            None
            if workspace is None and repo is None
            else GitWriteDetector(
                agent=agent,
                workspace=workspace or repo or Path(),
                repo=repo or workspace or Path(),
                isolation=isolation,
            )
        )
        self._findings: list[Finding] = []
        self._finished = False

    @property
    def finished(self) -> bool:
        """Whether the post-wave checks ran."""
        return self._finished

    @property
    def live_status(self) -> Status | None:
        """The last STATUS the agent wrote live; its final report wins over this."""
        return self._status.status

    def observe(self, event: Event) -> Finding | None:
        """Feed one event; return the (first) live finding it produced, if any."""
        if type(event) is ToolCall:
            found = self.observe_call(event)[1]
            return found[0] if found else None
        if type(event) is ToolResult:
            return self.observe_result(event)
        if type(event) is Message:
            return self.observe_message(event)
        return None

    def observe_call(self, call: ToolCall) -> tuple[str, tuple[Finding, ...]]:
        """Feed a call; returns its full call key (so the breaker need not compute the
        canonical JSON again) and the git-write findings it produced (one per kind)."""
        full = self._keys.call_key(call.name, call.arguments)
        facts = self._background.judge(call)
        return full, self.observe_judged(call, full, facts)

    def observe_judged(self, call: ToolCall, full: str, facts: CallFacts) -> tuple[Finding, ...]:
        """``observe_call`` for a call whose full key and facts the caller derived
        (``BackgroundWatch.judge``); returns the git-write findings."""
        arguments = call.arguments
        name = call.name
        call_id = call.call_id
        command, _, _, wait, paths, read = facts
        paged = not PAGINATION_ARGS.isdisjoint(arguments)
        key = self._keys.turn_key(name, arguments) if paged else full  # the turn key
        # pagination: an edit ends every streak; a read waits for its result
        pagination = self._pagination
        if name in EDIT_TOOLS:
            pagination.edited(paths)
        elif read is not None:
            pages = (
                canonical_json({n: v for n, v in arguments.items() if n in PAGINATION_ARGS})
                if paged
                else "{}"
            )
            pagination.pending[call_id] = ((read, key), pages)
        # turn keys: a call that is no wait extends or starts the run of its key
        if not wait:
            turns = self._turn_keys
            if key == turns.key:
                turns.run += 1
            else:
                turns.key, turns.run, turns.last = key, 1, None
            turns.pending[call_id] = key
            run = turns.run
            if run >= turns.threshold and run > turns.best.get(key, 0):
                turns.best[key] = run
        self._echo.pending[call_id] = (call, key)
        if self._git is None or command is None or "git" not in command:
            return ()  # git writes are shell commands that name git
        found = tuple(self._git.observe_all(call, command))
        if found:
            self._findings.extend(found)
        return found

    def observe_result(self, result: ToolResult) -> Finding | None:
        """Feed a result; returns the error-echo finding it completed, if any."""
        call_id = result.call_id
        cancelled = result.cancelled
        exit_code = result.exit_code
        failed = not cancelled and (result.is_error or (exit_code is not None and exit_code != 0))
        # pagination: a read that failed (or never ran) read nothing
        pagination = self._pagination
        read = pagination.pending.pop(call_id, None)
        if read is not None and not failed and not cancelled:
            streak_id, pages = read
            streak = pagination.streaks.get(streak_id)
            if streak is None:
                streak = pagination.streaks[streak_id] = set()
            streak.add(pages)
            if len(streak) >= pagination.threshold:
                pagination.candidates[streak_id] = streak
        # turn keys: a repeat that saw a new answer was a wait
        turns = self._turn_keys
        key = turns.pending.pop(call_id, None)
        if key is not None and key == turns.key:
            if cancelled:  # it never ran: it repeats nothing
                if turns.best.get(key) == turns.run:
                    turns.drop_best(key)
                turns.run -= 1
            elif turns.last is None:
                turns.last = (result.text, not failed)
            else:
                last = turns.last = Repeat.of(turns.last)
                if not last.same_result(result.text, ok=not failed):
                    if turns.best.get(key) == turns.run:
                        turns.drop_best(key)  # the run that reached the threshold was a wait
                    turns.run = 1
        if result.is_error or exit_code:
            return self._keep(self._echo.observe_result(result))
        self._echo.pending.pop(call_id, None)
        return None

    def observe_message(self, message: Message) -> Finding | None:
        """Feed the agent's text; returns the status-partial finding, once."""
        return self._keep(self._status.observe_message(message))

    def _keep(self, finding: Finding | None) -> Finding | None:
        if finding is not None:
            self._findings.append(finding)
        return finding

    def finish(self) -> tuple[Finding, ...]:
        """Run the post-wave checks once; returns only the findings they added."""
        if self._finished:
            return ()
        self._finished = True
        added = (*self._pagination.finish(), *self._turn_keys.finish())
        self._findings.extend(added)
        return added

    def findings(self) -> tuple[Finding, ...]:
        """Every finding, after running the post-wave checks (idempotent)."""
        self.finish()
        return tuple(self._findings)

    def of(self, pattern: Pattern) -> tuple[Finding, ...]:
        return tuple(f for f in self._findings if f.pattern is pattern)
