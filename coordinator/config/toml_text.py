"""Where a TOML file is broken: ``tomllib``'s syntax error as a message and a place."""

from __future__ import annotations

import re
import tomllib

__all__ = ["toml_error"]

_TOML_AT = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)$")


def toml_error(error: tomllib.TOMLDecodeError, text: str) -> tuple[str, int, int]:
    """A TOML syntax error as (what is wrong, line, column): ``tomllib`` puts the place at
    the end of its message, and "at end of document" is the text's last line and column."""
    message = str(error)
    found = _TOML_AT.search(message)
    if found is None:
        return message, 0, 0
    if found.group(1):
        line, column = int(found.group(1)), int(found.group(2))
    else:
        lines = text.split("\n")
        line, column = len(lines), len(lines[-1]) + 1
    return message[: found.start()], line, column
