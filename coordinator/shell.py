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

Only the standard library is imported: the hook commands load this on every tool call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from coordinator.errors import ConfigurationError

__all__ = ["Redirect", "ShellParseError", "SimpleCommand", "simple_commands"]

MAX_DEPTH = 16  # nesting of substitutions and ``sh -c``; deeper input is refused
MAX_LENGTH = 100_000  # characters; a longer command line is refused

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RAW_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)", re.DOTALL)
_OPERATORS = (
    "&>>", "<<<", "<<-", ";;&", "&&", "||", ";;", ";&", "|&", "&>", ">>", ">|", ">&",
    "<<", "<&", "<>", "<(", ">(", ";", "&", "|", "(", ")", "<", ">", "\n",
)  # fmt: skip
_REDIRECTS = frozenset({"&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<<", "<&", "<>", "<", ">"})
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "\n"})
_WORD_END = frozenset(" \t\n;&|<>()")
_SKIPPED_KEYWORDS = frozenset(
    {"if", "then", "elif", "else", "fi", "do", "done", "while", "until", "!"}
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
_DEVICES = re.compile(r"/dev/(null|stdout|stderr|stdin|tty|zero|fd/\d+)")
_ANSI_SIMPLE = dict(zip("abeEfnrtv\\'\"?", "\a\b\x1b\x1b\f\n\r\t\v\\'\"?", strict=True))


class ShellParseError(ConfigurationError):
    """A command line the reader cannot parse; what it would run is unknown."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Redirect:
    """One redirection: its operator (``>``, ``>>``, ``<``, ``<<``, ...) and its target."""

    op: str
    target: str
    fd: int | None = None
    dynamic: bool = False  # the target contains an expansion the reader could not resolve

    @property
    def writes_file(self) -> bool:
        """True when the redirection opens a file for writing (not a device, not an fd dup)."""
        if self.op not in _WRITE_OPS:
            return False
        if self.op == ">&" and (self.target.isdigit() or self.target == "-"):
            return False
        return _DEVICES.fullmatch(self.target) is None


@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleCommand:
    """One command the shell would run, with its arguments as the shell would pass them.

    ``wrappers`` names the commands that run this one (``("sudo", "bash -c")``);
    ``depth`` counts substitution and ``-c`` nesting; ``dynamic`` marks, per argv word,
    whether it holds an expansion the reader could not resolve; ``opaque`` says why what
    the command runs cannot be seen (empty when it can); ``subshell`` is true inside
    ``( )``, a substitution, a pipeline, a background job or a nested shell.
    """

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    assignments: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    depth: int = 0
    dynamic: tuple[bool, ...] = ()
    opaque: str = ""
    subshell: bool = False  # runs apart from the main shell: a cd in it changes nothing after

    @property
    def name(self) -> str:
        """The program's base name (``/usr/bin/git`` -> ``git``); empty for no program."""
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    @property
    def dynamic_name(self) -> bool:
        """True when the program itself comes from an unresolved expansion."""
        return bool(self.dynamic) and self.dynamic[0]

    @property
    def written_files(self) -> tuple[str, ...]:
        """Files the redirections of this command open for writing."""
        return tuple(r.target for r in self.redirects if r.writes_file)


def simple_commands(command: str) -> list[SimpleCommand]:
    """Every simple command ``command`` would run, outermost first, in source order.

    Raises ``ShellParseError`` when the line cannot be parsed.
    """
    if "\x00" in command:
        raise ShellParseError("the command contains a NUL byte")
    if len(command) > MAX_LENGTH:
        raise ShellParseError(f"the command is longer than {MAX_LENGTH} characters")
    out: list[SimpleCommand] = []
    _Parser(command, out=out, env={}, depth=0).parse_all()
    return out


@dataclass(slots=True)
class _Word:
    fields: list[str]
    dynamic: bool = False
    quoted: bool = False
    raw: str = ""

    @property
    def text(self) -> str:
        return " ".join(self.fields)


@dataclass(slots=True)
class _Heredoc:
    delimiter: str
    strip_tabs: bool
    quoted: bool
    body: str = ""


@dataclass(slots=True)
class _Builder:
    words: list[_Word] = field(default_factory=list)
    assignments: list[str] = field(default_factory=list)
    redirects: list[tuple[str, _Word, int | None]] = field(default_factory=list)
    heredocs: list[_Heredoc] = field(default_factory=list)


class _Parser:
    """Recursive-descent reader over ``text`` from ``pos``; appends to ``out``."""

    def __init__(
        self,
        text: str,
        *,
        out: list[SimpleCommand],
        env: dict[str, str],
        depth: int,
        pos: int = 0,
        wrappers: tuple[str, ...] = (),
    ) -> None:
        if depth > MAX_DEPTH:
            raise ShellParseError(f"the command nests deeper than {MAX_DEPTH} levels")
        self.text = text
        self.pos = pos
        self.out = out
        self.env = env
        self.depth = depth
        self.wrappers = wrappers
        self.pending: list[_Heredoc] = []

    # ----- driving -------------------------------------------------------------------

    def parse_all(self) -> None:
        self.parse_list(closer=None)

    def parse_list(self, *, closer: str | None) -> None:
        """Commands until ``closer`` (``)`` or ``}``) or the end of the text."""
        piped = False
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
            if op in _SEPARATORS:
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
            if op is not None and (op in _SEPARATORS or op in (")", ";;", ";&", ";;&")):
                if op == "\n" and self.pending:  # heredoc bodies belong to this command
                    self._take_op(op)
                break
            if op == "(":
                self.pos += 1
                if b.words:  # ``name ( )``: a function definition; its body follows
                    self._expect_close_paren()
                    b.words.clear()
                    continue
                start = len(self.out)
                self.parse_list(closer=")")
                self._mark_subshell(start)
                continue
            if op in ("<(", ">("):
                self.pos += 2
                self._sub(closer=")")
                b.words.append(_Word(["/dev/fd/63"], dynamic=True))
                continue
            if op in _REDIRECTS:
                self._redirect(b, op, fd=None)
                continue
            if not b.words and self._compound_start(b):
                continue
            word = self._read_word()
            if word is None:
                continue
            if word.raw.isdigit() and self._peek_op() in _REDIRECTS:
                self._redirect(b, self._peek_op() or "", fd=int(word.raw))
                continue
            if not b.words and _RAW_ASSIGNMENT.match(word.raw):
                b.assignments.append(word.text)
                continue
            b.words.append(word)
            if len(b.words) == 1 and word.text == "[[" and not word.quoted:
                self._double_bracket(b)
        self._finish(b)

    # ----- compound commands ---------------------------------------------------------

    def _compound_start(self, b: _Builder) -> bool:
        """Handle a reserved word at command start; True when one was consumed."""
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
            self._read_word()  # the function's name
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
            if op is not None and op in _SEPARATORS:
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
                b.words.append(_Word([op]))
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
            if b.assignments and not b.redirects:
                for assignment in b.assignments:
                    name, _, value = assignment.partition("=")
                    self.env[name.rstrip("+")] = value
            if not b.redirects:
                return
        argv: list[str] = []
        dynamic: list[bool] = []
        for word in b.words:
            argv.extend(word.fields)
            dynamic.extend([word.dynamic] * len(word.fields))
        redirects = tuple(
            Redirect(op=op, target=word.text, fd=fd, dynamic=word.dynamic)
            for op, word, fd in b.redirects
        )
        cmd = SimpleCommand(
            argv=tuple(argv),
            redirects=redirects,
            assignments=tuple(b.assignments),
            wrappers=self.wrappers,
            depth=self.depth,
            dynamic=tuple(dynamic),
        )
        if cmd.name in ("export", "declare", "typeset", "local", "readonly"):
            for arg in cmd.argv[1:]:
                match = _ASSIGNMENT.fullmatch(arg)
                if match:
                    self.env[match.group(1)] = match.group(2)
        stdin_script = next((d.body for d in b.heredocs), None)
        here_string = next((w.text for op, w, _ in b.redirects if op == "<<<"), None)
        self._emit(cmd, stdin_script if stdin_script is not None else here_string)

    def _emit(self, cmd: SimpleCommand, stdin_script: str | None) -> None:
        opaque, inners = _unwrap(cmd, stdin_script)
        self.out.append(replace(cmd, opaque=opaque) if opaque else cmd)
        for label, inner in inners:
            if isinstance(inner, str):
                self._nested(inner, (*cmd.wrappers, label), cmd.depth + 1)
            else:
                self._emit(replace(inner, wrappers=(*cmd.wrappers, label), depth=cmd.depth), None)

    def _nested(self, script: str, wrappers: tuple[str, ...], depth: int) -> None:
        start = len(self.out)
        parser = _Parser(script, out=self.out, env=dict(self.env), depth=depth, wrappers=wrappers)
        parser.parse_all()
        self._mark_subshell(start)

    # ----- words ---------------------------------------------------------------------

    def _read_word(self) -> _Word | None:
        """One word, unquoted and expanded where possible; None for a comment."""
        start = self.pos
        fields: list[str] = [""]
        word = _Word(fields)
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c in _WORD_END:
                break
            if c == "#" and self.pos == start:
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
                return None
            if c == "\\":
                word.quoted = True
                if self.pos + 1 < len(text) and text[self.pos + 1] == "\n":
                    self.pos += 2
                    continue
                fields[-1] += text[self.pos + 1 : self.pos + 2]
                self.pos += 2
            elif c == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellParseError("unterminated single quote")
                fields[-1] += text[self.pos + 1 : end]
                word.quoted = True
                self.pos = end + 1
            elif c == '"':
                word.quoted = True
                self.pos += 1
                self._double_quoted(word)
            elif c == "$":
                self._dollar(word, quoted=False)
            elif c == "`":
                self._backtick(word)
            else:
                fields[-1] += c
                self.pos += 1
        word.raw = text[start : self.pos]
        if self.pos == start:
            return None
        self._brace_expand(word)
        return word

    def _double_quoted(self, word: _Word) -> None:
        text = self.text
        while True:
            if self.pos >= len(text):
                raise ShellParseError("unterminated double quote")
            c = text[self.pos]
            if c == '"':
                self.pos += 1
                return
            if c == "\\" and self.pos + 1 < len(text) and text[self.pos + 1] in '$`"\\\n':
                if text[self.pos + 1] != "\n":
                    word.fields[-1] += text[self.pos + 1]
                self.pos += 2
            elif c == "$":
                self._dollar(word, quoted=True)
            elif c == "`":
                self._backtick(word)
            else:
                word.fields[-1] += c
                self.pos += 1

    def _dollar(self, word: _Word, *, quoted: bool) -> None:
        text = self.text
        nxt = text[self.pos + 1 : self.pos + 2]
        start = self.pos
        if nxt == "'" and not quoted:
            self.pos += 2
            word.fields[-1] += self._ansi_c()
            word.quoted = True
        elif nxt == '"' and not quoted:
            self.pos += 2
            word.quoted = True
            self._double_quoted(word)
        elif text.startswith("$((", self.pos):
            self.pos += 3
            self._arithmetic()
            self._unknown(word, text[start : self.pos])
        elif nxt == "(":
            self.pos += 2
            self._sub(closer=")")
            self._unknown(word, text[start : self.pos])
        elif nxt == "{":
            end = _matching_brace(text, self.pos + 1)
            inner = text[self.pos + 2 : end]
            self.pos = end + 1
            if _NAME.fullmatch(inner) and inner in self.env:
                self._known(word, self.env[inner], quoted=quoted)
            else:
                self._scan_expansions(inner)
                self._unknown(word, text[start : self.pos])
        else:
            match = _NAME.match(text, self.pos + 1)
            if match:
                self.pos = match.end()
                if match.group() in self.env:
                    self._known(word, self.env[match.group()], quoted=quoted)
                else:
                    self._unknown(word, text[start : self.pos])
            elif nxt and nxt in "@*#?-$!0123456789":
                self.pos += 2
                self._unknown(word, text[start : self.pos])
            else:
                word.fields[-1] += "$"
                self.pos += 1

    def _known(self, word: _Word, value: str, *, quoted: bool) -> None:
        if quoted:
            word.fields[-1] += value
            return
        parts = value.split()
        if not parts:
            return
        if value[:1].isspace() and word.fields[-1]:
            word.fields.append("")
        word.fields[-1] += parts[0]
        word.fields.extend(parts[1:])

    @staticmethod
    def _unknown(word: _Word, source: str) -> None:
        word.fields[-1] += source
        word.dynamic = True

    def _ansi_c(self) -> str:
        """Body of ``$'...'`` from ``pos``; decodes the escapes bash decodes."""
        text = self.text
        out: list[str] = []
        while True:
            if self.pos >= len(text):
                raise ShellParseError("unterminated $'...' quote")
            c = text[self.pos]
            if c == "'":
                self.pos += 1
                return "".join(out)
            if c != "\\":
                out.append(c)
                self.pos += 1
                continue
            out.append(self._ansi_escape())

    def _ansi_escape(self) -> str:
        text = self.text
        esc = text[self.pos + 1 : self.pos + 2]
        self.pos += 2
        if esc in _ANSI_SIMPLE:
            return _ANSI_SIMPLE[esc]
        spec = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}.get(esc)
        if spec is None and esc in "01234567" and esc:
            self.pos -= 1
            spec = (8, 3)
        if spec is None:
            return "\\" + esc
        base, width = spec
        digits = ""
        allowed = "0123456789abcdefABCDEF" if base == 16 else "01234567"
        while len(digits) < width and self.pos < len(text) and text[self.pos] in allowed:
            digits += text[self.pos]
            self.pos += 1
        if not digits:
            return "\\" + esc
        value = int(digits, base)
        if value > 0x10FFFF:
            raise ShellParseError(f"$'...' escape \\{esc}{digits} is not a character")
        return chr(value)

    def _backtick(self, word: _Word) -> None:
        text = self.text
        start = self.pos
        self.pos += 1
        body: list[str] = []
        while True:
            if self.pos >= len(text):
                raise ShellParseError("unterminated backtick")
            c = text[self.pos]
            if c == "`":
                self.pos += 1
                break
            if c == "\\" and text[self.pos + 1 : self.pos + 2] in ("`", "\\", "$"):
                body.append(text[self.pos + 1])
                self.pos += 2
                continue
            body.append(c)
            self.pos += 1
        self._nested("".join(body), (*self.wrappers, "`...`"), self.depth + 1)
        self._unknown(word, text[start : self.pos])

    def _brace_expand(self, word: _Word) -> None:
        """``a{b,c}`` -> ``ab ac`` for one unquoted comma list (no nesting, no ranges)."""
        if word.quoted or len(word.fields) != 1:
            return
        match = re.fullmatch(r"([^{}]*)\{([^{}]*,[^{}]*)\}([^{}]*)", word.fields[0])
        if match:
            head, body, tail = match.groups()
            word.fields[:] = [head + item + tail for item in body.split(",")]

    # ----- substitutions -------------------------------------------------------------

    def _sub(self, *, closer: str) -> None:
        """A ``$(...)`` or ``<(...)`` body from ``pos`` to its closing parenthesis."""
        parser = _Parser(
            self.text,
            out=self.out,
            env=dict(self.env),
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
            body, out=self.out, env=dict(self.env), depth=self.depth, wrappers=self.wrappers
        )
        sink = _Word([""])
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

    # ----- lexing helpers ------------------------------------------------------------

    def _skip_blanks(self) -> None:
        text = self.text
        while self.pos < len(text):
            if text[self.pos] in " \t":
                self.pos += 1
            elif text.startswith("\\\n", self.pos):
                self.pos += 2
            else:
                return

    def _peek_op(self) -> str | None:
        for op in _OPERATORS:
            if self.text.startswith(op, self.pos):
                return op
        return None

    def _take_op(self, op: str) -> None:
        self.pos += len(op)
        if op == "\n" and self.pending:
            self._read_heredocs()

    def _at_reserved(self, word: str) -> bool:
        if not self.text.startswith(word, self.pos):
            return False
        after = self.text[self.pos + len(word) : self.pos + len(word) + 1]
        return after == "" or after in _WORD_END


def _matching_brace(text: str, open_at: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``open_at`` (quotes respected)."""
    level = 0
    pos = open_at
    quote = ""
    while pos < len(text):
        c = text[pos]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"':
                pos += 1
        elif c in "'\"":
            quote = c
        elif c == "\\":
            pos += 1
        elif c == "{":
            level += 1
        elif c == "}":
            level -= 1
            if level == 0:
                return pos
        pos += 1
    raise ShellParseError("unterminated ${...}")


# ----- wrappers: commands that run another command ------------------------------------

_Inner = tuple[str, "SimpleCommand | str"]  # (label, a command or a script to parse)

# options that take a separate argument, per wrapper
_OPTION_ARGS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R"}),
    "doas": frozenset({"-u", "-C"}),
    "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "xargs": frozenset(
        {
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--max-chars",
            "--replace",
        }
    ),
    "watch": frozenset({"-n", "--interval", "-d", "--differences"}),
    "flock": frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}),
    "taskset": frozenset(),
    "chrt": frozenset(),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-O", "-S", "-P", "-I", "-b"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u", "-n", "-a"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "nohup": frozenset(),
    "setsid": frozenset(),
    "chronic": frozenset(),
    "busybox": frozenset(),
    "unbuffer": frozenset(),
}
# ``TOOL run|exec [options] COMMAND``: options that take a separate argument
_RUNNERS: dict[str, frozenset[str]] = {
    "uv": frozenset({"--with", "--python", "-p", "--project", "--directory", "--package",
                     "--extra", "--group", "--env-file", "--index", "--from", "-w"}),
    "poetry": frozenset({"-C", "--directory", "-P", "--project"}),
    "pipenv": frozenset(),
    "pdm": frozenset({"-p", "--project"}),
    "hatch": frozenset({"-e", "--env"}),
    "rye": frozenset(),
    "conda": frozenset({"-n", "--name", "-p", "--prefix"}),
    "bundle": frozenset(),
    "pnpm": frozenset(),
}  # fmt: skip
_SHELL_OPTION_ARGS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def _unwrap(cmd: SimpleCommand, stdin_script: str | None) -> tuple[str, list[_Inner]]:
    """What ``cmd`` runs in turn: (why that is opaque or ``""``, inner commands/scripts)."""
    name = cmd.name
    args = list(range(1, len(cmd.argv)))
    if name in _SHELLS and name != "busybox":
        return _shell(cmd, stdin_script)
    if name == "eval":
        return "", [("eval", " ".join(cmd.argv[1:]))]
    if name == "find":
        return "", _find_exec(cmd)
    if name in ("su", "script", "flock"):
        script = _option_value(cmd, ("-c", "--command"))
        if script is not None:
            return "", [(f"{name} -c", script)]
    if name in _RUNNERS and len(cmd.argv) > 2 and cmd.argv[1] in ("run", "exec"):
        rest = _skip_options(cmd, list(range(2, len(cmd.argv))), _RUNNERS[name])
        return "", [(f"{name} {cmd.argv[1]}", _slice(cmd, rest))] if rest else []
    if name not in _OPTION_ARGS:
        return "", []
    rest = _skip_options(cmd, args, _OPTION_ARGS[name])
    if name == "env":
        split = _option_value(cmd, ("-S", "--split-string"))
        if split is not None:
            return "", [("env -S", split)]
        while rest and _ASSIGNMENT.fullmatch(cmd.argv[rest[0]]):
            rest.pop(0)
    if name == "sudo":
        while rest and _ASSIGNMENT.fullmatch(cmd.argv[rest[0]]):
            rest.pop(0)
    if name in ("timeout", "flock", "taskset", "chrt") and rest:
        rest.pop(0)  # the duration, lock file, CPU mask or priority
    if name == "watch":
        return "", [("watch", " ".join(cmd.argv[i] for i in rest))] if rest else []
    if not rest:
        return "", []
    return "", [(name, _slice(cmd, rest))]


def _skip_options(cmd: SimpleCommand, args: list[int], with_arg: frozenset[str]) -> list[int]:
    """Indices of ``args`` left after the leading options (and ``--``)."""
    rest = list(args)
    while rest:
        word = cmd.argv[rest[0]]
        if word == "--":
            rest.pop(0)
            break
        if not word.startswith("-") or word == "-":
            break
        rest.pop(0)
        if word in with_arg and rest:
            rest.pop(0)
    return rest


def _option_value(cmd: SimpleCommand, names: tuple[str, ...]) -> str | None:
    short = {name[1] for name in names if len(name) == 2 and name[0] == "-"}
    for i, word in enumerate(cmd.argv[1:], start=1):
        clustered = word[:1] == "-" and word[1:2] != "-" and word[-1:] in short
        if (word in names or clustered) and i + 1 < len(cmd.argv):
            return cmd.argv[i + 1]
        for option in names:
            if option.startswith("--") and word.startswith(option + "="):
                return word[len(option) + 1 :]
    return None


def _slice(cmd: SimpleCommand, indices: list[int]) -> SimpleCommand:
    dynamic = cmd.dynamic or (False,) * len(cmd.argv)
    return SimpleCommand(
        argv=tuple(cmd.argv[i] for i in indices),
        dynamic=tuple(dynamic[i] for i in indices),
        depth=cmd.depth,
    )


def _shell(cmd: SimpleCommand, stdin_script: str | None) -> tuple[str, list[_Inner]]:
    """``bash [options] -c SCRIPT``, ``bash FILE``, or a shell reading standard input."""
    label = f"{cmd.name} -c"
    command_mode = False
    reads_stdin = False
    i = 1
    argv = cmd.argv
    while i < len(argv):
        word = argv[i]
        if word == "--" or word == "-":
            i += 1
            break
        if word in _SHELL_OPTION_ARGS:
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            command_mode = command_mode or "c" in word[1:]
            reads_stdin = reads_stdin or "s" in word[1:]
            i += 1
            continue
        break
    if command_mode:
        if i >= len(argv):
            raise ShellParseError(f"{cmd.name} -c has no script")
        return "", [(label, argv[i])]
    if i < len(argv) and not reads_stdin:
        return "", []  # runs a script file, like any other program
    if stdin_script is not None:
        return "", [(f"{cmd.name} <<", stdin_script)]
    return "a shell reading its script from standard input", []


def _find_exec(cmd: SimpleCommand) -> list[_Inner]:
    """The commands of ``find ... -exec CMD ... ;`` (and -execdir, -ok, -okdir)."""
    inners: list[_Inner] = []
    argv = cmd.argv
    i = 1
    while i < len(argv):
        if argv[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            start = i + 1
            end = start
            while end < len(argv) and argv[end] not in (";", "+"):
                end += 1
            if end > start:
                inners.append((f"find {argv[i]}", _slice(cmd, list(range(start, end)))))
            i = end
        i += 1
    return inners
