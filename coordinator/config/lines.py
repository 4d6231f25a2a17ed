"""Where a field stands in a TOML text: the line a configuration error points to.

``tomllib`` keeps no positions, so the line is found in the text: the key's line in its
table (``[session.budgets]``, the n-th ``[[task]]``), else the line of an enclosing
dotted or inline key (``budgets = { cost_usd = 1 }``), else the table's header. A
field the text does not hold, in a table it does not hold, has no line.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

__all__ = ["field_line", "table_element"]

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r"\"[^\"]*\"|'[^']*'"
_DOTTED = rf"(?:{_BARE}|{_QUOTED})(?:\s*\.\s*(?:{_BARE}|{_QUOTED}))*"
_HEADER = re.compile(rf"^\s*(\[\[?)\s*({_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(rf"^\s*({_DOTTED})\s*=")
_PART = re.compile(rf"{_BARE}|{_QUOTED}")
_SUBSCRIPT = re.compile(r"\[\d+\]")


@dataclass(frozen=True, slots=True)
class _Entry:
    number: int  # 1-based line number
    table: tuple[str, ...]
    element: int | None  # which [[table]] of that name, for an array of tables
    key: tuple[str, ...]  # () for a header line
    text: str


def field_line(text: str, field: str, *, table: str = "", element: int | None = None) -> int | None:
    """The line of ``field`` (dotted, ``session.checks[0]``) in the TOML ``text``.

    ``table`` with ``element`` names one table of an array (``task``, 0 for the first
    ``[[task]]``); ``field`` is then relative to it.
    """
    base = _parts(table) if table else ()
    path = base + _parts(_SUBSCRIPT.sub("", field))
    best: tuple[tuple[int, bool], int] | None = None  # (how much matched, key line), line
    for entry in _scan(text):
        if element is not None and (entry.table != base or entry.element != element):
            continue
        full = entry.table + entry.key
        score = (len(full), bool(entry.key))
        if full and path[: len(full)] == full and (best is None or score > best[0]):
            best = (score, entry.number)
    return None if best is None else best[1]


def table_element(text: str, table: str, key: str, value: str) -> int | None:
    """Which ``[[table]]`` (0-based) sets ``key = value``; the last when several do."""
    base = _parts(table)
    found = None
    for entry in _scan(text):
        if entry.table != base or entry.key != (key,):
            continue
        try:
            written = tomllib.loads(entry.text.strip()).get(key)
        except tomllib.TOMLDecodeError:
            continue
        if written == value:
            found = entry.element
    return found


def _scan(text: str) -> list[_Entry]:
    entries: list[_Entry] = []
    table: tuple[str, ...] = ()
    element: int | None = None
    counts: dict[tuple[str, ...], int] = {}
    open_string: str | None = None  # the quotes of a multi-line string still open
    for number, line in enumerate(text.splitlines(), 1):
        if open_string is not None:
            if line.count(open_string) % 2 == 1:
                open_string = None
            continue
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(2))
            element = None
            if header.group(1) == "[[":
                element = counts[table] = counts.get(table, -1) + 1
            entries.append(_Entry(number, table, element, (), line))
            continue
        key = _KEY.match(line)
        if key is None:
            continue
        entries.append(_Entry(number, table, element, _parts(key.group(1)), line))
        rest = line[key.end() :]
        for quotes in ('"""', "'''"):
            if rest.count(quotes) % 2 == 1:
                open_string = quotes
    return entries


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(part.strip("\"'") for part in _PART.findall(dotted))
