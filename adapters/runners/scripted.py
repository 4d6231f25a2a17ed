"""The ``scripted`` runner: a public, typed, recording fake whose agents follow scripts.

Each step is real where it matters: an edit emits the ``Edit``/``Write`` tool call an
agent CLI would (with the absolute ``file_path``, as Claude Code gives it) and then really
changes the file in the workspace; a commit runs ``git commit`` in the workspace; a read
returns the file's content. Tool calls with scripted results, messages, usage and sleeps
fill in the rest. Used by the test suite, ``seawall demo`` and users' own tests::

    runner = ScriptedRunner({
        "api-auth": [Edit(path="src/auth.py", content="..."), Commit(message="auth")],
        "flaky": [AgentScript(steps=(Crash(),)), AgentScript(final="STATUS: done")],
    })
    ...
    assert runner.dispatches("api-auth") == 1
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Self

import anyio
import anyio.lowlevel

from seawall.adapters.runners._inprocess import run_in_process
from seawall.adapters.runners.scripted_steps import (
    AgentScript,
    Commit,
    Crash,
    Edit,
    Read,
    Say,
    ScriptFile,
    Sleep,
    Spend,
    Step,
    Tool,
    as_scripts,
    load_scripts,
)
from seawall.events import Message, ToolCall, ToolResult, Turn, Usage
from seawall.model import RunnerSpec
from seawall.runner import (
    AgentRequest,
    AgentResult,
    AgentRunner,
    EmitFn,
    Emitter,
    runner_options,
)

__all__ = [
    "AgentScript",
    "Commit",
    "Crash",
    "Edit",
    "Read",
    "Say",
    "ScriptedRunner",
    "Sleep",
    "Spend",
    "Step",
    "Tool",
    "load_scripts",
]

ScriptSpec = AgentScript | Sequence[Step] | Sequence[AgentScript]


class ScriptedCrash(RuntimeError):
    """Raised inside a scripted agent by a ``Crash`` step (it becomes an error result)."""


class ScriptedRunner(AgentRunner):
    """Runs scripted agents and records every request and result.

    ``scripts`` maps task ids to a script (or a list of steps, or one script per
    dispatch: the n-th dispatch of a task follows the n-th, the last repeats). Tasks
    without a script follow ``default`` (a script that just reports ``STATUS: done``).
    """

    @property
    def reports_edits(self) -> bool:
        return True  # every Edit step is a tool call

    def __init__(
        self,
        scripts: Mapping[str, ScriptSpec] | None = None,
        *,
        default: AgentScript | None = None,
    ) -> None:
        self.scripts: Mapping[str, tuple[AgentScript, ...]] = MappingProxyType(
            {task: as_scripts(spec) for task, spec in (scripts or {}).items()}
        )
        self.default = default or AgentScript()
        self.requests: list[AgentRequest] = []
        self.results: list[AgentResult] = []

    @classmethod
    def from_file(cls, path: str | Path) -> Self:
        """A runner following the scripts of a TOML or JSON file (see ``scripted_steps``)."""
        loaded: ScriptFile = load_scripts(path)
        return cls(loaded.scripts, default=loaded.default)

    @classmethod
    def from_spec(cls, spec: RunnerSpec) -> Self:
        """``options = { script = "path/to/scripts.toml" }``; without it, every agent is done."""
        script = runner_options(spec, {"script": str}).get("script")
        return cls.from_file(str(script)) if script else cls()

    def dispatches(self, task_id: str) -> int:
        """How many times ``task_id`` was dispatched so far."""
        return sum(1 for request in self.requests if request.task_id == task_id)

    def script_for(self, task_id: str, attempt: int) -> AgentScript:
        """The script of the ``attempt``-th (0-based) dispatch of ``task_id``."""
        scripts = self.scripts.get(task_id)
        if not scripts:
            return self.default
        return scripts[min(attempt, len(scripts) - 1)]

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Follow the task's script in ``request.workspace``; see ``AgentRunner``."""
        script = self.script_for(request.task_id, self.dispatches(request.task_id))
        self.requests.append(request)
        agent = _ScriptedAgent(request)

        async def body(emitter: Emitter) -> str:
            for step in script.steps:
                await agent.step(step, emitter)
                # a checkpoint between steps lets a stop or time limit end the agent here
                await anyio.lowlevel.checkpoint()
            return script.final

        result = await run_in_process(request, emit, body)
        self.results.append(result)
        return result


class _ScriptedAgent:
    """One dispatch's state: its turn count and the files it edited."""

    def __init__(self, request: AgentRequest) -> None:
        self.request = request
        self.workspace = request.workspace.resolve()
        self.turn = 0
        self.calls = 0
        self.edited: list[str] = []

    async def step(self, step: Step, emit: Emitter) -> None:
        if isinstance(step, Sleep):
            await anyio.sleep(step.seconds)
            return
        if isinstance(step, Crash):
            raise ScriptedCrash(step.message)
        self.turn += 1
        await emit(Turn(number=self.turn))
        if isinstance(step, Say):
            await emit(Message(text=step.text, turn=self.turn))
        elif isinstance(step, Spend):
            usage_id = f"{self.request.task_id}-{self.turn}"
            await emit(
                Usage(
                    message_id=usage_id,
                    cost_usd=step.cost_usd,
                    input_tokens=step.input_tokens,
                    output_tokens=step.output_tokens,
                )
            )
        elif isinstance(step, Edit):
            await self._edit(step, emit)
        elif isinstance(step, Read):
            await self._read(step, emit)
        elif isinstance(step, Commit):
            await self._commit(step, emit)
        else:
            await self._tool(step, emit)

    async def _call(self, name: str, arguments: Mapping[str, object], emit: Emitter) -> str:
        self.calls += 1
        call_id = f"{self.request.task_id}-call-{self.calls}"
        await emit(ToolCall(call_id=call_id, name=name, arguments=arguments, turn=self.turn))
        return call_id

    async def _tool(self, step: Tool, emit: Emitter) -> None:
        call_id = await self._call(step.name, step.arguments, emit)
        await emit(
            ToolResult(
                call_id=call_id,
                name=step.name,
                is_error=step.is_error,
                text=step.result,
                exit_code=step.exit_code,
            )
        )

    def _path(self, relative: str) -> Path | None:
        """The file in the workspace, or None when the path escapes it."""
        path = (self.workspace / relative).resolve()
        return path if path.is_relative_to(self.workspace) else None

    async def _edit(self, step: Edit, emit: Emitter) -> None:
        target = self.workspace / step.path
        if step.old is None:
            arguments = {"file_path": str(target), "content": step.content or ""}
            call_id = await self._call("Write", arguments, emit)
        else:
            arguments = {"file_path": str(target), "old_string": step.old, "new_string": step.new}
            call_id = await self._call("Edit", arguments, emit)
        error = _apply_edit(self._path(step.path), step)
        if error is None:
            self.edited.append(step.path)
        await emit(
            ToolResult(
                call_id=call_id,
                name="Edit" if step.old is not None else "Write",
                is_error=error is not None,
                text=error or f"Updated {step.path}",
            )
        )

    async def _read(self, step: Read, emit: Emitter) -> None:
        arguments: dict[str, object] = {"file_path": str(self.workspace / step.path)}
        if step.offset is not None:
            arguments["offset"] = step.offset
        if step.limit is not None:
            arguments["limit"] = step.limit
        call_id = await self._call("Read", arguments, emit)
        path = self._path(step.path)
        text, error = _read_lines(path, step.offset, step.limit)
        await emit(ToolResult(call_id=call_id, name="Read", is_error=error, text=text))

    async def _commit(self, step: Commit, emit: Emitter) -> None:
        paths = list(step.paths or dict.fromkeys(self.edited))
        command = f"git add -- {shlex.join(paths)} && git commit -m {shlex.quote(step.message)}"
        call_id = await self._call("Bash", {"command": command}, emit)
        env = self._git_env()
        code, output = await _git(self.workspace, env, "add", "--", *paths) if paths else (0, "")
        if code == 0:
            code, more = await _git(self.workspace, env, "commit", "-m", step.message)
            output += more
        await emit(
            ToolResult(
                call_id=call_id, name="Bash", is_error=code != 0, text=output, exit_code=code
            )
        )

    def _git_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.request.env)
        identity = f"scripted agent {self.request.task_id}"
        email = f"{self.request.task_id}@agents.seawall.invalid"
        for role in ("AUTHOR", "COMMITTER"):
            env.setdefault(f"GIT_{role}_NAME", identity)
            env.setdefault(f"GIT_{role}_EMAIL", email)
        return env


def _apply_edit(path: Path | None, step: Edit) -> str | None:
    """Change the file; the error text a real tool would give, or None on success.

    Files are small and local: plain synchronous I/O keeps a scripted wave of hundreds
    of agents cheaper than handing each write to a worker thread.
    """
    if path is None:
        return f"<tool_use_error>{step.path} is outside the workspace</tool_use_error>"
    if step.old is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(step.content or "", encoding="utf-8")
        return None
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "<tool_use_error>File does not exist.</tool_use_error>"
    if step.old not in current:
        return (
            "<tool_use_error>String to replace not found in file.\n"
            f"String: {step.old}</tool_use_error>"
        )
    path.write_text(current.replace(step.old, step.new, 1), encoding="utf-8")
    return None


def _read_lines(path: Path | None, offset: int | None, limit: int | None) -> tuple[str, bool]:
    if path is None or not path.is_file():
        return "<tool_use_error>File does not exist.</tool_use_error>", True
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    start = max((offset or 1) - 1, 0)
    chosen = lines[start : start + limit if limit is not None else None]
    return "\n".join(f"{start + n + 1:>6}\t{line}" for n, line in enumerate(chosen)), False


async def _git(workspace: Path, env: Mapping[str, str], *args: str) -> tuple[int, str]:
    result = await anyio.run_process(
        ["git", *args], cwd=workspace, env=dict(env), check=False, input=b""
    )
    output = (result.stdout + result.stderr).decode("utf-8", errors="replace")
    return result.returncode, output
