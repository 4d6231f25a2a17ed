"""Codex's edits in every form it makes them: the patch text, and the shell commands
that carry one.

Codex edits files with its own patch format::

    *** Begin Patch
    *** Update File: src/app.py
    *** Move to: src/main.py
    @@
    -old
    +new
    *** Add File: docs/notes.md
    +text
    *** Delete File: old.txt
    *** End Patch

A model Codex knows is given an ``apply_patch`` tool whose input is that text. Any other
model (a custom or local provider) is given only the shell tools, and edits by running
the patch as a command, which Codex recognises and applies itself:

- the heredoc form, ``apply_patch <<'PATCH'`` ... ``PATCH``, alone or after
  ``cd DIR &&``, as an ``exec_command`` ``cmd`` or a ``shell`` ``["bash", "-lc", ...]``;
- the argument form, ``apply_patch "*** Begin Patch ..."`` or, with no shell between,
  ``["apply_patch", "<patch>"]``.

``applypatch`` is the same program. ``shell_patch`` tells such a command from any other
with the shell reader (``seawall.shell``): the line must run the patch program and
nothing else but one ``cd`` before it, so a patch chained with other commands stays a
shell command, for the command policy to judge. A command the reader cannot parse is
no patch.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from seawall.codec import JsonObject, JsonView
from seawall.shell import ShellParseError, SimpleCommand, read_line

__all__ = ["PATCH_PROGRAMS", "ShellPatch", "patch_changes", "shell_patch", "shell_patch_of"]

PATCH_PROGRAMS = frozenset({"apply_patch", "applypatch"})
"""The names Codex runs a patch under."""

_PATCH_FILE = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$", re.MULTILINE)
_PATCH_KINDS = {
    "Add File": "add",
    "Update File": "update",
    "Delete File": "delete",
    "Move to": "move",
}
_PATCH_TEXT = re.compile(r"^\*\*\* Begin Patch[ \t]*$.*?^\*\*\* End Patch[ \t]*$", re.M | re.S)
_HEREDOCS = frozenset({"<<", "<<-"})


def patch_changes(patch: str, directory: str = "") -> list[dict[str, str]]:
    """The files a patch text names, as ``{"path", "kind"}`` entries in patch order.

    ``kind`` is ``add``, ``update`` or ``delete``, and ``move`` for the destination of
    an ``*** Update File`` with ``*** Move to``. A relative path is joined to
    ``directory``, the directory the patch applies in (``""``: as given)."""
    return [
        {"path": _join(directory, path.strip()), "kind": _PATCH_KINDS[kind]}
        for kind, path in _PATCH_FILE.findall(patch)
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class ShellPatch:
    """A shell command that applies a patch: the patch text, and the directory it
    applies in (the command's ``workdir`` and ``cd``; ``""`` for the agent's own)."""

    patch: str
    directory: str = ""

    @property
    def changes(self) -> list[dict[str, str]]:
        """The files the patch names (``patch_changes``), joined to ``directory``."""
        return patch_changes(self.patch, self.directory)

    def arguments(self, original: JsonView) -> JsonObject:
        """The tool input of the command (``original``) as an edit's: the patch as
        ``input``, as for Codex's ``apply_patch`` tool, and the files as ``changes``."""
        return {**original, "input": self.patch, "changes": self.changes}


def shell_patch(command: str | Sequence[str], workdir: str = "") -> ShellPatch | None:
    """The patch ``command`` applies, or None when it is any other command.

    ``command`` is a command line (``exec_command``'s ``cmd``) or an argv (``shell``'s
    ``command``); ``workdir`` is the directory the tool runs it in, when given."""
    if isinstance(command, str):
        line, source = command, command
    else:
        words = [str(word) for word in command]
        if len(words) == 2 and _program(words[0]) in PATCH_PROGRAMS:
            return ShellPatch(patch=words[1], directory=workdir)  # no shell in between
        if not words:
            return None
        line, source = shlex.join(words), words[-1]  # a shell's script is its last word
    if not any(program in line for program in PATCH_PROGRAMS):
        return None  # the common command: no need to read it
    try:
        commands = _runs(read_line(line).commands)
    except ShellParseError:
        return None
    directory = workdir
    if len(commands) == 2 and commands[0].name == "cd" and len(commands[0].argv) == 2:
        directory = _join(workdir, commands[0].argv[1])
        commands = commands[1:]
    if len(commands) != 1 or commands[0].name not in PATCH_PROGRAMS:
        return None
    (run,) = commands
    if len(run.argv) == 2 and not run.redirects:
        return ShellPatch(patch=run.argv[1], directory=directory)
    if len(run.argv) == 1 and any(redirect.op in _HEREDOCS for redirect in run.redirects):
        return ShellPatch(patch=_heredoc_patch(source), directory=directory)
    return None


def shell_patch_of(arguments: JsonView) -> ShellPatch | None:
    """``shell_patch`` of a shell tool's input: ``cmd`` or ``command`` (a line or an
    argv), in ``workdir`` when given."""
    command = arguments.get("cmd")
    if not isinstance(command, str):
        command = arguments.get("command")
    workdir = arguments.get("workdir")
    workdir = workdir if isinstance(workdir, str) else ""
    if isinstance(command, str):
        return shell_patch(command, workdir)
    if isinstance(command, list) and all(isinstance(word, str) for word in command):
        return shell_patch(command, workdir)
    return None


def _runs(commands: list[SimpleCommand]) -> list[SimpleCommand]:
    """The commands a line runs, without the wrappers that run them (``bash -lc``): a
    command the next one names as its wrapper is dropped."""
    return [
        command
        for index, command in enumerate(commands)
        if index + 1 == len(commands) or len(commands[index + 1].wrappers) <= len(command.wrappers)
    ]


def _heredoc_patch(source: str) -> str:
    """The patch a heredoc carries: from ``*** Begin Patch`` to ``*** End Patch``, or,
    when the markers are missing (Codex rejects such a patch), the lines after the
    first."""
    match = _PATCH_TEXT.search(source)
    return match.group(0) if match else source.partition("\n")[2]


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _join(directory: str, path: str) -> str:
    if not directory or posixpath.isabs(path):
        return path
    return posixpath.normpath(posixpath.join(directory, path))
