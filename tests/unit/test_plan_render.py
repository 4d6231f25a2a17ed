"""Rendering a plan to TOML: ``parse_plan(render_plan(plan)) == plan`` for any valid plan."""

from __future__ import annotations

import tomllib
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.errors import PlanError
from seawall.model import (
    Budgets,
    ChecksPolicy,
    CollisionRisk,
    Enforcement,
    Isolation,
    NotifyConfig,
    OptionValue,
    OverlapPolicy,
    Plan,
    PublishConfig,
    RunnerSpec,
    SessionConfig,
    SessionType,
    Task,
    TaskKind,
    TrackerConfig,
)
from seawall.plan import parse_plan, plan_source, render_plan
from seawall.plan.loader import validate_task_id
from seawall.pricing import Price

#: any text TOML can hold: every code point but the lone surrogates
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
TRICKY = st.sampled_from(
    ['say "hi"', "back\\slash", "two\nlines\r\n", "tab\there", "\x00\x1f\x7f", "émoji 🐍 ✓", "'"]
)
STRINGS = st.one_of(TEXT, TRICKY)
WORDS = st.lists(STRINGS, max_size=3).map(tuple)
IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,12}", fullmatch=True).filter(
    lambda name: validate_task_id(name) is None
)
NUMBERS = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)
COUNTS = st.integers(min_value=1, max_value=10_000)
OPTION_VALUES: st.SearchStrategy[OptionValue] = st.one_of(
    STRINGS, st.integers(0, 2**40), NUMBERS, st.booleans(), WORDS
)
OPTIONS = st.dictionaries(STRINGS, OPTION_VALUES, max_size=3).map(MappingProxyType)
SCOPES = st.lists(st.sampled_from(["src/**", "docs/*.md", "/README.md", "tests/"]), max_size=2)


@st.composite
def sessions(draw: st.DrawFn) -> SessionConfig:
    return SessionConfig(
        name=draw(IDS),
        session_type=draw(st.sampled_from(SessionType)),
        isolation=draw(st.sampled_from(Isolation)),
        enforcement=draw(st.sampled_from(Enforcement)),
        max_turns=draw(st.one_of(st.just("auto"), COUNTS)),
        max_agents_per_wave=draw(COUNTS),
        budgets=Budgets(
            cost_usd=draw(st.none() | NUMBERS),
            tokens=draw(st.none() | COUNTS),
            agent_minutes=draw(NUMBERS),
        ),
        checks=tuple(draw(st.lists(STRINGS.filter(str.strip), max_size=2))),
        checks_policy=draw(st.sampled_from(ChecksPolicy)),
        overlap=draw(st.sampled_from(OverlapPolicy)),
        tracker=TrackerConfig(
            kind=draw(st.sampled_from(["local", "github"])),
            repository=draw(st.none() | STRINGS),
            label=draw(STRINGS),
            options=draw(OPTIONS),
        ),
        sandbox_writable=tuple(draw(st.lists(STRINGS.map(lambda s: "/" + s), max_size=2))),
        prices=MappingProxyType(
            draw(st.dictionaries(STRINGS, st.builds(Price, input=NUMBERS, output=NUMBERS)))
        ),
        publish=draw(st.none() | st.builds(PublishConfig, title=st.none() | STRINGS)),
        notify=draw(st.none() | st.builds(NotifyConfig, url=STRINGS, events=WORDS)),
    )


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    runner_names = draw(st.lists(STRINGS, max_size=2, unique=True))
    runners = {
        name: RunnerSpec(
            name=name,
            kind=draw(st.sampled_from(["command", "claude-code"])),
            argv=draw(WORDS),
            model=draw(st.none() | STRINGS),
            env=MappingProxyType(draw(st.dictionaries(STRINGS, STRINGS, max_size=2))),
            options=draw(OPTIONS),
        )
        for name in runner_names
    }
    agents = st.sampled_from([None, "scripted", *runner_names])
    ids = draw(st.lists(IDS, min_size=1, max_size=4, unique=True))
    tasks = tuple(
        Task(
            id=task_id,
            prompt=draw(STRINGS.filter(str.strip)),
            scope=tuple(draw(SCOPES)),
            depends_on=tuple(draw(st.lists(st.sampled_from(ids[:i]), unique=True))) if i else (),
            kind=draw(st.sampled_from(TaskKind)),
            agent=draw(agents),
            max_turns=draw(st.none() | COUNTS),
            collision_risk=draw(st.sampled_from(CollisionRisk)),
            may_change_nothing=draw(st.booleans()),
        )
        for i, task_id in enumerate(ids)
    )
    session = draw(sessions())
    return Plan(session=session, tasks=tasks, runners=MappingProxyType(runners), path="<plan>")


@settings(max_examples=60, deadline=None)
@given(plans())
def test_a_rendered_plan_parses_back_to_an_equal_plan(plan: Plan) -> None:
    text = render_plan(plan)
    again = parse_plan(text)
    assert again == plan
    assert render_plan(again) == text


@pytest.mark.parametrize(
    "prompt",
    [
        'He said "no".',
        "C:\\path\\to\\x",
        "line one\nline two\n",
        "\t\x00\x08\x1b\x7f",
        "日本語 ü ✓",
    ],
)
def test_tricky_strings_survive_as_toml_basic_strings(prompt: str) -> None:
    plan = Plan(session=SessionConfig(), tasks=(Task(id="t1", prompt=prompt),), path="<plan>")
    text = render_plan(plan)
    assert tomllib.loads(text)["task"][0]["prompt"] == prompt
    assert parse_plan(text).tasks[0].prompt == prompt


def test_the_session_table_writes_the_plan_file_spelling() -> None:
    plan = Plan(
        session=SessionConfig(name="s", session_type=SessionType.DEEP),
        tasks=(Task(id="t1", prompt="p"),),
    )
    text = render_plan(plan)
    assert 'type = "deep"' in text
    assert "session_type" not in text
    assert "scope" not in text  # defaults are left out


def test_a_plan_with_a_source_keeps_it() -> None:
    source = '# hand-written\n[[task]]\nid = "a"\nprompt = "p"\n'
    plan = parse_plan(source)
    assert plan_source(plan) == source
    built = Plan(session=SessionConfig(), tasks=plan.tasks)
    assert parse_plan(plan_source(built)) == plan


def test_an_unwritable_string_names_its_task_and_field() -> None:
    plan = Plan(session=SessionConfig(), tasks=(Task(id="t1", prompt="bad \ud800"),))
    with pytest.raises(PlanError) as caught:
        render_plan(plan)
    assert (caught.value.task, caught.value.field) == ("t1", "prompt")


def test_an_unwritable_option_key_names_its_runner_field() -> None:
    runner = RunnerSpec(name="r", kind="command", options=MappingProxyType({"k\udfff": 1}))
    plan = Plan(session=SessionConfig(), tasks=(Task(id="t1", prompt="p"),), runners={"r": runner})
    with pytest.raises(PlanError) as caught:
        render_plan(plan)
    assert caught.value.field == "runners.r.options.k\udfff"
