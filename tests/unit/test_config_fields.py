"""The one configuration validator: typed fields, rules, text values, suggestions, lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from seawall.config import (
    FieldError,
    build,
    check_keys,
    field_line,
    ruled,
    suggest,
    table_element,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    retries: int = ruled(3, minimum=1)
    window: float = ruled(60.0, above=0)
    grace: float = 0.0
    label: str | None = ruled(None, nonempty=True)
    command: tuple[str, ...] = ruled((), nonempty=True, words=True)
    paths: tuple[str, ...] = ()
    home: Path | None = None
    verbose: bool = False


def test_typed_values_are_converted_and_checked() -> None:
    limits = build(
        Limits,
        {
            "retries": 2,
            "window": 5,
            "label": " queue ",
            "command": "python3 -m tool --flag 'a b'",
            "paths": ["a", "b"],
            "home": "/srv",
            "verbose": True,
        },
    )
    assert limits == Limits(
        retries=2,
        window=5.0,
        label="queue",
        command=("python3", "-m", "tool", "--flag", "a b"),
        paths=("a", "b"),
        home=Path("/srv"),
        verbose=True,
    )


def test_text_values_are_parsed_into_the_field_type() -> None:
    limits = build(
        Limits,
        {"retries": " 4 ", "window": "0.5", "paths": "x 'y z'", "verbose": "true"},
        text=True,
    )
    assert (limits.retries, limits.window, limits.paths, limits.verbose) == (
        4,
        0.5,
        ("x", "y z"),
        True,
    )


@pytest.mark.parametrize(
    ("table", "text", "field", "message"),
    [
        ({"retries": 0}, False, "limits.retries", "must be at least 1, got 0"),
        ({"retries": 1.5}, False, "limits.retries", "must be a whole number, got 1.5"),
        ({"retries": True}, False, "limits.retries", "must be a whole number, not a boolean"),
        ({"retries": "2.5"}, True, "limits.retries", "must be a whole number, got '2.5'"),
        ({"retries": "2"}, False, "limits.retries", "must be a whole number, not a string"),
        ({"window": 0}, False, "limits.window", "must be greater than 0, got 0"),
        ({"window": "nan"}, True, "limits.window", "must be a finite number"),
        ({"window": float("inf")}, False, "limits.window", "must be a finite number"),
        ({"grace": -1}, False, "limits.grace", "must not be negative, got -1"),
        ({"label": "  "}, False, "limits.label", "must be a non-empty string"),
        ({"command": []}, False, "limits.command", "must not be empty"),
        ({"command": "'open"}, False, "limits.command", "not a valid command line"),
        ({"command": 3}, False, "limits.command", "a command line or a list of strings"),
        ({"paths": "a b"}, False, "limits.paths", "must be a list, not a string"),
        ({"paths": ["a", 3]}, False, "limits.paths[1]", "must be a string, not an integer"),
        ({"home": ""}, False, "limits.home", "must be a non-empty path"),
        ({"verbose": "yes"}, True, "limits.verbose", "must be true or false"),
        ({"retrys": 2}, False, "limits.retrys", "unknown key; did you mean 'retries'?"),
        ({"zzz": 2}, False, "limits.zzz", "unknown key; known keys: retries, window, grace"),
    ],
)
def test_errors_name_the_field_and_what_it_wants(
    table: dict[str, object], text: bool, field: str, message: str
) -> None:
    with pytest.raises(FieldError) as info:
        build(Limits, table, "limits.", text=text)
    assert info.value.field == field
    assert message in info.value.message


def test_suggestions_are_spelled_as_the_user_types_them() -> None:
    assert suggest("retrys", ["retries", "window"]) == "; did you mean 'retries'?"
    assert suggest("qqq", ["retries", "window"]) == ""
    with pytest.raises(FieldError, match="did you mean 'APP_RETRIES'") as info:
        check_keys({"retrys": "1"}, ["retries"], what="setting", spell=lambda k: f"APP_{k.upper()}")
    assert info.value.message.startswith("unknown setting")


PLAN = """\
# a plan
[session]
name = "s1"
budgets = { cost_usd = 3 }
checks = [
  "make test",
]

[session.breakers]
max_repeat_identical = 4

[[task]]
id = "a"
prompt = '''
scope = ["not a key"]
'''

[[task]]
id = "b"
"prompt" = "y"
scope = ["src/"]
"""


@pytest.mark.parametrize(
    ("field", "table", "element", "line"),
    [
        ("session.name", "", None, 3),
        ("session.budgets.cost_usd", "", None, 4),  # inside an inline table
        ("session.checks[0]", "", None, 5),
        ("session.breakers.max_repeat_identical", "", None, 10),
        ("session.breakers.max_tool_calls", "", None, 9),  # not written: its table
        ("session.isolation", "", None, 2),
        ("scope[0]", "task", 1, 21),
        ("prompt", "task", 1, 20),  # a quoted key
        ("scope", "task", 0, 12),  # the text of a multi-line string is not a key
        ("", "task", 1, 18),
        ("runners.mine.kind", "", None, None),
    ],
)
def test_a_field_is_found_on_its_line(
    field: str, table: str, element: int | None, line: int | None
) -> None:
    assert field_line(PLAN, field, table=table, element=element) == line


def test_an_array_element_is_found_by_a_key_it_sets() -> None:
    assert table_element(PLAN, "task", "id", "b") == 1
    assert table_element(PLAN, "task", "id", "a") == 0
    assert table_element(PLAN, "task", "id", "c") is None
    twice = '[[task]]\nid = "a"\n[[task]]\nid = "a"\n'
    assert table_element(twice, "task", "id", "a") == 1  # the later one is the duplicate
