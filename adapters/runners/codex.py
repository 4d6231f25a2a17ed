"""The ``codex`` runner: Codex's non-interactive ``exec`` mode as an agent.

Runs ``codex exec --json --sandbox workspace-write [--model M] [extra args] -`` in the
agent's workspace with the prompt on stdin (``-`` makes ``exec`` read it from there),
and parses stdout with ``CodexJsonParser``. ``codex exec`` has no turn flag: the
coordinator's own count is the limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar, Self

from adapters.runners._process import DEFAULT_KILL_GRACE, parse_grace
from adapters.runners._streaming import LineParser, StreamingCliRunner, spec_options
from coordinator.model import RunnerSpec
from coordinator.runner import AgentRequest
from coordinator.transcripts import CodexJsonParser

__all__ = ["CodexRunner"]


class CodexRunner(StreamingCliRunner):
    """Codex CLI runner. ``sandbox`` is passed as ``--sandbox`` (``None`` omits it, for
    when the extra arguments or the user's config choose). Plan table::

        [runners.codex]
        kind = "codex"
        model = "gpt-5-codex"
        argv = ["--skip-git-repo-check"]              # extra arguments
        options = { executable = "codex", sandbox = "workspace-write", kill_grace = "2" }
    """

    default_executable: ClassVar[str] = "codex"

    def __init__(
        self,
        *,
        executable: str | None = None,
        model: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        kill_grace: float = DEFAULT_KILL_GRACE,
        sandbox: str | None = "workspace-write",
    ) -> None:
        super().__init__(
            executable=executable,
            model=model,
            extra_args=extra_args,
            env=env,
            kill_grace=kill_grace,
        )
        self.sandbox = sandbox

    @classmethod
    def from_spec(cls, spec: RunnerSpec) -> Self:
        options = spec_options(spec, ("executable", "kill_grace", "sandbox"))
        sandbox = options.get("sandbox", "workspace-write")
        return cls(
            executable=options.get("executable"),
            model=spec.model,
            extra_args=spec.argv,
            env=spec.env,
            kill_grace=parse_grace(spec.name, options.get("kill_grace")),
            sandbox=None if sandbox in ("", "none") else sandbox,
        )

    def argv(self, request: AgentRequest) -> list[str]:
        argv = [self.executable, "exec", "--json"]
        if self.sandbox:
            argv += ["--sandbox", self.sandbox]
        if self.model:
            argv += ["--model", self.model]
        return [*argv, *self.extra_args, "-"]

    def parser(self) -> LineParser:
        return CodexJsonParser(model=self.model or "")
