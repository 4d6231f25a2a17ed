"""Compositions of the corpus's classes: a denied command stays denied however it is
wrapped, chained or nested, and benign commands stay allowed when composed."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.corpus.kit import Case, World, build_world, decision_in_process, load_cases

_PLAIN = [
    case
    for case in load_cases()
    if case.tool == "Bash" and case.who == "agent" and case.cwd == "." and not case.tamper
]
BAD = [case for case in _PLAIN if case.expect == "deny"]
# a cd in a nested shell is read as a place later commands may run in (a bound the
# reader keeps on purpose), so benign commands that change directory are not nested
_MOVES = re.compile(r"\b(?:cd|pushd|popd)\b")
GOOD = [
    c for c in _PLAIN if c.expect == "allow" and not _MOVES.search(str(c.tool_input["command"]))
]

WRAPS = (
    "bash -c {q}",
    "sh -c {q}",
    "(\n{c}\n)",
    "{{\n{c}\n}}",
    "true && {c}",
    "true\n{c}",
    "if true; then\n{c}\nfi",
    'echo "$(\n{c}\n)"',
    "timeout 5 bash -c {q}",
    "env -i bash -c {q}",
)


SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _wrap(command: str, shapes: list[str]) -> str:
    for shape in shapes:
        command = shape.format(c=command, q=shlex.quote(command))
    return command


def _bash(case: Case, command: str) -> Case:
    return replace(case, tool_input={"command": command})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("corpus-properties"))


@pytest.mark.slow
@SETTINGS
@given(
    bad=st.sampled_from(BAD),
    good=st.sampled_from(GOOD),
    shapes=st.lists(st.sampled_from(WRAPS), max_size=3),
    bad_first=st.booleans(),
)
def test_a_denied_command_stays_denied_in_any_composition(
    world: World, bad: Case, good: Case, shapes: list[str], bad_first: bool
) -> None:
    inner = _wrap(str(bad.tool_input["command"]), shapes)
    parts = [inner, str(good.tool_input["command"])]
    command = "\n".join(parts if bad_first else reversed(parts))
    got, reason = decision_in_process(world, _bash(bad, command))
    assert got == "deny", (command, reason)


@pytest.mark.slow
@SETTINGS
@given(
    goods=st.lists(st.sampled_from(GOOD), min_size=1, max_size=3),
    shapes=st.lists(st.sampled_from(WRAPS), max_size=2),
)
def test_benign_commands_stay_allowed_when_composed(
    world: World, goods: list[Case], shapes: list[str]
) -> None:
    command = "\n".join(_wrap(str(case.tool_input["command"]), shapes) for case in goods)
    got, reason = decision_in_process(world, _bash(goods[0], command))
    assert got == "allow", (command, reason)
