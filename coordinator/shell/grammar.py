"""The grammar of a command line: lists, pipelines, compound commands, redirections,
heredocs and substitutions, down to the simple commands they run."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from seawall.shell.model import (
    ASSIGNMENT,
    MAX_LENGTH,
    Redirect,
    ShellLine,
    ShellParseError,
    SimpleCommand,
    new_line,
)
from seawall.shell.plain import read_plain
from seawall.shell.words import RAW_ASSIGNMENT, REDIRECTS, SEPARATORS, Word, WordReader
from seawall.shell.wrappers import Feed, feed, unwrap

__all__ = ["ShellLine", "read_line", "simple_commands"]

_SKIPPED_KEYWORDS = frozenset(
    {"if", "then", "elif", "else", "fi", "do", "done", "while", "until", "!"}
)
_COMPOUND_STARTS = frozenset(
    {word[0] for word in _SKIPPED_KEYWORDS} | {"{", "c", "f", "s", "("}
)  # the first characters of every reserved word and "((" _compound_start looks for


def simple_commands(command: str) -> list[SimpleCommand]:
    """Every simple command ``command`` would run, outermost first, in source order.

    Raises ``ShellParseError`` when the line cannot be parsed.
    """
    return read_line(command).commands


def read_line(command: str) -> ShellLine:
    """``simple_commands`` and the bare assignments of ``command``.

    Raises ``ShellParseError`` when the line cannot be parsed.
    """
    if "\x00" in command:
        raise ShellParseError("the command contains a NUL byte")
    if len(command) > MAX_LENGTH:
        raise ShellParseError(f"the command is longer than {MAX_LENGTH} characters")
    line = read_plain(command, _emit_plain)
    if line is not None:
        return line
    out: list[SimpleCommand] = []
    parser = _Parser(command, out=out, env={}, depth=0)
    parser.parse_all()
    return new_line(out, tuple(parser.bare))


def _emit_plain(
    cmd: SimpleCommand,
    stdin_script: str | None,
    env: dict[str, str],
    bare: list[str],
    out: list[SimpleCommand],
) -> None:
    """A top-level command of a plain line a wrapper may run others in, and what it runs."""
    parser = _Parser("", out=out, env=env, bare=bare, depth=0)
    start = len(out)
    parser._emit(cmd, stdin_script)
    if cmd.subshell:
        parser._mark_subshell(start)


@dataclass(slots=True)
class _Heredoc:
    delimiter: str
    strip_tabs: bool
    quoted: bool
    body: str = ""


@dataclass(slots=True)
class _Builder:
    words: list[Word] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    redirects: list[tuple[str, Word, int | None]] = field(default_factory=list)
    heredocs: list[_Heredoc] = field(default_factory=list)


class _Parser(WordReader):
    """Recursive-descent reader over ``text`` from ``pos``; appends to ``out``."""

    def __init__(self, text: str, **kwargs: Any) -> None:
        super().__init__(text, **kwargs)
        self.pending: list[_Heredoc] = []
        self.functions: set[str] = set()  # shell functions this line defines

    # ----- driving -------------------------------------------------------------------

    def parse_all(self) -> None:
        self.parse_list(closer=None)

    def parse_list(self, *, closer: str | None) -> None:
        """Commands until ``closer`` (``)`` or ``}``) or the end of the text."""
        piped = False
        listed: Feed | None = None  # the files the pipeline element before lists
        while True:
            self._skip_blanks()
            if self.pos >= len(self.text):
                if closer is not None:
                    raise ShellParseError(f"missing {closer!r}")
                return
            op = self._peek_op()
            if op == ")":
                if closer != ")":
                    raise ShellParseError("unbalanced ')'")
                self.pos += 1
                return
            if op in (";;", ";&", ";;&"):
                raise ShellParseError("case statements are not supported")
            if op in SEPARATORS:
                self._take_op(op)
                continue
            if closer == "}" and self._at_reserved("}"):
                self.pos += 1
                return
            start = len(self.out)
            self.parse_command()
            self._skip_blanks()
            after = self._peek_op()
            if piped or after in ("|", "|&", "&"):
                self._mark_subshell(start)
            listed = feed(self.out, start, listed if piped else None)
            piped = after in ("|", "|&")

    def _mark_subshell(self, start: int) -> None:
        self.out[start:] = [replace(cmd, subshell=True) for cmd in self.out[start:]]

    def parse_command(self) -> None:
        """One simple or compound command, up to a separator."""
        b = _Builder()
        while True:
            self._skip_blanks()
            if self.pos >= len(self.text):
                break
            op = self._peek_op()
            if op is not None and (op in SEPARATORS or op in (")", ";;", ";&", ";;&")):
                if op == "\n" and self.pending:  # heredoc bodies belong to this command
                    self._take_op(op)
                break
            if op == "(":
                self.pos += 1
                if b.words:  # ``name ( )``: a function definition; its body follows
                    self._expect_close_paren()
                    self._defines(b.words[0])
                    b.words.clear()
                    continue
                start = len(self.out)
                self.parse_list(closer=")")
                self._mark_subshell(start)
                continue
            if op in ("<(", ">("):
                self.pos += 2
                self._sub(closer=")")
                b.words.append(Word(["/dev/fd/63"], dynamic=True))
                continue
            if op in REDIRECTS:
                self._redirect(b, op, fd=None)
                continue
            if not b.words and self._compound_start(b):
                continue
            word = self._read_word()
            if word is None:
                continue
            if word.raw.isdigit() and self._peek_op() in REDIRECTS:
                self._redirect(b, self._peek_op() or "", fd=int(word.raw))
                continue
            if not b.words and RAW_ASSIGNMENT.match(word.raw):
                b.assignments.append(word.text)
                continue
            b.words.append(word)
            if len(b.words) == 1 and word.text == "[[" and not word.quoted:
                self._double_bracket(b)
        self._finish(b)

    # ----- compound commands ---------------------------------------------------------

    def _compound_start(self, b: _Builder) -> bool:
        """Handle a reserved word at command start; True when one was consumed."""
        if self.text[self.pos : self.pos + 1] not in _COMPOUND_STARTS:
            return False  # most commands start with a program name: one set test
        for word in _SKIPPED_KEYWORDS:
            if self._at_reserved(word):
                self.pos += len(word)
                return True
        if self._at_reserved("{"):
            self.pos += 1
            self.parse_list(closer="}")
            return True
        if self._at_reserved("case"):
            raise ShellParseError("case statements are not supported")
        if self._at_reserved("function"):
            self.pos += len("function")
            self._skip_blanks()
            self._defines(self._read_word())  # the function's name
            self._skip_blanks()
            if self.text.startswith("(", self.pos):
                self.pos += 1
                self._expect_close_paren()
            return True
        if self._at_reserved("for") or self._at_reserved("select"):
            self._skip_header()
            return True
        if self.text.startswith("((", self.pos):
            self.pos += 2
            self._arithmetic()
            return True
        return False

    def _skip_header(self) -> None:
        """``for NAME in WORDS`` up to its separator: expansions in WORDS still run."""
        while self.pos < len(self.text):
            self._skip_blanks()
            op = self._peek_op()
            if op is not None and op in SEPARATORS:
                return
            if self._read_word() is None and op is not None:
                raise ShellParseError(f"unexpected {op!r} in a for header")

    def _double_bracket(self, b: _Builder) -> None:
        """``[[ ... ]]``: operators inside are words, not redirections or separators."""
        while True:
            self._skip_blanks()
            if self.pos >= len(self.text):
                raise ShellParseError("missing ']]'")
            op = self._peek_op()
            if op is not None and op != "\n":
                self.pos += len(op)
                b.words.append(Word([op]))
                continue
            if op == "\n":
                self.pos += 1
                continue
            word = self._read_word()
            if word is not None:
                b.words.append(word)
                if word.text == "]]" and not word.quoted:
                    return

    def _expect_close_paren(self) -> None:
        self._skip_blanks()
        if not self.text.startswith(")", self.pos):
            raise ShellParseError("unbalanced '('")
        self.pos += 1

    # ----- redirections and heredocs -------------------------------------------------

    def _redirect(self, b: _Builder, op: str, *, fd: int | None) -> None:
        self.pos += len(op)
        self._skip_blanks()
        target = self._read_word()
        if target is None:
            raise ShellParseError(f"redirection {op!r} has no target")
        if op in ("<<", "<<-"):
            doc = _Heredoc(target.text, op == "<<-", target.quoted)
            self.pending.append(doc)
            b.heredocs.append(doc)
        b.redirects.append((op, target, fd))

    def _read_heredocs(self) -> None:
        """After a newline: the bodies of the heredocs opened on the line just ended."""
        for doc in self.pending:
            lines: list[str] = []
            while self.pos < len(self.text):
                end = self.text.find("\n", self.pos)
                end = len(self.text) if end < 0 else end
                line = self.text[self.pos : end]
                self.pos = min(end + 1, len(self.text))
                check = line.lstrip("\t") if doc.strip_tabs else line
                if check == doc.delimiter:
                    break
                lines.append(check)
            doc.body = "\n".join(lines)
            if not doc.quoted:  # an unquoted body is expanded: its substitutions run
                self._scan_expansions(doc.body)
        self.pending.clear()

    # ----- finishing a command -------------------------------------------------------

    def _finish(self, b: _Builder) -> None:
        if not b.words:
            self.bare.extend(b.assignments)
            if b.assignments and not b.redirects:
                for assignment in b.assignments:
                    name, _, value = assignment.partition("=")
                    self.env[name.rstrip("+")] = value
            if not b.redirects:
                return
        argv: list[str] = []
        dynamic: list[bool] = []
        globs: list[bool] = []
        for word in b.words:
            argv.extend(word.fields)
            dynamic.extend([word.dynamic] * len(word.fields))
            globs.extend([word.glob] * len(word.fields))
        redirects = tuple(
            Redirect(op=op, target=word.text, fd=fd, dynamic=word.dynamic, glob=word.glob)
            for op, word, fd in b.redirects
        )
        cmd = SimpleCommand(
            argv=tuple(argv),
            redirects=redirects,
            assignments=tuple(b.assignments),
            wrappers=self.wrappers,
            depth=self.depth,
            dynamic=tuple(dynamic),
            globs=tuple(globs) if any(globs) else (),
            function=bool(argv) and argv[0] in self.functions and not dynamic[0],
        )
        if cmd.name in ("export", "declare", "typeset", "local", "readonly"):
            for arg in cmd.argv[1:]:
                match = ASSIGNMENT.fullmatch(arg)
                if match:
                    self.env[match.group(1)] = match.group(2)
        stdin_script = next((d.body for d in b.heredocs), None)
        here_string = next((w.text for op, w, _ in b.redirects if op == "<<<"), None)
        self._emit(cmd, stdin_script if stdin_script is not None else here_string)

    def _defines(self, name: Word | None) -> None:
        """A function definition's name, known as written (its body is read, and judged,
        where it is defined)."""
        if name is not None and not name.dynamic and len(name.fields) == 1:
            self.functions.add(name.fields[0])

    def _emit(self, cmd: SimpleCommand, stdin_script: str | None) -> None:
        opaque, inners = unwrap(cmd, stdin_script)
        self.out.append(replace(cmd, opaque=opaque) if opaque else cmd)
        for label, inner in inners:
            if isinstance(inner, str):
                self._nested(inner, (*cmd.wrappers, label), cmd.depth + 1)
            else:
                self._emit(replace(inner, wrappers=(*cmd.wrappers, label), depth=cmd.depth), None)

    def _nested(self, script: str, wrappers: tuple[str, ...], depth: int) -> None:
        start = len(self.out)
        parser = _Parser(
            script, out=self.out, env=dict(self.env), bare=self.bare, depth=depth, wrappers=wrappers
        )
        parser.parse_all()
        self._mark_subshell(start)

    # ----- substitutions -------------------------------------------------------------

    def _sub(self, *, closer: str) -> None:
        """A ``$(...)`` or ``<(...)`` body from ``pos`` to its closing parenthesis."""
        parser = _Parser(
            self.text,
            out=self.out,
            env=dict(self.env),
            bare=self.bare,
            depth=self.depth + 1,
            pos=self.pos,
            wrappers=(*self.wrappers, "$(...)"),
        )
        start = len(self.out)
        parser.parse_list(closer=closer)
        self.pos = parser.pos
        self._mark_subshell(start)

    def _arithmetic(self) -> None:
        """Skip ``$((...))``/``((...))`` from ``pos`` (after the opening ``((``)."""
        text = self.text
        level = 2
        start = self.pos
        while level:
            if self.pos >= len(text):
                raise ShellParseError("unterminated arithmetic expression")
            c = text[self.pos]
            level += (c == "(") - (c == ")")
            self.pos += 1
        # what sits inside the outer pair: ``(x)`` for ``$((x))``, and for
        # ``$((cmd); more)`` (a subshell in a command substitution, not arithmetic) the
        # whole ``(cmd); more``
        inner = text[start - 1 : self.pos - 1]
        if not self._as_commands(inner):
            self._scan_expansions(text[start : self.pos - 2])

    def _as_commands(self, text: str) -> bool:
        """Read ``$((x))`` as ``$( (x) )`` too, as some shells do; False when it is no command.

        Commands found so are kept even though bash would evaluate the arithmetic: the
        reader must not miss what another shell would run.
        """
        found: list[SimpleCommand] = []
        parser = _Parser(
            text,
            out=found,
            env=dict(self.env),
            bare=self.bare,
            depth=self.depth + 1,
            wrappers=(*self.wrappers, "$((...))"),
        )
        try:
            parser.parse_all()
        except ShellParseError:
            return False
        self.out.extend(replace(cmd, subshell=True) for cmd in found)
        return True

    def _scan_expansions(self, body: str) -> None:
        """Read the substitutions inside text that is otherwise data."""
        scanner = _Parser(
            body,
            out=self.out,
            env=dict(self.env),
            bare=self.bare,
            depth=self.depth,
            wrappers=self.wrappers,
        )
        sink = Word([""])
        while scanner.pos < len(body):
            c = body[scanner.pos]
            if c == "\\":
                scanner.pos += 2
            elif c == "$":
                scanner._dollar(sink, quoted=True)
            elif c == "`":
                scanner._backtick(sink)
            else:
                scanner.pos += 1

    def _take_op(self, op: str) -> None:
        self.pos += len(op)
        if op == "\n" and self.pending:
            self._read_heredocs()
