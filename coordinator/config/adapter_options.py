"""An adapter's ``options`` table checked against the options it declares.

One mechanism for both kinds of adapter: ``[session.tracker.options]`` (see
``seawall.tracker.tracker_options``) and a runner's ``[runners.NAME] options``
(see ``seawall.runner.runner_options``). Values are typed TOML values
(``OptionValue``: a string, integer, float, boolean or list of strings).
"""

from __future__ import annotations

from collections.abc import Mapping

from seawall.config.fields import suggest
from seawall.errors import ConfigurationError
from seawall.model import OptionValue

__all__ = ["OptionTypes", "check_options", "options_text"]

OptionTypes = Mapping[str, type | tuple[type, ...]]
"""Each option an adapter accepts, mapped to its type(s): ``str``, ``int``, ``float``,
``bool`` or ``tuple`` (a list of strings)."""


def check_options(
    options: Mapping[str, OptionValue],
    known: OptionTypes,
    *,
    field: str,
    owner: str,
    numeric_text: bool = False,
) -> dict[str, OptionValue]:
    """``options`` checked against ``known``: an unknown key or a wrong type is a
    ``ConfigurationError`` naming ``FIELD.KEY`` (with the nearest known key suggested).

    An integer is accepted where a float is (and converted). With ``numeric_text`` a
    number option also accepts its decimal text (``"2.5"``), as older plans wrote it.
    """
    out: dict[str, OptionValue] = {}
    for key, value in options.items():
        where = f"{field}.{key}"
        if key not in known:
            hint = suggest(key, known)
            names = ", ".join(sorted(known)) or "none"
            raise ConfigurationError(f"{where}: unknown option for {owner}{hint} (known: {names})")
        wanted = known[key]
        types_: tuple[type, ...] = wanted if isinstance(wanted, tuple) else (wanted,)
        out[key] = _typed(value, types_, where, numeric_text=numeric_text)
    return out


def _typed(
    value: OptionValue, types_: tuple[type, ...], where: str, *, numeric_text: bool
) -> OptionValue:
    if numeric_text and isinstance(value, str) and str not in types_:
        number = _number(value, int if int in types_ and float not in types_ else float)
        if number is not None:
            value = number
    if float in types_ and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if (isinstance(value, bool) and bool not in types_) or not isinstance(value, types_):
        shown = " or ".join("a list of strings" if t is tuple else t.__name__ for t in types_)
        raise ConfigurationError(f"{where}: must be {shown}, not {value!r}")
    return value


def _number(text: str, kind: type[int] | type[float]) -> int | float | None:
    try:
        return kind(text.strip())
    except ValueError:
        return None


def options_text(options: Mapping[str, OptionValue], *, field: str) -> dict[str, str]:
    """``options`` as text, for a runner that parses its own option strings: numbers
    become their decimal text; a boolean or a list is a ``ConfigurationError`` naming
    ``FIELD.KEY``."""
    out: dict[str, str] = {}
    for key, value in options.items():
        if isinstance(value, bool | tuple):
            raise ConfigurationError(f"{field}.{key}: must be a string or number, not {value!r}")
        out[key] = str(value)
    return out
