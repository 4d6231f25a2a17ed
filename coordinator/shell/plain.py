"""The plain-line reading: most command lines an agent runs, split at their spaces or
cut by one regular expression, to the very result the full grammar
(``seawall.shell.grammar``) gives.

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

from seawall.shell.model import (
    ASSIGNMENT,
    Redirect,
    ShellLine,
    new_command,
    new_line,
    new_redirect,
)
from seawall.shell.words import RAW_ASSIGNMENT, REDIRECTS
from seawall.shell.wrappers import WRAPPER_NAMES, Feed, feed

if TYPE_CHECKING:
    from collections.abc import Callable

    from seawall.shell.model import SimpleCommand

    # (command, its stdin script, variables, bare assignments, the commands read)
    Emit = Callable[
        [SimpleCommand, str | None, dict[str, str], list[str], list[SimpleCommand]], None
    ]

__all__ = ["PLAIN_LINE", "read_plain"]

_SPECIAL = r"()\\'\"$`*?\[\]{}#!"  # what quotes, expands, globs, groups or comments
PLAIN_LINE = re.compile(f"[^{_SPECIAL}]*+(?:'[^']*+'[^{_SPECIAL}]*+)*+")  # or single quotes
_WORD = r"(?:[^ \t\n;&|<>']++|'[^']*+')++"
_OPERATOR = r"&>>|<<<|<<-|;;&|&&|\|\||;;|;&|\|&|&>|>>|>\||>&|<<|<&|<>|[;&|\n<>]"  # as tried
_TOKEN = re.compile(rf"[0-9]++(?:&>>|<<<|&>|>>|>\||>&|<&|<>|<(?!<)|>)|{_WORD}|{_OPERATOR}")
# a word of digits right before a redirection (its file descriptor; a heredoc leaves the
# line to the grammar anyway), a word, an operator: what a plain line holds, blanks apart
_SPACED = re.compile(
    rf" *+(?:(?:[^ \t\n;&|<>{_SPECIAL}]++|(?:{_OPERATOR})(?= |\Z)"
    rf"|[^ \t\n<>{_SPECIAL}]*+[<>][^ \t\n{_SPECIAL}]*+)(?: ++|\Z))*+"
)  # a plain line of spaces and parts: a word, an operator, or one with a redirection in
# it (``2>&1``, ``>/dev/null``, read by ``_TOKEN`` alone): split at the spaces
_KINDS = {op: op for op in (";;&", "&&", "||", ";;", ";&", "|&", ";", "&", "|", "\n")}
_KINDS.update((op, "redirect") for op in REDIRECTS)  # what each operator is
_DIGITS = "0123456789"
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
    if not command.isascii():
        return None  # a word of other digits may be a descriptor ``int`` cannot read
    if _SPACED.fullmatch(command):
        tokens = command.split(" ")
    elif PLAIN_LINE.fullmatch(command):
        tokens = _TOKEN.findall(command)
    else:
        return None
    out: list[SimpleCommand] = []
    bare: list[str] = []
    env: dict[str, str] = {}
    words: list[str] = []
    assignments: list[str] = []
    redirects: list[Redirect] = []
    here: str | None = None  # the first here-string: a shell's script
    started = piped = False
    listed: Feed | None = None  # the files the pipeline element before lists
    at, count = 0, len(tokens)
    while at < count:
        token = tokens[at]
        at += 1
        kind = _KINDS.get(token)
        fd: int | None = None
        if kind is not None:
            op = token
        elif not token:
            continue  # between two spaces
        elif ("<" in token or ">" in token) and "'" not in token:
            # a descriptor and its redirection, or a part of a line split at its spaces
            op = token.lstrip(_DIGITS)
            if op == token or op not in REDIRECTS:  # the part: cut into its own tokens
                tokens[at - 1 : at] = _TOKEN.findall(token)
                at, count = at - 1, len(tokens)
                continue
            fd, kind = int(token[: len(token) - len(op)]), "redirect"
        else:
            started = True
            if words:
                words.append(token.replace("'", ""))
            elif token in _RESERVED:
                return None
            elif "=" in token and RAW_ASSIGNMENT.match(token):
                assignments.append(token.replace("'", ""))
            else:
                words.append(token.replace("'", ""))
            continue
        if kind == "redirect":
            started = True
            while at < count and not tokens[at]:
                at += 1
            target = tokens[at] if at < count else ""
            at += 1
            if (
                not target
                or target in _KINDS
                or (("<" in target or ">" in target) and "'" not in target)
            ):
                return None  # no target, or one glued to another redirection
            if op in _HEREDOCS:
                return None
            text = target.replace("'", "")
            redirects.append(new_redirect(op, text, fd))
            if here is None and op == "<<<":
                here = text
        elif kind in _CASE:
            return None
        elif started:  # a list operator: the command before it is complete
            start = len(out)
            _finish(
                words, assignments, redirects, here, piped or op in _ASYNC, out, bare, env, emit
            )
            listed = feed(out, start, listed if piped else None)
            words, assignments, redirects, here, started = [], [], [], None, False
            piped = op in _PIPES
    if started:
        start = len(out)
        _finish(words, assignments, redirects, here, piped, out, bare, env, emit)
        feed(out, start, listed if piped else None)
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
    name = argv[0] if argv else ""
    if "/" in name:
        name = name.rsplit("/", 1)[1]  # ``SimpleCommand.name``
    if name in _EXPORTS:
        for arg in argv[1:]:
            match = ASSIGNMENT.fullmatch(arg)
            if match:
                env[match.group(1)] = match.group(2)
    if name in WRAPPER_NAMES:
        emit(cmd, here, env, bare, out)
    else:
        out.append(cmd)
