"""The ``AgentRunner`` port: run one agent, stream its events, return its outcome.

Cancellation contract (every runner keeps it; the conformance kit in
``seawall.testing.runners`` checks it):

- **Stop and time limit are the runner's own.** ``AgentRequest.time_limit`` is enforced by
  the runner in an inner cancel scope, and ``AgentRequest.stop`` (a ``StopSignal``) lets
  the coordinator stop the agent at any moment (a breaker trip, a wave abort). In both
  cases the agent is stopped (a subprocess agent's whole process group: SIGTERM, then
  SIGKILL after a short grace) and ``run()`` *returns* an ``AgentResult`` with
  ``timed_out`` or ``cancelled`` set, the counts so far and the transcript path. This is
  how the coordinator gets a partial result: it never needs to cancel ``run()`` itself.
- **Outer cancellation propagates.** When the caller's own cancel scope is cancelled
  (``move_on_after`` around ``run()``, a task group torn down, Ctrl-C), the runner still
  kills the agent's process group (shielded cleanup) and then lets the cancellation
  propagate: ``run()`` does not return, as anyio requires. The events already emitted are
  the record; a caller that wants a result uses ``time_limit`` / ``stop`` instead.
- **Outcomes are data.** An agent that crashes, exits non-zero, prints garbage or binary,
  or times out gives an ``AgentResult``. ``RunnerError`` is raised only when the agent
  cannot be started at all (for example a missing executable, which it names).
"""

from __future__ import annotations

import abc
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar, Self

import anyio

from seawall.config.adapter_options import OptionTypes, check_options
from seawall.errors import ConfigurationError
from seawall.events import Event, Final, ToolCall, Turn, Usage
from seawall.hooks.wire import SOCKET_ENV
from seawall.model import OptionValue, RunCounts, RunnerSpec
from seawall.pricing import PriceTable
from seawall.sandbox.policy import SandboxPolicy

__all__ = [
    "AgentRequest",
    "AgentResult",
    "AgentRunner",
    "EmitFn",
    "Emitter",
    "RunCounter",
    "RunCounts",
    "RunnerProbe",
    "StopSignal",
    "build_runner",
    "runner_options",
]

EmitFn = Callable[[Event], Awaitable[None]] | Callable[[Event], None]
"""The coordinator's event callback; a plain function or a coroutine function."""


class StopSignal:
    """A one-shot request to stop an agent, with the reason; safe to set before ``run()``.

    The coordinator calls ``stop(reason)`` (from an event callback, another task, a
    breaker); the runner waits on ``wait()`` and ends the agent. The first reason wins.
    """

    __slots__ = ("_event", "_reason")

    def __init__(self) -> None:
        self._reason: str | None = None
        self._event: anyio.Event | None = None

    @property
    def reason(self) -> str | None:
        """Why the agent was stopped, or None while it may run."""
        return self._reason

    @property
    def is_set(self) -> bool:
        return self._reason is not None

    def stop(self, reason: str = "stopped") -> None:
        """Ask the runner to stop the agent. Later calls keep the first reason."""
        if self._reason is None:
            self._reason = reason or "stopped"
            if self._event is not None:
                self._event.set()

    async def wait(self) -> str:
        """Block until ``stop()`` is called; return the reason."""
        if self._reason is None:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()
        return self._reason or "stopped"

    def __repr__(self) -> str:
        return f"StopSignal(reason={self._reason!r})"


def _frozen_env(value: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRequest:
    """What one agent is asked to do, where, and within which limits.

    ``max_turns`` is a hint passed to the agent CLI; the coordinator's own count is the
    limit (it calls ``stop.stop(...)``). ``time_limit`` is wall-clock seconds, enforced by
    the runner. ``transcript_path`` is where the runner keeps the agent's raw output
    (its parent directory is created); None keeps no transcript. ``sandbox`` is what the
    agent's processes may write (enforced by the kernel for subprocess agents); None runs
    them unsandboxed, still under the supervisor that ends every process they start.
    ``manifest`` is the
    wave's scope manifest and ``manifest_sha256`` its digest: the agent's hooks are told
    both, so they never look for a manifest where the agent could have written one.
    ``hook_socket`` is where the session's hook server answers this agent's hook calls
    (None: each hook call decides in its own process).
    """

    task_id: str
    prompt: str
    workspace: Path
    session: str = ""
    wave: int = 0
    max_turns: int | None = None
    env: Mapping[str, str] = field(default_factory=_frozen_env)
    time_limit: float | None = None
    transcript_path: Path | None = None
    sandbox: SandboxPolicy | None = None
    manifest: Path | None = None
    manifest_sha256: str = ""
    hook_socket: Path | None = None
    model: str | None = None  # this attempt's model (the task's ``models``); None: the runner's
    # the conversation to continue (``AgentRunner.continues_conversations``), and the
    # workspace it ran in (a CLI that files conversations by folder finds it there)
    conversation: str | None = None
    conversation_workspace: Path | None = None
    stop: StopSignal = field(default_factory=StopSignal, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.env, MappingProxyType):
            object.__setattr__(self, "env", _frozen_env(self.env))
        if self.time_limit is not None and self.time_limit <= 0:
            raise ConfigurationError(f"task {self.task_id!r}: time_limit must be positive")

    def seawall_env(self) -> dict[str, str]:
        """The ``SEAWALL_*`` variables every subprocess agent receives."""
        env = {
            "SEAWALL_SESSION": self.session,
            "SEAWALL_WAVE": str(self.wave),
            "SEAWALL_TASK_ID": self.task_id,
            "SEAWALL_WORKSPACE": str(self.workspace),
        }
        if self.max_turns is not None:
            env["SEAWALL_MAX_TURNS"] = str(self.max_turns)
        if self.model:
            env["SEAWALL_MODEL"] = self.model
        if self.manifest is not None:
            env["SEAWALL_MANIFEST"] = str(Path(self.manifest).absolute())
            env["SEAWALL_MANIFEST_SHA256"] = self.manifest_sha256
        if self.hook_socket is not None:
            env[SOCKET_ENV] = str(self.hook_socket)
        return env


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentResult:
    """How one agent run ended. Every way of ending is a value of this type.

    ``is_error`` is true for a failed run (error final, non-zero exit, crash, timeout,
    stop). ``exit_code`` is None for agents that are not processes or never exited on
    their own; a negative code is the signal that ended the process.
    """

    task_id: str
    final_text: str = ""
    exit_code: int | None = None
    turns: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0
    is_error: bool = False
    timed_out: bool = False
    cancelled: bool = False
    stop_reason: str = ""
    transcript_path: Path | None = None
    stderr_tail: str = ""
    duration_s: float = 0.0
    queued_s: float = 0.0  # time spent waiting for a worker before the agent started

    @property
    def interrupted(self) -> bool:
        """The agent did not end by itself (timed out or stopped): its work is partial."""
        return self.timed_out or self.cancelled


class RunCounter:
    """Counts one agent's turns, tool calls, tokens, cost and wall clock from its events.

    Duties: a turn per ``Turn`` event; a tool call per ``ToolCall``; usage (uncached
    input, output, cached input read and written, each apart) and cost once
    per ``Usage.message_id`` (a repeated id is not counted again); the ``Final``'s own
    cost, when it reports one, replaces the running sum (it is the CLI's total); usage
    that comes without a cost is priced with ``prices`` (the cost is then an estimate,
    ``cost_estimated``, until a CLI total replaces it); elapsed time from ``clock``
    (inject ``anyio.current_time`` or a fake clock in tests).
    """

    __slots__ = (
        "_clock",
        "_message_ids",
        "_prices",
        "_started",
        "cache_read_tokens",
        "cache_write_tokens",
        "cost_estimated",
        "cost_usd",
        "final",
        "input_tokens",
        "last_tool",
        "output_tokens",
        "tool_calls",
        "turns",
    )

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, prices: PriceTable | None = None
    ) -> None:
        self._clock = clock
        self._prices = prices
        self.cost_estimated = False
        self._started = clock()
        self._message_ids: set[str] = set()
        self.turns = 0
        self.tool_calls = 0
        self.cost_usd = 0.0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read_tokens = 0
        self.cache_write_tokens = 0
        self.last_tool: str | None = None
        self.final: Final | None = None

    def observe(self, event: Event) -> None:
        """Count one event."""
        if isinstance(event, ToolCall):
            self.tool_calls += 1
            self.last_tool = event.name
        elif isinstance(event, Turn):
            self.turns += 1
        elif isinstance(event, Usage):
            self._usage(event)
        elif isinstance(event, Final):
            self.final = event
            if event.cost_usd is not None:
                self.cost_usd = event.cost_usd
                self.cost_estimated = False

    def _usage(self, event: Usage) -> None:
        if event.message_id:
            if event.message_id in self._message_ids:
                return
            self._message_ids.add(event.message_id)
        self.input_tokens += event.input_tokens
        self.output_tokens += event.output_tokens
        self.cache_read_tokens += event.cache_read_tokens
        self.cache_write_tokens += event.cache_write_tokens
        cost = event.cost_usd
        if not cost and self._prices is not None:
            cost = self._prices.cost(
                event.model,
                input_tokens=event.input_tokens,
                output_tokens=event.output_tokens,
                cache_read_tokens=event.cache_read_tokens,
                cache_write_tokens=event.cache_write_tokens,
            )
            self.cost_estimated = self.cost_estimated or cost > 0
        self.cost_usd += cost

    @property
    def elapsed_s(self) -> float:
        """Wall-clock seconds since the counter was made."""
        return self._clock() - self._started

    def snapshot(self) -> RunCounts:
        """The counts now, as a value."""
        return RunCounts(
            turns=self.turns,
            tool_calls=self.tool_calls,
            cost_usd=self.cost_usd,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens,
            elapsed_s=self.elapsed_s,
            last_tool=self.last_tool,
            cost_estimated=self.cost_estimated,
        )


class Emitter:
    """Delivers events to the coordinator's callback and counts them on the way.

    Runners call ``await emitter(event)``; a sync callback is called, an async one is
    awaited. ``counter`` fills the ``AgentResult``'s counts.
    """

    __slots__ = ("_emit", "counter")

    def __init__(
        self,
        emit: EmitFn,
        *,
        clock: Callable[[], float] = time.monotonic,
        prices: PriceTable | None = None,
    ) -> None:
        self._emit = emit
        self.counter = RunCounter(clock=clock, prices=prices)

    async def __call__(self, event: Event) -> None:
        self.counter.observe(event)
        outcome = self._emit(event)
        if inspect.isawaitable(outcome):
            await outcome


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerProbe:
    """The program a runner starts, for the preflight before a session's first wave.

    ``executable`` must resolve on the agent's PATH (``env`` may set it); with
    ``version_args`` the program must also run them (e.g. ``--version``) and exit 0.
    """

    executable: str
    version_args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=_frozen_env)


class AgentRunner(abc.ABC):
    """Runs one coding agent for one request. Implementations are adapters.

    Duties of ``run(request, emit)``:

    1. Start the agent in ``request.workspace`` with ``request.prompt``, passing
       ``request.env`` and the limits it can honour (``max_turns`` as a hint).
    2. Stream every normalized ``Event`` to ``emit`` while the agent runs, in order,
       as soon as it is known (the coordinator's breakers act on them live).
    3. Keep the agent's raw output at ``request.transcript_path`` when one is given.
    4. Enforce ``request.time_limit`` and obey ``request.stop``: stop the agent (a
       subprocess's whole process group) and *return* a result marked ``timed_out``
       or ``cancelled``.
    5. On outer cancellation, stop the agent, then let the cancellation propagate.
    6. Return an ``AgentResult`` for every way the agent can end; raise ``RunnerError``
       only when the agent cannot be started at all.

    A runner instance may serve many concurrent ``run()`` calls (one wave); per-run
    state lives inside ``run()``.

    ``starts_processes`` is True for a runner whose agents are OS processes it starts
    on this machine, which therefore applies ``request.sandbox`` (seawall's subprocess
    runners do). For the others (Python callables, scripted agents) the sandbox does not
    apply, and the session never refuses a wave for want of one.

    ``provider`` names the model provider whose limits the runner's agents meet (see
    ``seawall.events.ProviderLimit``; the CLI's ``Final.limit`` reports one).

    ``barrier`` says in a few words what keeps this runner's agents inside their scope
    while they run (``seawall plan`` shows it); the post-wave check of the whole change
    applies to every runner.

    ``continues_conversations`` is True for a runner whose agent CLI can continue an
    earlier conversation: its events name the conversation (``events.Conversation``),
    and given ``request.conversation`` it continues that one with ``request.prompt`` as
    the next message instead of starting a new one.
    """

    starts_processes: ClassVar[bool] = False

    @property
    def reports_edits(self) -> bool:
        """Whether this runner's events name every file its agents edit (edit tool calls
        with their paths). When they do not (a plain command, a callable that writes by
        itself), the session watches the agent's workspace and takes a checkpoint per
        burst of writes, so its edit history, spiral rule and evidence check still work."""
        return False

    @property
    def continues_conversations(self) -> bool:
        """Whether this runner's agent CLI continues an earlier conversation given
        ``request.conversation`` (see the class docstring)."""
        return False

    @property
    def provider(self) -> str:
        """The model provider this runner's agents use (``anthropic``, ``openai``, ...):
        a provider's limit pauses and holds the agents of every runner that names it;
        "" when unknown (such runners share one hold)."""
        return ""

    @property
    def barrier(self) -> str:
        """The live scope barrier of this runner's agents, in a few words."""
        return "none while the agent runs (the post-wave check only)"

    @abc.abstractmethod
    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Run one agent to its end; see the class docstring for the duties."""

    def probe(self) -> RunnerProbe | None:
        """The program this runner starts, checked before the first wave (see
        ``RunnerProbe``); None for runners that start no local program."""
        return None

    async def stop_remote_orphans(self, session: str, task_id: str) -> list[str]:
        """Stop the agents of ``task_id`` in ``session`` that a dead coordinator left
        running on other machines (the session itself stops those on this one), before
        a resume salvages the task and dispatches it again. A line per place where one
        was stopped; ``RunnerError`` when a place cannot be looked at. Runners whose
        agents run only here have nothing to stop."""
        return []

    @classmethod
    def from_spec(cls, spec: RunnerSpec) -> Self:
        """Build a runner from a plan's ``[runners.NAME]`` table.

        ``spec.options`` are typed TOML values; check them with ``runner_options``.
        Runners that cannot be configured from a plan (a Python callable) refuse with a
        ``ConfigurationError``; pass an instance to the library instead.
        """
        raise ConfigurationError(
            f"runner {spec.name!r}: kind {spec.kind!r} cannot be configured from a plan; "
            "pass a runner instance to the session instead"
        )


def undeclared_processes(cls: type[AgentRunner]) -> str | None:
    """A warning for a third-party runner that does not say whether its agents are
    processes it starts (``starts_processes``, left at the base's default): if they are,
    they run without the OS sandbox. None for seawall's own runners and for a runner class
    (or a base it builds on, such as ``StreamingCliRunner``) that declares it."""
    if cls.__module__.split(".")[0] == "seawall":
        return None
    for klass in cls.__mro__:
        if klass is AgentRunner:
            break
        if "starts_processes" in vars(klass):
            return None
    return (
        f"runner {cls.__module__}.{cls.__qualname__} does not declare starts_processes: "
        "if its agents are processes it starts, they run without the OS sandbox. Set "
        "starts_processes = True and run them under request.sandbox (or build on "
        "StreamingCliRunner, which does), or set it False to say they are not processes"
    )


def runner_options(spec: RunnerSpec, known: OptionTypes) -> dict[str, OptionValue]:
    """The ``options`` of ``[runners.NAME]`` a runner accepts, checked against ``known``.

    ``known`` maps each option to its type(s): ``str``, ``int``, ``float``, ``bool`` or
    ``tuple`` (a list of strings); an int is accepted where a float is, and a number
    option also accepts its decimal text (``"2.5"``). An unknown key or a wrong type is a
    ``ConfigurationError`` naming ``runners.NAME.options.KEY``, with the nearest known
    key suggested.
    """
    return check_options(
        spec.options,
        known,
        field=f"runners.{spec.name}.options",
        owner=f"the {spec.kind} runner",
        numeric_text=True,
    )


def build_runner(spec: RunnerSpec) -> AgentRunner:
    """The runner a plan's ``[runners.NAME]`` table describes, resolved by its kind."""
    from seawall.registry import RUNNER_GROUP, resolve  # lazy: adapters load on use

    target = resolve(RUNNER_GROUP, spec.kind)
    if not (isinstance(target, type) and issubclass(target, AgentRunner)):
        raise ConfigurationError(f"runner {spec.name!r}: {spec.kind!r} is not an AgentRunner")
    return target.from_spec(spec)
