"""Polls and waits: calls the loop breaker does not count (an agent waiting on a long
command). A poll asks a background task for its output, or reads a file a background
command of the agent's was told to write (through the Read tool or the shell: ``cat``,
``tail``, ``sleep 30 && tail -n 20 out.log``), even while it is still empty; a command
that only sleeps is a wait too. ``AgentBreaker`` adds the third kind, by behaviour: a
repeated call whose result changed. A status query (``gh pr checks``, ``kubectl rollout
status``) asks how something else is doing: its non-zero exit answers "not yet" or "not
good" and is no failure of the agent's; after a sleep (``sleep 60 && gh pr checks``) it
is a wait, asked again at once with the same answer a loop. Nothing else is a wait:
``sleep 2 && pnpm test`` is a test run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import PurePath
from typing import NamedTuple

from seawall.breakers.commands import is_wait_command as pure_wait
from seawall.breakers.commands import parse_commands
from seawall.events import (
    EDIT_TOOLS,
    SHELL_TOOLS,
    ToolCall,
    edited_paths,
    read_path,
    shell_command,
)
from seawall.shell import SimpleCommand

__all__ = [
    "POLL_TOOLS",
    "STATUS_QUERIES",
    "BackgroundWatch",
    "CallFacts",
    "is_status_query",
    "is_status_wait",
    "timed_out",
]

POLL_TOOLS = frozenset({"BashOutput", "TaskOutput", "AgentOutputTool"})
_TIMEOUT_PREFIXES = ("Command timed out after", "command timed out", "Timed out after")
_WAITS = frozenset({"sleep", "wait", "true", ":"})
# readers of a file, and their options that take a value (``tail -n 20 out.log``)
_READERS: Mapping[str, frozenset[str]] = {
    "cat": frozenset(),
    "tail": frozenset({"-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"}),
    "head": frozenset({"-n", "-c", "--lines", "--bytes"}),
    "less": frozenset(),
    "more": frozenset(),
    "wc": frozenset(),
    "stat": frozenset({"-c", "--format"}),
    "ls": frozenset(),
    "grep": frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "--max-count"}),
    "egrep": frozenset({"-e", "-f", "-m", "-A", "-B", "-C"}),
    "rg": frozenset({"-e", "-m", "-A", "-B", "-C", "-g"}),
}
_PATTERN_FIRST = frozenset({"grep", "egrep", "rg"})
# a lone ``&`` (not ``&&``, ``>&``, ``&>``, ``|&``): a job sent to the background
_BACKGROUND = re.compile(r"(?<![&>|<])&(?![&>])")
_SEPARATORS = re.compile(r"[;&|\n]+")
_NEEDS_PARSE = re.compile(r"[\"'`$\\(){}]")  # quoting or expansion: only the parser can tell


STATUS_QUERIES: Mapping[str, frozenset[tuple[str, ...]]] = {
    "gh": frozenset({("pr", "checks"), ("pr", "status"), ("run", "view"), ("run", "list"),
                     ("run", "watch"), ("workflow", "view")}),
    "glab": frozenset({("ci", "status"), ("ci", "view"), ("ci", "list"), ("pipeline", "status")}),
    "kubectl": frozenset({("rollout", "status"), ("get",), ("wait",), ("describe",)}),
    "docker": frozenset({("ps",), ("compose", "ps"), ("inspect",)}),
    "docker-compose": frozenset({("ps",)}),
    "systemctl": frozenset({("status",), ("is-active",)}),
    "helm": frozenset({("status",)}),
}  # fmt: skip
"""Known status commands by program and subcommand words: a help for the behavioural
rule (a read whose answer changes), which needs a second call to see it."""
_FILTERS = frozenset({"tail", "head", "grep", "egrep", "rg", "wc", "jq", "cat", "sort", "cut"})


def is_status_query(command: str) -> bool:
    """True for a command line that asks for a status (``STATUS_QUERIES``), with at
    most sleeps before it and filters reading its output after it, writing nothing."""
    return _status_query(command)[0]


def is_status_wait(command: str) -> bool:
    """A status query after a sleep (``sleep 60 && gh pr checks 12``): waiting on
    something else, paced by the agent: a wait, bounded by no-progress."""
    return "sleep" in command and _status_query(command) == (True, True)


@lru_cache(maxsize=1024)
def _status_query(command: str) -> tuple[bool, bool]:
    """(asks for a status, sleeps first)."""
    if not any(word in command for word in STATUS_QUERIES):
        return False, False
    commands = parse_commands(command)
    if not commands:
        return False, False
    asked = slept = False
    for cmd in commands:
        if cmd.written_files or cmd.dynamic_name or cmd.opaque:
            return False, False
        if cmd.name in _WAITS:
            slept = slept or (cmd.name == "sleep" and not asked)
            continue
        if cmd.name in _FILTERS and asked:
            continue
        words = tuple(word for word in cmd.argv[1:] if not word.startswith("-"))
        shapes = STATUS_QUERIES.get(cmd.name)
        if shapes is None or not any(words[: len(shape)] == shape for shape in shapes):
            return False, False
        asked = True
    return asked, slept and asked


def _heads_may_wait(command: str) -> bool:
    """A cheap test that every command of a command line starts with a wait or a
    reader; ``False`` means it surely is no wait. Past the first quote or expansion
    only the parser can tell, so only the plain text before it is tested."""
    plain = _NEEDS_PARSE.search(command)
    if plain is not None:
        command = command[: plain.start()]
    for piece in _SEPARATORS.split(command):
        words = [word for word in piece.split() if "=" not in word] or [""]
        head = words[0].rsplit("/", 1)[-1]
        if head and head not in _WAITS and head not in _READERS:
            return False
    return True


def timed_out(text: str) -> bool:
    """True for the result of a call cut off by its own timeout: a wait that ran out."""
    return text.startswith(_TIMEOUT_PREFIXES)


def _operands(cmd: SimpleCommand) -> list[str]:
    takes_value = _READERS[cmd.name]
    operands: list[str] = []
    skip = False
    for word in cmd.argv[1:]:
        if skip:
            skip = False
        elif word.startswith("-") and word != "-":
            skip = word in takes_value
        else:
            operands.append(word)
    return operands[1:] if cmd.name in _PATTERN_FIRST else operands


class CallFacts(NamedTuple):
    """What one call is for the breaker and the detectors, derived once per call."""

    command: str | None = None  # its shell command
    background: bool = False  # it starts a background job
    poll: bool = False  # the breaker takes it for a poll, not a repeat
    wait: bool = False  # the detectors take it for a wait, not a repeat
    paths: tuple[str, ...] = ()  # the paths it edits
    read: str | None = None  # the path it reads


_NO_FACTS = CallFacts()


def _base_name(path: str) -> str:
    """``PurePath(path).name`` for a POSIX path, without building the path."""
    for part in reversed(path.split("/")):
        if part and part != ".":
            return part
    return ""


class BackgroundWatch:
    """The files the agent's background commands were told to write, and what a wait is."""

    __slots__ = ("_names",)

    def __init__(self, names: set[str] | None = None) -> None:
        self._names: set[str] = names or set()

    def started(self, command: str) -> None:
        """Remember the redirect and ``tee`` targets of a backgrounded command."""
        commands = parse_commands(command)
        if commands is None:
            return  # unknown targets: reads stay counted, which errs towards tripping late
        for cmd in commands:
            targets = list(cmd.written_files)
            if cmd.name == "tee":
                targets.extend(arg for arg in cmd.argv[1:] if not arg.startswith("-"))
            self._names.update(_base_name(target) for target in targets if target)

    def is_watched_read(self, path: str | None) -> bool:
        """True when ``path`` is a file a background command writes (or a task output)."""
        if path is None:
            return False
        names = self._names
        if names and path[path.rfind("/") + 1 :] in names:
            return True
        # Claude Code's own background task output files
        return path.endswith(".output") and "tasks" in PurePath(path).parts

    def judge(self, call: ToolCall) -> CallFacts:
        """The facts of ``call``, and whether it is a poll or a wait (see the module's
        rule). A call that starts a background job is remembered (``started``) and is
        no wait."""
        name = call.name
        if name in SHELL_TOOLS:
            command = shell_command(call)
            if command is None:
                return _NO_FACTS
            if ("&" in command and _BACKGROUND.search(command) is not None) or call.arguments.get(
                "run_in_background"
            ) is True:  # it starts a background job
                self.started(command)
                return CallFacts(command=command, background=True)
            wait = self.is_wait_command(command) or is_status_wait(command)
            return CallFacts(command=command, poll=wait, wait=wait)
        if name in EDIT_TOOLS:  # never a poll or a wait
            return CallFacts(paths=edited_paths(call))
        read = read_path(call)
        wait = (  # a call that asks a background task for its output (Claude Code's
            name in POLL_TOOLS  # BashOutput, TaskOutput; an empty Codex write_stdin only
            or (name == "write_stdin" and not call.arguments.get("chars"))  # polls its
            or self.is_watched_read(read)  # session), or a read of a watched file
        )
        return CallFacts(poll=wait, wait=wait, read=read)

    def is_wait_command(self, command: str) -> bool:
        """A shell command that only sleeps, or only reads watched files after sleeping."""
        if ".output" not in command:
            for name in self._names:
                if name in command:
                    break
            else:  # no watched file named: only a command that does nothing but sleep waits
                return ("sleep" in command or "wait" in command) and pure_wait(command)
        if not _heads_may_wait(command):
            return False
        commands = parse_commands(command)
        if not commands:
            return False
        for cmd in commands:
            if cmd.written_files or cmd.dynamic_name or cmd.opaque:
                return False
            if cmd.name in _WAITS:
                continue
            if cmd.name not in _READERS:
                return False
            operands = _operands(cmd)
            if not operands or not all(self.is_watched_read(path) for path in operands):
                return False
        return True

    @property
    def names(self) -> tuple[str, ...]:
        """The watched file names, sorted (what a saved breaker keeps)."""
        return tuple(sorted(self._names))
