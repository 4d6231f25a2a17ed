"""Where a TOML file is broken, and what would fix it: ``tomllib``'s syntax error as a
message, a place and a hint, for the plan file and the runner's config alike."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

__all__ = ["TomlProblem", "toml_problem"]

_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_AT_END = re.compile(r"\s*\(at end of document\)$")
_ASSIGNED = re.compile(r"^\s*[^=\[]+=\s*[\[{]")


@dataclass(frozen=True, slots=True)
class TomlProblem:
    """A TOML syntax error: what is wrong (lower case, no place), its line and column
    (None when ``tomllib`` named none) and a hint, when one helps."""

    message: str
    line: int | None
    column: int | None
    hint: str | None = None


def toml_problem(error: tomllib.TOMLDecodeError, text: str) -> TomlProblem:
    """``error`` read against ``text``. ``tomllib`` puts the place at the end of its
    message (``(at line 7, column 1)``; ``(at end of document)`` is the text's last
    character); an array or inline table left open is named where it was opened; a bare
    word where a value belongs is shown quoted."""
    message = str(error)
    line = column = None
    hint = None
    found = _AT.search(message)
    if found is not None:
        line, column = int(found.group(1)), int(found.group(2))
        message = message[: found.start()]
    elif (end := _AT_END.search(message)) is not None:
        lines = text.rstrip("\n").split("\n")
        line, column = len(lines), len(lines[-1]) + 1
        message = f"{message[: end.start()]} at the end of the file"
    opened = _unclosed(text) if found is None else None
    if opened is not None:
        line, column, closer = opened
        what = "array" if closer == "]" else "inline table"
        message = f"the {what} opened at line {line} is not closed"
        hint = f"close it with {closer!r}"
    elif line and column and message.lower().startswith("invalid value"):
        rows = text.split("\n")
        rest = rows[line - 1][column - 1 :] if line <= len(rows) else ""
        if rest[:1].isalpha() and not rest.startswith(("true", "false")):
            hint = f'a string needs quotes: "{rest.split()[0]}"'
    return TomlProblem(f"{message[:1].lower()}{message[1:]}", line, column, hint)


def _unclosed(text: str) -> tuple[int, int, str] | None:
    """Where the value (``[`` or ``{`` after ``=``) left open at the end of the text
    opened: its line, column and the character that closes it."""
    depth = 0
    for number, row in reversed(list(enumerate(text.split("\n"), start=1))):
        code = row.split("#", 1)[0]
        depth += code.count("]") + code.count("}") - code.count("[") - code.count("{")
        key = _ASSIGNED.match(code)
        if depth < 0 and key is not None:
            return number, key.end(), "]" if code[key.end() - 1] == "[" else "}"
    return None
