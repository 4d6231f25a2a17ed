"""A small POSIX-shell reader: every simple command a command line would run.

``simple_commands`` is what a command policy checks. It descends into every place a
command can hide: lists and pipelines (``;`` ``&&`` ``||`` ``|`` ``&`` newlines),
subshells ``( )`` and groups ``{ }``, ``$(...)``, backticks, process substitution,
``$((...))``, unquoted heredoc bodies, function bodies, and wrappers that run another
command (``env``, ``sudo``, ``command``, ``exec``, ``nohup``, ``time``, ``nice``,
``timeout``, ``xargs``, ``find -exec``, ``eval``, ``bash -c``/``sh -c``/``zsh -c`` and a
shell reading a heredoc or here-string as its script).

Words are unquoted the way the shell would (``g"i"t``, ``\\git`` and ``$'\\x67it'`` all
read ``git``); variables assigned earlier in the same line are substituted; anything the
reader cannot know (an unknown ``$VAR``, a substitution's output) is kept as its source
text and the word is marked dynamic. A quoted heredoc body is data and is never read as
commands. Input the reader cannot parse (unbalanced quotes or parentheses, ``case``)
raises ``ShellParseError``: a policy must treat that as unknown, never as harmless.

The package: ``model`` (the results), ``words`` (quoting and words), ``grammar``
(lists, compound commands, substitutions), ``plain`` (the common plain line, read to
the grammar's very result without it), ``wrappers`` (what a wrapper runs),
``gitargv`` (the one reader of a ``git`` argv) and ``writes`` (the files a command
visibly writes). Only the standard library is imported: the hook commands load this on
every tool call.
"""

from __future__ import annotations

from seawall.shell.cwd import cwd_after, placed
from seawall.shell.grammar import ShellLine, read_line, simple_commands
from seawall.shell.model import Redirect, ShellParseError, SimpleCommand

__all__ = [
    "Redirect",
    "ShellLine",
    "ShellParseError",
    "SimpleCommand",
    "cwd_after",
    "placed",
    "read_line",
    "simple_commands",
]
