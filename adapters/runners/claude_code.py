"""The ``claude-code`` runner: Claude Code's headless mode as an agent.

Runs ``claude -p --output-format stream-json --verbose --max-turns N [--model M]
--settings <file> --permission-mode dontAsk [extra args]`` in the agent's workspace with
the prompt on stdin (``-p`` reads the prompt from stdin when none is given as an
argument; stdin avoids argument-length limits and keeps the prompt out of process
listings), and parses stdout with ``ClaudeStreamParser``. ``--max-turns`` is only a
hint: the coordinator counts turns.

**seawall is the permission layer** (``permissions = "hook"``, the default). A headless
``claude -p`` has nobody to ask, so every Edit, Write and most Bash calls would be
refused. The generated settings file installs seawall's PreToolUse, PostToolUse and Stop
hooks; the runner exports ``SEAWALL_PERMISSIONS=hook`` so the PreToolUse hook *allows*
what the task's scope and command policy allow and denies the rest with the reason the
agent sees. ``dontAsk`` refuses whatever no hook allowed instead of waiting for an
answer; it works as root (``bypassPermissions`` is refused there). ``permissions =
"none"`` adds neither the settings nor the mode, for a caller who brings their own.

When seawall's own sandbox applies to the agent (``request.sandbox``), the settings
file also turns Claude Code's sandbox off (``sandbox.enabled: false``, which outranks
the project's settings): bubblewrap cannot start inside a Landlock domain, and a
project prepared for a lead (``seawall hooks install``) asks for it with
``failIfUnavailable``, which would keep the agent from starting at all.

**A conversation continues** with ``--resume <session id>`` (``request.conversation``).
Claude Code files its sessions by working directory (``<config dir>/projects/<the
directory, every character but letters and digits made a dash>/<id>.jsonl``) and finds
only those of the directory it runs in; an agent continued in a new workspace (a fresh
worktree on the new base) therefore has its session file copied beside the new
directory's first. A continued session gets a new id, named by the run's first line.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

from seawall.adapters.runners.streaming import DEFAULT_KILL_GRACE, LineParser, StreamingCliRunner
from seawall.codec import JsonObject
from seawall.config.adapter_options import OptionTypes
from seawall.errors import ConfigurationError
from seawall.hooks.install import default_command
from seawall.prompting import render_new_files_part
from seawall.runner import AgentRequest, AgentResult, EmitFn
from seawall.transcripts import ClaudeStreamParser

__all__ = [
    "PERMISSION_MODE",
    "ClaudeCodeRunner",
    "carry_session",
    "claude_config_dir",
    "hook_settings",
    "session_folder",
]

PERMISSION_MODE = "dontAsk"
"""Headless and root-safe: a call no hook allowed is refused, never waited on."""

_HOOK_EVENTS: Mapping[str, tuple[str | None, str]] = {
    "PreToolUse": ("*", "pre-tool-use"),
    "PostToolUse": ("*", "post-tool-use"),
    "Stop": (None, "subagent-stop"),
}
_HOOK_TIMEOUT_S = 30
_PERMISSIONS = ("hook", "none")


def hook_settings(command: str) -> JsonObject:
    """The Claude Code settings that route every tool call and the stop through seawall
    (Claude Code's ``settings.json``, as JSON data)."""
    hooks: dict[str, list[JsonObject]] = {}
    for event, (matcher, name) in _HOOK_EVENTS.items():
        hook = {
            "type": "command",
            "command": f"{shlex.quote(command)} hook {name}",
            "timeout": _HOOK_TIMEOUT_S,
        }
        entry: JsonObject = {"hooks": [hook]}
        if matcher is not None:
            entry = {"matcher": matcher, **entry}
        hooks[event] = [entry]
    return {"hooks": hooks}


class ClaudeCodeRunner(StreamingCliRunner):
    """Claude Code CLI runner. Plan table::

    [runners.claude]
    kind = "claude-code"
    model = "sonnet"
    argv = ["--append-system-prompt", "Be brief."]   # extra arguments, appended
    options = { executable = "claude", kill_grace = 2, permissions = "hook" }

    ``hook_command`` is the ``seawall`` command the hooks run (default: the installed
    executable's absolute path).
    """

    default_executable: ClassVar[str] = "claude"

    @property
    def continues_conversations(self) -> bool:
        return True

    option_types: ClassVar[OptionTypes] = MappingProxyType(
        {**StreamingCliRunner.option_types, "permissions": str}
    )

    def __init__(
        self,
        *,
        executable: str | None = None,
        model: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        kill_grace: float = DEFAULT_KILL_GRACE,
        permissions: str = "hook",
        hook_command: str | None = None,
    ) -> None:
        if permissions not in _PERMISSIONS:
            raise ConfigurationError(
                f"options.permissions must be one of {_PERMISSIONS}, not {permissions!r}"
            )
        hook_env = {"SEAWALL_PERMISSIONS": "hook"} if permissions == "hook" else {}
        super().__init__(
            executable=executable,
            model=model,
            extra_args=extra_args,
            env={**hook_env, **(env or {})},
            kill_grace=kill_grace,
        )
        self.permissions = permissions
        self.hook_command = hook_command

    @property
    def refuses_unknown_tools(self) -> bool:
        """With seawall's hooks installed, the PreToolUse hook judges every call live."""
        return self.permissions != "hook"

    @property
    def provider(self) -> str:
        return "anthropic"

    @property
    def barrier(self) -> str:
        if self.permissions == "none":
            return "the caller's own Claude Code settings (seawall's hooks not installed)"
        return "seawall's PreToolUse hook: scope and command policy, denied live with the reason"

    def argv(self, request: AgentRequest, settings: Path | None = None) -> list[str]:
        argv = [self.executable, "-p", "--output-format", "stream-json", "--verbose"]
        if request.max_turns is not None:
            argv += ["--max-turns", str(request.max_turns)]
        if model := self.model_for(request):
            argv += ["--model", model]
        if request.conversation:
            argv += ["--resume", request.conversation]
        if settings is not None:
            argv += ["--settings", str(settings)]
            if "--permission-mode" not in self.extra_args:
                argv += ["--permission-mode", PERMISSION_MODE]
        return [*argv, *self.extra_args]

    def parser(self) -> LineParser:
        return ClaudeStreamParser()

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        """Run claude with a settings file bound to this agent (see the module docstring).

        Scope files the sandbox created empty (``new_files``) are mentioned in the prompt
        (``@path``): Claude Code then has them as read, and its ``Write`` creates them at
        once instead of refusing to overwrite a file it has not read."""
        if request.sandbox is not None and request.sandbox.new_files:
            mention = render_new_files_part(request.workspace, request.sandbox.new_files)
            request = dataclasses.replace(request, prompt=request.prompt + mention)
        if request.conversation:
            carry_session(self.environment(request), request)
        if self.permissions == "none":
            return await self.run_argv(request, emit, self.argv(request))
        with tempfile.TemporaryDirectory(prefix="seawall-claude-") as folder:
            settings = _write_settings(request, Path(folder), self.hook_command)
            return await self.run_argv(request, emit, self.argv(request, settings))


def claude_config_dir(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps its state for an agent with environment ``env``."""
    if configured := env.get("CLAUDE_CONFIG_DIR"):
        return Path(configured)
    return (Path(env["HOME"]) if env.get("HOME") else Path.home()) / ".claude"


def session_folder(env: Mapping[str, str], workspace: Path) -> Path:
    """The folder Claude Code files the sessions of ``workspace`` in."""
    name = re.sub(r"[^a-zA-Z0-9]", "-", os.path.realpath(workspace))
    return claude_config_dir(env) / "projects" / name


def carry_session(env: Mapping[str, str], request: AgentRequest) -> bool:
    """Make the session ``request.conversation`` findable from ``request.workspace``:
    copy its file from the folder of the workspace it ran in (or any project's folder)
    into the new workspace's. False when it is nowhere: the CLI then says it found no
    conversation, and the session starts the agent afresh."""
    session = f"{request.conversation}.jsonl"
    target = session_folder(env, request.workspace) / session
    if target.exists():
        return True
    places = []
    if request.conversation_workspace is not None:
        places.append(session_folder(env, request.conversation_workspace) / session)
    places += sorted((claude_config_dir(env) / "projects").glob(f"*/{session}"))
    for source in places:
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            return True
    return False


def _write_settings(request: AgentRequest, folder: Path, command: str | None) -> Path:
    """The settings file: next to the transcript when there is one (kept with the run's
    record), else in ``folder`` (removed after the run)."""
    settings = hook_settings(command or default_command())
    if request.sandbox is not None:  # seawall's sandbox is the boundary (module docstring)
        settings["sandbox"] = {"enabled": False}
    text = json.dumps(settings, indent=2) + "\n"
    if request.transcript_path is not None:
        path = request.transcript_path.with_name(request.transcript_path.name + ".settings.json")
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        path = folder / "settings.json"
    path.write_text(text, encoding="utf-8")
    return path
