"""Polls and waits: calls the loop breaker does not count (spec 003, "Waiting on a long
command"). A poll asks a background task for its output or reads a file a background
command of the agent's was told to write; ``AgentBreaker`` adds the third kind, a
repeated call whose result changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from coordinator.breakers.commands import is_wait_command
from coordinator.events import ToolCall
from coordinator.shell import ShellParseError, simple_commands

__all__ = ["POLL_TOOLS", "BackgroundWatch", "is_poll_tool", "timed_out"]

POLL_TOOLS = frozenset({"BashOutput", "TaskOutput", "AgentOutputTool"})
_TIMEOUT_PREFIXES = ("Command timed out after", "command timed out", "Timed out after")


def timed_out(text: str) -> bool:
    """True for the result of a call cut off by its own timeout: a wait that ran out."""
    return text.startswith(_TIMEOUT_PREFIXES)


def is_poll_tool(call: ToolCall, command: str | None = None) -> bool:
    """True for a call that asks a background task for its output, or a shell command
    that waits on purpose (``sleep``, ``wait``, ``--watch``)."""
    if call.name in POLL_TOOLS:
        return True
    if command is not None:
        return is_wait_command(command)
    if call.name == "write_stdin":  # Codex: an empty write only polls the session
        return not call.arguments.get("chars")
    return False


class BackgroundWatch:
    """The files the agent's background commands were told to write."""

    __slots__ = ("_names",)

    def __init__(self, names: set[str] | None = None) -> None:
        self._names: set[str] = names or set()

    def started(self, command: str) -> None:
        """Remember the redirect and ``tee`` targets of a backgrounded command."""
        try:
            commands = simple_commands(command)
        except ShellParseError:
            return  # unknown targets: reads stay counted, which errs towards tripping late
        for cmd in commands:
            targets = list(cmd.written_files)
            if cmd.name == "tee":
                targets.extend(arg for arg in cmd.argv[1:] if not arg.startswith("-"))
            self._names.update(PurePath(target).name for target in targets if target)

    def is_watched_read(self, path: str | None) -> bool:
        """True when ``path`` is a file a background command writes (or a task output)."""
        if path is None:
            return False
        if path.endswith(".output") and "tasks" in PurePath(path).parts:
            return True  # Claude Code's own background task output files
        return bool(self._names) and path.rsplit("/", 1)[-1] in self._names

    def to_dict(self) -> dict[str, Any]:
        return {"names": sorted(self._names)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BackgroundWatch:
        return cls({str(name) for name in data.get("names", ())})
