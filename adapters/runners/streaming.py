"""``StreamingCliRunner``: the public base for an agent CLI that prints JSON lines.

A subclass gives three things: ``argv(request)`` (the command line; the prompt goes to
stdin), ``parser()`` (a fresh ``LineParser`` turning stdout lines into ``Event``s) and,
when the CLI's tool names are not seawall's, ``tool_names`` (a ``ToolNames`` mapping).
The base does the rest, the same way for every CLI: it resolves the executable on the
agent's PATH, runs it in the workspace under seawall's supervisor and the request's OS
sandbox (writes only in the workspace or scope, a private ``TMPDIR``, the CLI's state
directories from ``state_paths``) in a process group of its own; keeps the raw stdout
at ``request.transcript_path``; enforces ``request.time_limit`` and ``request.stop``
(SIGTERM to the whole group, SIGKILL after ``kill_grace``; every process the agent
started ends with it); keeps the tail of stderr; counts turns, tool calls and cost
from the events; and returns an ``AgentResult`` for every way the agent ends.

Options: ``option_types`` declares the ``[runners.NAME] options`` a runner accepts and
their types; ``from_spec`` checks them (``seawall.runner.runner_options``) and passes
each one to the constructor as a keyword argument of the same name.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar, Protocol, Self

from seawall.adapters.runners._process import (
    DEFAULT_KILL_GRACE,
    LineHandler,
    ProcessOutcome,
    agent_environment,
    check_grace,
    process_result,
    spawn_agent,
)
from seawall.adapters.runners.tool_names import (
    CANONICAL_TOOLS,
    Tool,
    ToolGate,
    ToolNames,
    strict_scope,
)
from seawall.codec import JsonObject
from seawall.config.adapter_options import OptionTypes
from seawall.errors import ConfigurationError
from seawall.events import Event
from seawall.model import RunnerSpec
from seawall.pricing import PriceTable
from seawall.runner import (
    AgentRequest,
    AgentResult,
    AgentRunner,
    EmitFn,
    Emitter,
    RunnerProbe,
    runner_options,
)

__all__ = [
    "CANONICAL_TOOLS",
    "DEFAULT_KILL_GRACE",
    "LineParser",
    "ProcessOutcome",
    "StreamingCliRunner",
    "Tool",
    "ToolGate",
    "ToolNames",
    "strict_scope",
]


class LineParser(Protocol):
    """Turns an agent CLI's stdout into events: ``feed`` one line (without its newline),
    ``finish`` at the end of the output (events held back, e.g. a synthesised ``Final``)."""

    def feed(self, line: str) -> list[Event]: ...

    def finish(self) -> list[Event]: ...


class StreamingCliRunner(AgentRunner):
    """An agent CLI whose stdout is JSON lines; see the module docstring for the duties
    a subclass takes on (``argv``, ``parser``, ``tool_names``) and those of the base."""

    default_executable: ClassVar[str]
    starts_processes: ClassVar[bool] = True
    tool_names: ClassVar[ToolNames] = ToolNames()
    option_types: ClassVar[OptionTypes] = MappingProxyType({"executable": str, "kill_grace": float})

    @property
    def reports_edits(self) -> bool:
        return True  # the CLI's edit tool calls, made canonical by ``tool_names``

    def __init__(
        self,
        *,
        executable: str | None = None,
        model: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        kill_grace: float = DEFAULT_KILL_GRACE,
    ) -> None:
        self.kill_grace = check_grace(kill_grace)
        self.executable = executable or self.default_executable
        self.model = model
        self.extra_args = tuple(extra_args)
        self.env: Mapping[str, str] = MappingProxyType(dict(env or {}))

    @classmethod
    def from_spec(cls, spec: RunnerSpec) -> Self:
        """Build from ``[runners.NAME]``: ``model``, ``argv`` (extra arguments), ``env``
        and each option of ``option_types`` as the constructor's keyword argument."""
        options: JsonObject = runner_options(spec, cls.option_types)
        try:
            return cls(model=spec.model, extra_args=spec.argv, env=spec.env, **options)
        except ConfigurationError as exc:
            raise ConfigurationError(f"runners.{spec.name}: {exc}") from None

    def model_for(self, request: AgentRequest) -> str | None:
        """The model of this attempt: the task's (``Task.models``), else the runner's."""
        return request.model or self.model

    # -- what a subclass gives -----------------------------------------------------------

    @abc.abstractmethod
    def argv(self, request: AgentRequest) -> list[str]:
        """The command line for ``request`` (the prompt goes on stdin)."""

    @abc.abstractmethod
    def parser(self) -> LineParser:
        """A fresh parser for one run."""

    def state_paths(self, env: Mapping[str, str]) -> tuple[Path, ...]:
        """Directories of the CLI's own state (config, sessions, caches) the OS sandbox
        lets it write, made when missing; Claude Code's, Codex's and the XDG cache are
        always granted."""
        del env
        return ()

    # -- what the base does --------------------------------------------------------------

    def probe(self) -> RunnerProbe:
        """The CLI must resolve and answer ``--version`` before the first wave."""
        return RunnerProbe(executable=self.executable, version_args=("--version",), env=self.env)

    def environment(self, request: AgentRequest) -> dict[str, str]:
        """The agent's environment: ours, the runner's ``env``, the request's, SEAWALL_*."""
        return agent_environment(request, self.env)

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Run the CLI for ``request``, streaming parsed events; see ``AgentRunner``."""
        return await self.run_argv(request, emit, self.argv(request))

    async def run_argv(
        self,
        request: AgentRequest,
        emit: EmitFn,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
    ) -> AgentResult:
        """Run ``argv`` as the agent of ``request`` (for subclasses that prepare files)."""
        emitter = self.emitter(request, emit)
        parser = self.parser()

        async def on_line(line: str) -> None:
            for event in parser.feed(line):
                await emitter(event)

        outcome = await self.spawn(request, argv, env=env, on_line=on_line)
        for event in parser.finish():
            await emitter(event)
        return self.result(request, outcome, emitter)

    def result(
        self, request: AgentRequest, outcome: ProcessOutcome, emitter: Emitter
    ) -> AgentResult:
        """The run's ``AgentResult``: counts from ``emitter``, the final event's text
        and error flag; no final event, a non-zero exit, a time limit or a stop is an
        error."""
        return process_result(request, outcome, emitter)

    @property
    def refuses_unknown_tools(self) -> bool:
        """Whether a strict wave stops the agent at a tool seawall does not know (True
        unless a layer inside the CLI, such as seawall's hooks, judges every call)."""
        return True

    def emitter(self, request: AgentRequest, emit: EmitFn) -> Emitter:
        """An ``Emitter`` that normalises tool names and, in a strict wave, stops the
        agent at its first call of a tool seawall does not know (``ToolNames.refusal``)."""
        strict = self.refuses_unknown_tools and strict_scope(request)
        return ToolGate(
            emit, names=self.tool_names, request=request, strict=strict, prices=PriceTable()
        )

    async def spawn(
        self,
        request: AgentRequest,
        argv: Sequence[str],
        *,
        on_line: LineHandler,
        env: Mapping[str, str] | None = None,
    ) -> ProcessOutcome:
        """Start ``argv`` for ``request`` and supervise it to its end (see the module
        docstring); ``env`` defaults to ``environment(request)``."""
        env = dict(env) if env is not None else self.environment(request)
        return await spawn_agent(
            argv,
            request=request,
            env=env,
            on_line=on_line,
            kill_grace=self.kill_grace,
            state=self.state_paths(env),
        )
