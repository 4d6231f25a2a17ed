"""Words as the shell reads them: quoting, escapes, variables and brace lists.

``WordReader`` reads one word at a time from ``text`` at ``pos``: it unquotes the way
the shell would (``g"i"t``, ``\\git`` and ``$'\\x67it'`` all read ``git``), substitutes
variables assigned earlier in the same line, and marks a word dynamic when it holds
something that cannot be known before the line runs (an unknown ``$VAR``, a
substitution's output). The grammar (``seawall.shell.grammar``) supplies the
substitutions, which are commands in their own right.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

from seawall.shell.model import MAX_DEPTH, ShellParseError, SimpleCommand

__all__ = [
    "MAX_BRACE_WORDS",
    "OPERATORS",
    "RAW_ASSIGNMENT",
    "REDIRECTS",
    "SEPARATORS",
    "WORD_END",
    "Word",
    "WordReader",
    "expand_braces",
    "matching_brace",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
OPERATORS = (
    "&>>", "<<<", "<<-", ";;&", "&&", "||", ";;", ";&", "|&", "&>", ">>", ">|", ">&",
    "<<", "<&", "<>", "<(", ">(", ";", "&", "|", "(", ")", "<", ">", "\n",
)  # fmt: skip
REDIRECTS = frozenset({"&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<<", "<&", "<>", "<", ">"})
SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "\n"})
RAW_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")  # a word that assigns a variable
WORD_END = frozenset(" \t\n;&|<>()")
_OPERATOR_STARTS = frozenset(op[0] for op in OPERATORS)
_PLAIN_RUN = re.compile(r"[^ \t\n;&|<>()\\'\"$`]+")  # characters a word takes as they are
_QUOTED_RUN = re.compile(r'[^"\\$`]+')  # the same, inside double quotes
_ANSI_SIMPLE = dict(zip("abeEfnrtv\\'\"?", "\a\b\x1b\x1b\f\n\r\t\v\\'\"?", strict=True))


@dataclass(slots=True)
class Word:
    fields: list[str]
    dynamic: bool = False
    quoted: bool = False
    raw: str = ""
    glob: bool = False  # an unquoted ``*``, ``?`` or ``[``: the shell expands it as a pattern
    braces: bool = False  # an unquoted ``{``: perhaps a brace expansion

    @property
    def text(self) -> str:
        return " ".join(self.fields)


class WordReader(ABC):
    """Reads words and operators from ``text`` at ``pos``; commands go to ``out``."""

    def __init__(
        self,
        text: str,
        *,
        out: list[SimpleCommand],
        env: dict[str, str],
        depth: int,
        pos: int = 0,
        wrappers: tuple[str, ...] = (),
        bare: list[str] | None = None,
    ) -> None:
        if depth > MAX_DEPTH:
            raise ShellParseError(f"the command nests deeper than {MAX_DEPTH} levels")
        self.text = text
        self.pos = pos
        self.out = out
        self.env = env
        self.depth = depth
        self.wrappers = wrappers
        self.bare = [] if bare is None else bare  # assignments that run no command

    @abstractmethod
    def _sub(self, *, closer: str) -> None:
        """Read a ``$(...)`` or ``<(...)`` body as commands."""

    @abstractmethod
    def _arithmetic(self) -> None:
        """Read a ``$((...))`` body."""

    @abstractmethod
    def _scan_expansions(self, body: str) -> None:
        """Read the substitutions inside text that is otherwise data."""

    @abstractmethod
    def _nested(self, script: str, wrappers: tuple[str, ...], depth: int) -> None:
        """Read ``script`` as the commands of a nested shell."""

    # ----- words ---------------------------------------------------------------------

    def _read_word(self) -> Word | None:
        """One word, unquoted and expanded where possible; None for a comment."""
        start = self.pos
        fields: list[str] = [""]
        word = Word(fields)
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c in WORD_END:
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
            else:  # a run of plain characters, taken whole
                run = _PLAIN_RUN.match(text, self.pos)
                assert run is not None  # ``c`` itself is plain
                plain = run.group()
                word.glob = word.glob or "*" in plain or "?" in plain or "[" in plain
                word.braces = word.braces or "{" in plain
                fields[-1] += plain
                self.pos = run.end()
        word.raw = text[start : self.pos]
        if self.pos == start:
            return None
        self._brace_expand(word)
        return word

    def _double_quoted(self, word: Word) -> None:
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
            elif c == "\\":  # a backslash that escapes nothing here is itself
                word.fields[-1] += c
                self.pos += 1
            else:
                run = _QUOTED_RUN.match(text, self.pos)
                assert run is not None  # ``c`` itself is plain
                word.fields[-1] += run.group()
                self.pos = run.end()

    def _dollar(self, word: Word, *, quoted: bool) -> None:
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
            end = matching_brace(text, self.pos + 1)
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

    def _known(self, word: Word, value: str, *, quoted: bool) -> None:
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
    def _unknown(word: Word, source: str) -> None:
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

    def _backtick(self, word: Word) -> None:
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

    def _brace_expand(self, word: Word) -> None:
        """``a{b,c{d,e}}`` and ``{1..3}`` expanded as bash expands them.

        Only a word whose braces and other characters are all unquoted and known is
        expanded; one that mixes braces with quotes or expansions, or expands to more
        than ``MAX_BRACE_WORDS`` words, is marked dynamic: what it names is not known.
        """
        if not word.braces or len(word.fields) != 1:
            return
        expanded = expand_braces(word.fields[0])
        if expanded == [word.fields[0]]:
            return
        if word.quoted or word.dynamic or expanded is None:
            word.dynamic = True
            return
        word.fields[:] = expanded

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
        text, pos = self.text, self.pos
        if text[pos : pos + 1] not in _OPERATOR_STARTS:
            return None  # most positions start a word: one set test instead of 26
        for op in OPERATORS:
            if text.startswith(op, pos):
                return op
        return None

    def _at_reserved(self, word: str) -> bool:
        if not self.text.startswith(word, self.pos):
            return False
        after = self.text[self.pos + len(word) : self.pos + len(word) + 1]
        return after == "" or after in WORD_END


def matching_brace(text: str, open_at: int) -> int:
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


MAX_BRACE_WORDS = 1024


def expand_braces(text: str) -> list[str] | None:
    """Bash brace expansion of ``text`` (comma lists, nesting, ``{a..z}``, ``{1..9..2}``).

    None when the expansion would have more than ``MAX_BRACE_WORDS`` words.
    """
    found = _first_brace(text)
    if found is None:
        return [text]
    open_at, close_at, items = found
    head, tail = text[:open_at], text[close_at + 1 :]
    out: list[str] = []
    for item in items:
        rests = expand_braces(item + tail)
        if rests is None:
            return None
        for rest in rests:
            out.append(head + rest)
            if len(out) > MAX_BRACE_WORDS:
                return None
    return out


def _first_brace(text: str) -> tuple[int, int, list[str]] | None:
    """The first ``{...}`` that expands: its bounds and its items (ranges written out)."""
    for open_at, char in enumerate(text):
        if char != "{" or (open_at and text[open_at - 1] == "$"):
            continue
        level, items, start = 0, [], open_at + 1
        for pos in range(open_at, len(text)):
            if text[pos] == "{":
                level += 1
            elif text[pos] == "}":
                level -= 1
                if level == 0:
                    items.append(text[start:pos])
                    body = text[open_at + 1 : pos]
                    if len(items) > 1:
                        return open_at, pos, items
                    sequence = _sequence(body)
                    if sequence is not None:
                        return open_at, pos, sequence
                    break
            elif text[pos] == "," and level == 1:
                items.append(text[start:pos])
                start = pos + 1
    return None


_RANGE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")


def _sequence(body: str) -> list[str] | None:
    match = _RANGE.fullmatch(body)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() != last.lstrip("-").isdigit():
        return None
    numeric = first.lstrip("-").isdigit()
    a, b = (int(first), int(last)) if numeric else (ord(first), ord(last))
    if abs(b - a) // step > MAX_BRACE_WORDS:
        return [str(i) for i in range(MAX_BRACE_WORDS + 2)]  # too many: the caller refuses
    values = range(a, b + (1 if b >= a else -1), step if b >= a else -step)
    return [str(v) if numeric else chr(v) for v in values]
