"""The ``command`` runner: any CLI as an agent.

The prompt goes to the command's stdin and into the file named by ``SEAWALL_PROMPT_FILE``;
the environment carries ``SEAWALL_SESSION``, ``SEAWALL_WAVE``, ``SEAWALL_TASK_ID``,
``SEAWALL_WORKSPACE`` and ``SEAWALL_MAX_TURNS``; the working directory is the workspace.
With ``output = "text"`` (the default) stdout is the agent's final message (each line
is also emitted live as a ``Message``, so a STATUS line survives a kill); with
``output = "stream-json"`` stdout is parsed as Claude Code stream-json or Codex
``exec --json`` lines (recognized per line), and plain lines in between are tolerated;
there the exit code decides success when no result line came (the last message is
then the final text).
"""

from __future__ import annotations

import tempfile
from collections import deque
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar, Self

from seawall.adapters.runners._process import (
    DEFAULT_KILL_GRACE,
    LineHandler,
    ProcessOutcome,
    agent_environment,
    check_grace,
    process_result,
    spawn_agent,
)
from seawall.adapters.runners.tool_names import ToolGate, ToolNames, strict_scope
from seawall.codec import JsonObject
from seawall.errors import ConfigurationError
from seawall.events import Final, Message
from seawall.model import RunnerSpec
from seawall.runner import (
    AgentRequest,
    AgentResult,
    AgentRunner,
    EmitFn,
    Emitter,
    RunnerProbe,
    runner_options,
)
from seawall.transcripts import TranscriptReader

__all__ = ["CommandRunner", "OutputFormat"]

_MAX_TEXT = 1024 * 1024  # final text kept from a text-mode agent (its tail)


class OutputFormat(StrEnum):
    """How a command agent's stdout is read."""

    TEXT = "text"
    STREAM_JSON = "stream-json"


class CommandRunner(AgentRunner):
    """Runs ``argv`` as the agent, once per request. Plan table::

    [runners.mine]
    kind = "command"
    argv = ["python", "agent.py"]
    env = { MY_FLAG = "1" }
    options = { output = "stream-json", kill_grace = 1.5 }
    """

    starts_processes: ClassVar[bool] = True

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        output: OutputFormat | str = OutputFormat.TEXT,
        kill_grace: float = DEFAULT_KILL_GRACE,
    ) -> None:
        if not argv:
            raise ConfigurationError("command runner: argv must name a command")
        try:
            self.output = OutputFormat(output)
        except ValueError:
            raise ConfigurationError(
                f"command runner: output must be 'text' or 'stream-json', not {output!r}"
            ) from None
        self.argv = tuple(argv)
        self.env: Mapping[str, str] = MappingProxyType(dict(env or {}))
        self.kill_grace = check_grace(kill_grace)

    @property
    def reports_edits(self) -> bool:
        """Stream-json output names the agent's edits; plain text does not (the session
        then watches the workspace)."""
        return self.output is OutputFormat.STREAM_JSON

    @classmethod
    def from_spec(cls, spec: RunnerSpec) -> Self:
        options: JsonObject = runner_options(spec, {"output": str, "kill_grace": float})
        try:
            return cls(spec.argv, env=spec.env, **options)
        except ConfigurationError as exc:
            raise ConfigurationError(f"runners.{spec.name}: {exc}") from None

    def probe(self) -> RunnerProbe:
        """The command's program must resolve before the first wave."""
        return RunnerProbe(executable=self.argv[0], env=self.env)

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Run the command for ``request``; see ``AgentRunner`` for the duties."""
        strict = self.output is OutputFormat.STREAM_JSON and strict_scope(request)
        emitter = ToolGate(emit, names=ToolNames(), request=request, strict=strict)
        with tempfile.TemporaryDirectory(prefix="seawall-prompt-") as scratch:
            prompt_file = _write_prompt(request, Path(scratch))
            env = agent_environment(request, self.env)
            env["SEAWALL_PROMPT_FILE"] = str(prompt_file)
            if self.output is OutputFormat.STREAM_JSON:
                return await self._run_stream(request, env, emitter)
            return await self._run_text(request, env, emitter)

    async def _run_text(
        self, request: AgentRequest, env: dict[str, str], emitter: Emitter
    ) -> AgentResult:
        tail = _TextTail()

        async def collect(line: str) -> None:
            tail.add(line)
            if line.strip():  # live, so a STATUS line counts even if the agent is killed
                await emitter(Message(text=line))

        outcome = await self._spawn(request, env, collect)
        text = tail.text()
        if not outcome.timed_out and not outcome.cancelled:
            failed = outcome.exit_code != 0
            await emitter(Final(text=text, is_error=failed, subtype="exit"))
        return process_result(request, outcome, emitter, fallback_text=text)

    async def _run_stream(
        self, request: AgentRequest, env: dict[str, str], emitter: Emitter
    ) -> AgentResult:
        reader = TranscriptReader()
        last_message = ""

        async def parse(line: str) -> None:
            nonlocal last_message
            for event in reader.feed(line):
                if isinstance(event, Message):
                    last_message = event.text
                await emitter(event)

        outcome = await self._spawn(request, env, parse)
        for event in reader.finish():
            await emitter(event)
        return process_result(
            request, outcome, emitter, fallback_text=last_message, require_final=False
        )

    async def _spawn(
        self, request: AgentRequest, env: dict[str, str], on_line: LineHandler
    ) -> ProcessOutcome:
        return await spawn_agent(
            self.argv, request=request, env=env, on_line=on_line, kill_grace=self.kill_grace
        )


def _write_prompt(request: AgentRequest, scratch: Path) -> Path:
    """The prompt file, next to the transcript when there is one (kept for review)."""
    if request.transcript_path is not None:
        path = request.transcript_path.with_name(request.transcript_path.stem + ".prompt.md")
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        path = scratch / "prompt.md"
    path.write_text(request.prompt, encoding="utf-8")
    return path


class _TextTail:
    """The last ``_MAX_TEXT`` characters of a text agent's stdout, kept as lines."""

    __slots__ = ("_lines", "_size")

    def __init__(self) -> None:
        self._lines: deque[str] = deque()
        self._size = 0

    def add(self, line: str) -> None:
        self._lines.append(line)
        self._size += len(line) + 1
        while self._size > _MAX_TEXT and len(self._lines) > 1:
            self._size -= len(self._lines.popleft()) + 1

    def text(self) -> str:
        return "\n".join(self._lines).strip("\n")[-_MAX_TEXT:]
