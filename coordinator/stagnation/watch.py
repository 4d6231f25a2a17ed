"""``AgentStagnation``: the five detectors of one agent, without the breaker."""

from __future__ import annotations

from pathlib import Path

from seawall.breakers.keys import PAGINATION_ARGS, KeyEncoder
from seawall.breakers.polls import BackgroundWatch, CallFacts
from seawall.events import Event, HumanTurn, Message, ToolCall, ToolResult
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

    A call's turn key and facts are derived once here and given to every detector; each
    detector keeps its own memory and applies its own rules to them.
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
        if type(event) is HumanTurn:
            self.human_turn()
        return None

    def human_turn(self) -> None:
        """A person spoke (``HumanTurn``): the runs of identical calls and of paged reads
        end, as the breaker's repeats do; error echo goes on (the same error after a
        person's "try again" is still an echo); findings already made stay."""
        self._pagination.human_turn()
        self._turn_keys.human_turn()

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
        if PAGINATION_ARGS.isdisjoint(arguments):
            key = full  # the turn key: the call key without its pagination arguments
        else:
            key = self._keys.turn_key(call.name, arguments)
        self._pagination.observe_call(call, key, facts)
        self._turn_keys.observe_call(call, key, facts)
        self._echo.observe_call(call, key, facts)
        if self._git is None:
            return ()
        found = tuple(self._git.observe_all(call, facts.command))
        self._findings.extend(found)
        return found

    def observe_result(self, result: ToolResult) -> Finding | None:
        """Feed a result; returns the error-echo finding it completed, if any."""
        self._pagination.observe_result(result)
        self._turn_keys.observe_result(result)
        return self._keep(self._echo.observe_result(result))

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
