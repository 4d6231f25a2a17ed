"""The plain-line reading: most command lines an agent runs, read with one regular
expression to the very result the full grammar (``coordinator.shell.grammar``) gives.

A plain line holds plain words (no quoting but single quotes, no expansion, glob,
brace, comment or grouping), the list operators and redirections. Its words need no
unquoting but dropping the single quotes, nothing in it is dynamic or a glob, and its
simple commands are built once, with their final ``subshell`` mark. A command a
wrapper runs in turn (``sudo``, ``timeout``, ``bash -c``) is handed to the grammar's
own unwrapping.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from coordinator.shell.model import (
    ASSIGNMENT,
    Redirect,
    ShellLine,
    new_command,
    new_line,
    new_redirect,
)
from coordinator.shell.words import RAW_ASSIGNMENT, REDIRECTS
from coordinator.shell.wrappers import WRAPPER_NAMES

if TYPE_CHECKING:
    from collections.abc import Callable

    from coordinator.shell.model import SimpleCommand

    # (command, its stdin script, variables, bare assignments, the commands read)
    Emit = Callable[[SimpleCommand, str | None, dict[str, str], list[str], list[SimpleCommand]], None]

__all__ = ["PLAIN_LINE", "read_plain"]

_PLAIN_RUN = r"[^()\\'\"$`*?\[\]{}#!]*+"  # no character that quotes, expands, globs or groups
PLAIN_LINE = re.compile(f"{_PLAIN_RUN}(?:'[^']*+'{_PLAIN_RUN})*+")  # and single quotes
_WORD = r"((?:[^ \t\n;&|<>']++|'[^']*+')++)"
_TOKEN = re.compile(
    rf"[ \t]*+(?:{_WORD}?(&>>|<<<|<<-|&>|>>|>\||>&|<<|<&|<>|<|>)[ \t]*+{_WORD}?"
    r"|(;;&|&&|\|\||;;|;&|\|&|[;&|\n])"
    rf"|{_WORD})"
)  # a redirection (with the word just before it and its target), another operator, a
# word; the operators in the order the grammar tries them
_RESERVED = frozenset({"if", "then", "elif", "else", "fi", "do", "done", "while", "until",
                       "case", "function", "for", "select"})  # fmt: skip
_EXPORTS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_ASYNC = frozenset({"|", "|&", "&"})  # the command before runs in a subshell
_PIPES = frozenset({"|", "|&"})  # and the one after too
_CASE = frozenset({";;", ";&", ";;&"})
_HEREDOCS = frozenset({"<<", "<<-"})


def read_plain(command: str, emit: Emit) -> ShellLine | None:
    """``command`` read as the grammar would, when it is a plain line; None when it is
    not, or holds what only the grammar reads: a reserved word at a command's start, a
    heredoc, a ``case`` operator, or a redirection without a target (the grammar says
    why that is an error).

    ``emit(cmd, stdin_script, env, bare, out)`` appends a command a wrapper may run
    others in (its name is in ``WRAPPER_NAMES``) to ``out`` with what it runs.
    """
    if PLAIN_LINE.fullmatch(command) is None:
        return None
    out: list[SimpleCommand] = []
    bare: list[str] = []
    env: dict[str, str] = {}
    words: list[str] = []
    assignments: list[str] = []
    redirects: list[Redirect] = []
    here: str | None = None  # the first here-string: a shell's script
    started = piped = False
    for before, redirect, target, op, raw in _TOKEN.findall(command):
        if redirect:
            fd = None
            if before.isdigit():
                fd = int(before)
            elif before:
                raw = before  # a word, then the redirection
        if raw:
            started = True
            if words:
                words.append(raw.replace("'", ""))
            elif raw in _RESERVED:
                return None
            elif RAW_ASSIGNMENT.match(raw):
                assignments.append(raw.replace("'", ""))
            else:
                words.append(raw.replace("'", ""))
        if redirect:
            if not target or redirect in _HEREDOCS:
                return None
            started = True
            text = target.replace("'", "")
            redirects.append(new_redirect(redirect, text, fd))
            if here is None and redirect == "<<<":
                here = text
        elif op in _CASE:
            return None
        elif op and started:  # a list operator: the command before it is complete
            _finish(words, assignments, redirects, here, piped or op in _ASYNC, out, bare, env, emit)
            words, assignments, redirects, here, started = [], [], [], None, False
            piped = op in _PIPES
    if started:
        _finish(words, assignments, redirects, here, piped, out, bare, env, emit)
    return new_line(out, tuple(bare))


def _finish(
    words: list[str],
    assignments: list[str],
    redirects: list[Redirect],
    here: str | None,
    subshell: bool,
    out: list[SimpleCommand],
    bare: list[str],
    env: dict[str, str],
    emit: Emit,
) -> None:
    """The simple command just read, as the grammar's ``_finish`` builds it."""
    if not words:
        bare.extend(assignments)
        if not redirects:
            for assignment in assignments:
                name, _, value = assignment.partition("=")
                env[name.rstrip("+")] = value
            return
    argv = tuple(words)
    cmd = new_command(argv, tuple(redirects), tuple(assignments), (False,) * len(argv), subshell)
    name = argv[0].rsplit("/", 1)[-1] if argv else ""
    if name in _EXPORTS:
        for arg in argv[1:]:
            match = ASSIGNMENT.fullmatch(arg)
            if match:
                env[match.group(1)] = match.group(2)
    if name in WRAPPER_NAMES:
        emit(cmd, here, env, bare, out)
    else:
        out.append(cmd)
