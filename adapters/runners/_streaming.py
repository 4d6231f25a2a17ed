"""A runner for an agent CLI that streams JSON lines on stdout (Claude Code, Codex)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar, Protocol

from adapters.runners._process import (
    DEFAULT_KILL_GRACE,
    agent_environment,
    process_result,
    spawn_agent,
)
from coordinator.errors import ConfigurationError
from coordinator.events import Event
from coordinator.model import RunnerSpec
from coordinator.pricing import PriceTable
from coordinator.runner import (
    AgentRequest,
    AgentResult,
    AgentRunner,
    EmitFn,
    Emitter,
    RunnerProbe,
)

__all__ = ["LineParser", "StreamingCliRunner", "spec_options"]


class LineParser(Protocol):
    """What the runner needs of a transcript parser."""

    def feed(self, line: str) -> list[Event]: ...

    def finish(self) -> list[Event]: ...


class StreamingCliRunner(AgentRunner):
    """Runs an agent CLI whose stdout is JSON lines; subclasses give argv and a parser."""

    default_executable: ClassVar[str]
    starts_processes: ClassVar[bool] = True

    def __init__(
        self,
        *,
        executable: str | None = None,
        model: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        kill_grace: float = DEFAULT_KILL_GRACE,
    ) -> None:
        self.executable = executable or self.default_executable
        self.model = model
        self.extra_args = tuple(extra_args)
        self.env: Mapping[str, str] = MappingProxyType(dict(env or {}))
        self.kill_grace = kill_grace

    def argv(self, request: AgentRequest) -> list[str]:
        """The command line for ``request`` (the prompt goes on stdin)."""
        raise NotImplementedError

    def probe(self) -> RunnerProbe:
        """The CLI must resolve and answer ``--version`` before the first wave."""
        return RunnerProbe(executable=self.executable, version_args=("--version",), env=self.env)

    def parser(self) -> LineParser:
        """A fresh parser for one run."""
        raise NotImplementedError

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Run the CLI for ``request``, streaming parsed events; see ``AgentRunner``."""
        return await self.run_argv(request, emit, self.argv(request))

    async def run_argv(
        self, request: AgentRequest, emit: EmitFn, argv: Sequence[str]
    ) -> AgentResult:
        """Run ``argv`` as the agent of ``request`` (for subclasses that prepare files)."""
        emitter = Emitter(emit, prices=PriceTable())
        parser = self.parser()

        async def on_line(line: str) -> None:
            for event in parser.feed(line):
                await emitter(event)

        outcome = await spawn_agent(
            argv,
            request=request,
            env=agent_environment(request, self.env),
            on_line=on_line,
            kill_grace=self.kill_grace,
        )
        for event in parser.finish():
            await emitter(event)
        return process_result(request, outcome, emitter)


def spec_options(spec: RunnerSpec, known: Sequence[str]) -> dict[str, str]:
    """The plan table's ``options``, refusing names not in ``known`` with a clear error."""
    options = dict(spec.options)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ConfigurationError(
            f"runner {spec.name!r}: unknown option(s) {unknown}; known: {', '.join(known)}"
        )
    return options
