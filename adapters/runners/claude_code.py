"""The ``claude-code`` runner: Claude Code's headless mode as an agent.

Runs ``claude -p --output-format stream-json --verbose --max-turns N [--model M]
[extra args]`` in the agent's workspace with the prompt on stdin (``-p`` reads the prompt
from stdin when none is given as an argument; stdin avoids argument-length limits and
keeps the prompt out of process listings), and parses stdout with
``ClaudeStreamParser``. ``--max-turns`` is only a hint: the coordinator counts turns.
"""

from __future__ import annotations

from typing import ClassVar, Self

from adapters.runners._process import parse_grace
from adapters.runners._streaming import LineParser, StreamingCliRunner, spec_options
from coordinator.model import RunnerSpec
from coordinator.runner import AgentRequest
from coordinator.transcripts import ClaudeStreamParser

__all__ = ["ClaudeCodeRunner"]


class ClaudeCodeRunner(StreamingCliRunner):
    """Claude Code CLI runner. Plan table::

    [runners.claude]
    kind = "claude-code"
    model = "sonnet"
    argv = ["--permission-mode", "acceptEdits"]   # extra arguments, appended
    options = { executable = "claude", kill_grace = "2" }
    """

    default_executable: ClassVar[str] = "claude"

    @classmethod
    def from_spec(cls, spec: RunnerSpec) -> Self:
        options = spec_options(spec, ("executable", "kill_grace"))
        return cls(
            executable=options.get("executable"),
            model=spec.model,
            extra_args=spec.argv,
            env=spec.env,
            kill_grace=parse_grace(spec.name, options.get("kill_grace")),
        )

    def argv(self, request: AgentRequest) -> list[str]:
        argv = [self.executable, "-p", "--output-format", "stream-json", "--verbose"]
        if request.max_turns is not None:
            argv += ["--max-turns", str(request.max_turns)]
        if self.model:
            argv += ["--model", self.model]
        return [*argv, *self.extra_args]

    def parser(self) -> LineParser:
        return ClaudeStreamParser()
