"""The ``codex`` runner: Codex's non-interactive ``exec`` mode as an agent.

Runs ``codex exec --json --sandbox workspace-write [--model M] [extra args] -`` in the
agent's workspace with the prompt on stdin (``-`` makes ``exec`` read it from there).
``codex exec`` has no turn flag: the coordinator's own count is the limit.

**The barrier is Codex's own sandbox.** ``workspace-write`` lets the agent's commands
and patches write only inside the workspace and a private temporary directory the
runner makes for the run and exports as ``$TMPDIR`` (it passes
``sandbox_workspace_write.exclude_slash_tmp=true``, so the rest of ``/tmp`` is not a
writable root; the directory is removed after the run), with ``exec``'s approval policy
``never``: a write outside fails at once instead of waiting for an answer. seawall's
hooks do not run inside Codex, so this sandbox and the post-wave check of the whole
change are the layers; ``sandbox = "none"`` leaves only the post-wave check (and
``danger-full-access`` turns the sandbox off). When seawall runs the agent in its own OS
sandbox (``request.sandbox``, Landlock), that is the barrier, and Codex's is turned off
for the run: Codex's sandbox (bubblewrap) cannot start inside another one.

**What the stream hides is read from the rollout file.** ``--json`` gives no event for
an ``apply_patch`` that fails, none for a ``write_stdin`` poll, and one usage total per
run. Codex writes every model response to
``$CODEX_HOME/sessions/**/rollout-*-<thread id>.jsonl`` as it goes; the runner follows
that file live (from the thread id of the stream's first line) and takes tool calls,
results, turns and per-response usage from it, so failed edits reach the detectors and
polls the no-progress breaker while the agent runs. When no rollout file appears (an
older Codex, ``rollout = "off"``), the stream's own events are used.

**A patch run through the shell is an edit.** A model Codex does not know (any custom
or local provider) gets no ``apply_patch`` tool and edits with ``apply_patch <<'PATCH'``
through ``exec_command``; both parsers read such a command as the ``apply_patch`` edit
it is (``seawall.transcripts.codex_patch``), so it gets its checkpoint, its files are
the agent's, and a rejected one is a failed edit.

**A thread continues** with ``codex exec resume --json -c sandbox_mode="…" <thread id> -``
(``request.conversation``; ``exec resume`` has no ``--sandbox`` flag). Codex keeps the
thread id and appends to the same rollout file, so the runner follows it from the size it
had before the run: only the responses of this run count.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

import anyio

from seawall.adapters.runners.streaming import (
    DEFAULT_KILL_GRACE,
    LineParser,
    StreamingCliRunner,
    ToolNames,
)
from seawall.config.adapter_options import OptionTypes
from seawall.errors import ConfigurationError, RunnerError
from seawall.events import Conversation, Event, Final
from seawall.runner import AgentRequest, AgentResult, EmitFn, Emitter
from seawall.sandbox.launch import available as sandbox_available
from seawall.stagnation.transcript_tail import LineFollower
from seawall.transcripts import CodexJsonParser, CodexRolloutParser

__all__ = ["CodexRunner", "codex_home_of"]

_POLL_S = 0.05
_FIND_GRACE_S = 0.75  # after the stream's first line, how long a missing rollout is sought
_ROLLOUT_MODES = ("follow", "off")


def codex_home_of(env: Mapping[str, str]) -> Path:
    """Where Codex keeps its state for an agent with environment ``env``."""
    home = env.get("CODEX_HOME")
    if home:
        return Path(home)
    return Path(env.get("HOME") or Path("~").expanduser()) / ".codex"


class CodexRunner(StreamingCliRunner):
    """Codex CLI runner. ``sandbox`` is passed as ``--sandbox`` (``None`` omits it, for
    when the extra arguments or the user's config choose). Plan table::

        [runners.codex]
        kind = "codex"
        model = "gpt-5-codex"
        argv = ["--skip-git-repo-check"]              # extra arguments
        options = { executable = "codex", sandbox = "workspace-write", kill_grace = 2 }
    """

    default_executable: ClassVar[str] = "codex"

    @property
    def continues_conversations(self) -> bool:
        return True

    option_types: ClassVar[OptionTypes] = MappingProxyType(
        {**StreamingCliRunner.option_types, "sandbox": str, "rollout": str}
    )
    tool_names: ClassVar[ToolNames] = ToolNames(
        read_only=frozenset({"write_stdin", "update_plan", "view_image", "web_search"})
    )

    def __init__(
        self,
        *,
        executable: str | None = None,
        model: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        kill_grace: float = DEFAULT_KILL_GRACE,
        sandbox: str | None = "workspace-write",
        rollout: str = "follow",
    ) -> None:
        super().__init__(
            executable=executable,
            model=model,
            extra_args=extra_args,
            env=env,
            kill_grace=kill_grace,
        )
        if rollout not in _ROLLOUT_MODES:
            raise ConfigurationError(
                f"options.rollout must be one of {_ROLLOUT_MODES}, not {rollout!r}"
            )
        self.sandbox = None if sandbox in ("", "none") else sandbox
        self.rollout = rollout

    @property
    def provider(self) -> str:
        return "openai"

    @property
    def barrier(self) -> str:
        """The live barrier this runner's agents have, in a few words."""
        if self.sandbox in (None, "danger-full-access"):
            return "none inside the agent (post-wave check only)"
        return f"Codex sandbox ({self.sandbox}: writes only in the workspace)"

    def sandbox_for(self, request: AgentRequest) -> str | None:
        """Codex's ``--sandbox`` for this run: off inside seawall's own OS sandbox."""
        if request.sandbox is not None and self.sandbox is not None and sandbox_available():
            return "danger-full-access"
        return self.sandbox

    def argv(self, request: AgentRequest) -> list[str]:
        sandbox = self.sandbox_for(request)
        if request.conversation:  # ``exec resume`` takes the sandbox as configuration
            argv = [self.executable, "exec", "resume", "--json"]
            if sandbox:
                argv += ["-c", f'sandbox_mode="{sandbox}"']
        else:
            argv = [self.executable, "exec", "--json"]
            if sandbox:
                argv += ["--sandbox", sandbox]
        if sandbox == "workspace-write":
            argv += ["-c", "sandbox_workspace_write.exclude_slash_tmp=true"]
        if model := self.model_for(request):
            argv += ["--model", model]
        thread = [request.conversation] if request.conversation else []
        return [*argv, *self.extra_args, *thread, "-"]

    def parser(self) -> LineParser:
        return CodexJsonParser(model=self.model or "")

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Run codex, following its rollout file live (see the module docstring)."""
        with tempfile.TemporaryDirectory(prefix="seawall-codex-") as scratch:
            env = self.environment(request)
            if self.sandbox_for(request) == "workspace-write":
                env["TMPDIR"] = scratch  # the agent's own temporary files: a writable root
            return await self._run(request, emit, env)

    async def _run(self, request: AgentRequest, emit: EmitFn, env: dict[str, str]) -> AgentResult:
        home = None if self.rollout == "off" else codex_home_of(env)
        follow = _RolloutFollow(self.emitter(request, emit), home, self.model or "")
        if request.conversation:  # the thread's rollout grows: only what comes now counts
            follow.skip_thread(request.conversation)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(follow.poll_forever)
                try:
                    outcome = await self.spawn(
                        request, self.argv(request), env=env, on_line=follow.on_stream_line
                    )
                finally:
                    group.cancel_scope.cancel()
        except ExceptionGroup as group_error:  # the agent could not start: say so plainly
            (first, *others) = group_error.exceptions
            if not others and isinstance(first, RunnerError):
                raise first from None
            raise
        await follow.finish()
        return self.result(request, outcome, follow.emitter)


class _RolloutFollow:
    """One run's two sources: the ``--json`` stream and, once found, the rollout file.

    Until the rollout file is found, stream events wait (the rollout has them too, from
    its first line). Codex creates the file as the thread starts; when it has not
    appeared ``_FIND_GRACE_S`` after the stream's first line, the run falls back to the
    stream, whose events then go out live (the breakers must see them while the agent
    runs)."""

    def __init__(self, emitter: Emitter, home: Path | None, model: str) -> None:
        self.emitter = emitter
        self.sessions = None if home is None else home / "sessions"  # None: stream only
        self.stream = CodexJsonParser(model=model)
        self.rollout = CodexRolloutParser(model=model)
        self.follower: LineFollower | None = None
        self.live_stream = self.sessions is None  # the fallback: stream events go out live
        self.first_line_at: float | None = None
        self.buffered: list[Event] = []  # stream events held while the rollout is sought
        self.finals: list[Final] = []
        self.skipped: dict[Path, int] = {}  # a continued thread's rollout: its size before

    def skip_thread(self, thread: str) -> None:
        """Follow the rollout of ``thread`` (a conversation being continued) from its
        present end: what it holds already is an earlier run's."""
        for path in self._rollouts(thread):
            self.skipped[path] = path.stat().st_size

    async def on_stream_line(self, line: str) -> None:
        if self.first_line_at is None:
            self.first_line_at = anyio.current_time()
        for event in self.stream.feed(line):
            if isinstance(event, Conversation):
                await self.emitter(event)  # the rollout names no thread: the stream's
            elif isinstance(event, Final):
                self.finals.append(event)  # held: the rollout may still be catching up
            elif self.live_stream:
                await self.emitter(event)
            elif self.follower is None:
                self.buffered.append(event)
        await self._read()

    async def poll_forever(self) -> None:
        while True:
            await self._read()
            await anyio.sleep(_POLL_S)

    async def finish(self) -> None:
        await self._read()
        if self.follower is not None:
            rest = self.follower.rest()
            if rest.strip():
                await self._emit_all(self.rollout.feed(rest.decode("utf-8", "replace")))
            turns = self.rollout.turns
            self.finals = [replace(final, num_turns=turns) for final in self.finals]
        else:
            await self._emit_all(self.buffered)
        self.buffered = []
        await self._emit_all([*self.stream.finish(), *self.finals])

    async def _read(self) -> None:
        if self.live_stream:
            return
        if self.follower is None:
            self.follower = self._find()
            if self.follower is None:
                await self._give_up_after_grace()
                return
            self.buffered = []  # the rollout has all of it, from its first line
        for raw in self.follower.read():
            await self._emit_all(self.rollout.feed(raw.decode("utf-8", "replace")))

    async def _give_up_after_grace(self) -> None:
        started = self.first_line_at
        if started is not None and anyio.current_time() - started > _FIND_GRACE_S:
            self.live_stream = True
            held, self.buffered = self.buffered, []
            await self._emit_all(held)

    def _find(self) -> LineFollower | None:
        thread = self.stream.thread_id
        if not thread:
            return None
        for path in self._rollouts(thread):
            try:
                follower = LineFollower(path)
            except FileNotFoundError:
                return None
            follower.offset = self.skipped.get(path, 0)
            return follower
        return None

    def _rollouts(self, thread: str) -> list[Path]:
        if self.sessions is None:
            return []
        return sorted(self.sessions.glob(f"*/*/*/rollout-*-{thread}.jsonl"))

    async def _emit_all(self, events: Sequence[Event]) -> None:
        for event in events:
            await self.emitter(event)
