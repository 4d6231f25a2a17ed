"""Plan files: every error names the file, task and field; waves are deterministic."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from seawall.errors import ConfigurationError, PlanError
from seawall.model import (
    Enforcement,
    Isolation,
    SessionType,
    Task,
    TaskKind,
    Wave,
)
from seawall.plan import load_plan, parse_plan, plan_waves
from seawall.plan.waves import make_wave

ROOT = Path(__file__).resolve().parents[2]

BASE = """
[session]
name = "s1"

[[task]]
id = "a"
prompt = "do a"
scope = ["src/a.py"]
"""


def plan_text(*tasks: str, session: str = 'name = "s1"') -> str:
    return f"[session]\n{session}\n" + "".join(f"\n[[task]]\n{t}\n" for t in tasks)


def test_minimal_plan_defaults() -> None:
    plan = parse_plan(BASE)
    assert plan.session.name == "s1"
    assert plan.session.session_type is SessionType.FEATURE
    assert plan.tasks[0].kind is TaskKind.IMPLEMENT
    assert plan.tasks[0].scope == ("src/a.py",)


def test_quickstart_example_is_valid_and_has_three_waves() -> None:
    plan = load_plan(ROOT / "examples" / "quickstart" / "plan.toml")
    waves = plan_waves(plan)
    assert len(plan.tasks) >= 6
    assert len(waves) >= 3
    assert waves[0].task_ids == ("config-loader", "db-models")


@pytest.mark.parametrize(
    ("text", "task", "field", "fragment"),
    [
        (
            plan_text('id="a"\nprompt="x"', session='isolation = "worktre"'),
            None,
            "session.isolation",
            "did you mean 'worktree'",
        ),
        (
            plan_text('id="a"\nprompt="x"', session='enforcment = "warn"'),
            None,
            "session.enforcment",
            "did you mean 'enforcement'",
        ),
        (
            plan_text('id="a"\nprompt="x"', session='type = "huge"'),
            None,
            "session.session_type",
            "housekeeping, feature, deep",
        ),
        (
            plan_text('id="a"\nprompt="x"', session="max_turns = 0"),
            None,
            "session.max_turns",
            "at least 1",
        ),
        (
            plan_text('id="a"\nprompt="x"', session='max_turns = "lots"'),
            None,
            "session.max_turns",
            "'auto'",
        ),
        (
            plan_text('id="a"\nprompt="x"', session="max_agents_per_wave = 0"),
            None,
            "session.max_agents_per_wave",
            "at least 1",
        ),
        (
            plan_text('id="a"\nprompt="x"', session='[session.budgets]\ncost_usd = "ten"'),
            None,
            "session.budgets.cost_usd",
            "number",
        ),
        (
            plan_text('id="a"\nprompt="x"', session="[session.breakers]\nmax_loops = 3"),
            None,
            "session.breakers.max_loops",
            "unknown key",
        ),
        (plan_text('id="a"\nprompt="x"\nscop = ["x"]'), "a", "scop", "did you mean 'scope'"),
        (plan_text('id="a"\nprompt="x"', 'id="a"\nprompt="y"'), "a", "id", "duplicate"),
        (
            plan_text('id="a"\nprompt="x"\ndepends_on = ["b"]'),
            "a",
            "depends_on[0]",
            "unknown dependency 'b'",
        ),
        (plan_text('id="a"\nprompt="x"\ndepends_on = ["a"]'), "a", "depends_on[0]", "itself"),
        (plan_text('id="a"\nprompt="   "'), "a", "prompt", "empty"),
        (plan_text('id="a"'), "a", "prompt", "prompt"),
        (plan_text('id="../x"\nprompt="x"'), "../x", "id", "not a safe id"),
        (plan_text('id="a b"\nprompt="x"'), "a b", "id", "not a safe id"),
        (plan_text('id="x.lock"\nprompt="x"'), "x.lock", "id", "'.lock'"),
        (plan_text('id="a..b"\nprompt="x"'), "a..b", "id", "'..'"),
        (plan_text('prompt="x"'), "#1", "id", "missing"),
        (plan_text('id="a"\nprompt="x"\nscope = ["src/**.py"]'), "a", "scope[0]", "whole path"),
        (plan_text('id="a"\nprompt="x"\nscope = ["src/[ab].py"]'), "a", "scope[0]", "unsupported"),
        (plan_text('id="a"\nprompt="x"\nscope = ["src/../etc"]'), "a", "scope[0]", "'..'"),
        (plan_text('id="a"\nprompt="x"\nscope = ["src//a"]'), "a", "scope[0]", "empty path"),
        (plan_text('id="a"\nprompt="x"\nscope = [""]'), "a", "scope[0]", "empty"),
        (plan_text('id="a"\nprompt="x"\nscope = "src/"'), "a", "scope", "list"),
        (plan_text('id="a"\nprompt="x"\nkind = "tester"'), "a", "kind", "test-writer"),
        (
            plan_text('id="a"\nprompt="x"\ncollision_risk = "extreme"'),
            "a",
            "collision_risk",
            "low, medium, high",
        ),
        (plan_text('id="a"\nprompt="x"\nagent = "nobody"'), "a", "agent", "unknown runner"),
        (plan_text('id="a"\nprompt="x"\nmax_turns = 0'), "a", "max_turns", "at least 1"),
    ],
)
def test_plan_errors_name_file_task_and_field(
    text: str, task: str | None, field: str, fragment: str
) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan(text, path="plans/p.toml")
    error = info.value
    assert error.path == "plans/p.toml"
    assert error.task == task
    assert error.field == field
    assert fragment in str(error)
    assert str(error).startswith("plans/p.toml")
    assert isinstance(error, ConfigurationError)


LINED = """\
[session]
name = "s1"
{session}

[[task]]
id = "a"
prompt = "x"

[[task]]
id = "b"
prompt = "y"
{task}
"""


@pytest.mark.parametrize(
    ("session", "task", "line"),
    [
        ('isolation = "worktre"', "", 3),
        ('type = "huge"', "", 3),  # reported as session.session_type, written as type
        ('budgets = { cost_usd = "ten" }', "", 3),
        ("", 'scop = ["x"]', 12),
        ("", 'depends_on = ["zz"]', 12),
        ("", 'scope = ["src/**.py"]', 12),
        ("", 'agent = "nobody"', 12),
        ("[session.breakers]\nmax_loops = 3", "", 4),
    ],
)
def test_plan_errors_name_the_line(session: str, task: str, line: int) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan(LINED.format(session=session, task=task), path="plans/p.toml")
    assert info.value.line == line
    assert str(info.value).startswith(f"plans/p.toml:{line}, ")


def test_a_duplicate_task_points_to_the_second_one() -> None:
    text = plan_text('id="a"\nprompt="x"', 'id="a"\nprompt="y"')
    with pytest.raises(PlanError) as info:
        parse_plan(text, path="p.toml")
    assert info.value.line == text.splitlines().index('id="a"', 5) + 1


def test_cycle_is_named() -> None:
    text = plan_text(
        'id="a"\nprompt="x"\ndepends_on=["c"]',
        'id="b"\nprompt="x"\ndepends_on=["a"]',
        'id="c"\nprompt="x"\ndepends_on=["b"]',
    )
    with pytest.raises(
        PlanError,
        match=r"dependency cycle: (a -> b -> c -> a|b -> c -> a -> b|"
        r"c -> a -> b -> c)",
    ):
        parse_plan(text)


def test_unknown_top_level_table() -> None:
    with pytest.raises(PlanError, match=r"tasks.*did you mean 'task'"):
        parse_plan('[session]\nname="s"\n[[tasks]]\nid="a"\nprompt="x"\n')


def test_invalid_toml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="not valid TOML"):
        parse_plan("[session\n")
    with pytest.raises(PlanError, match="no such plan file"):
        load_plan(tmp_path / "missing.toml")


def test_no_tasks() -> None:
    with pytest.raises(PlanError, match="no \\[\\[task\\]\\]"):
        parse_plan('[session]\nname = "s"\n')


def test_runner_table() -> None:
    plan = parse_plan(
        '[session]\nname="s"\nagent="mine"\n[runners.mine]\nkind="command"\n'
        'argv=["python","agent.py"]\nenv={MODE="fast"}\n' + '[[task]]\nid="a"\nprompt="x"\n'
    )
    assert plan.runners["mine"].argv == ("python", "agent.py")
    assert plan.runners["mine"].env["MODE"] == "fast"
    with pytest.raises(PlanError, match=r"runners\.mine.*missing 'kind'"):
        parse_plan('[runners.mine]\nargv=["x"]\n[[task]]\nid="a"\nprompt="x"\n')


def test_waves_follow_dependencies_in_plan_order() -> None:
    text = plan_text(
        'id="z"\nprompt="x"',
        'id="b"\nprompt="x"\ndepends_on=["z"]',
        'id="a"\nprompt="x"',
        'id="c"\nprompt="x"\ndepends_on=["b","a"]',
    )
    waves = plan_waves(parse_plan(text))
    assert [w.task_ids for w in waves] == [("z", "a"), ("b",), ("c",)]
    assert [w.number for w in waves] == [1, 2, 3]


def test_generation_split_at_wave_cap() -> None:
    tasks = [f'id="t{i}"\nprompt="x"' for i in range(7)]
    waves = plan_waves(parse_plan(plan_text(*tasks, session="max_agents_per_wave = 3")))
    assert [len(w.tasks) for w in waves] == [3, 3, 1]
    assert waves[0].task_ids == ("t0", "t1", "t2")


@pytest.mark.parametrize(("kind", "turns"), [("housekeeping", 8), ("feature", 15), ("deep", 25)])
def test_auto_max_turns(kind: str, turns: int) -> None:
    waves = plan_waves(parse_plan(plan_text('id="a"\nprompt="x"', session=f'type="{kind}"')))
    assert waves[0].max_turns == turns


def test_explicit_max_turns() -> None:
    waves = plan_waves(parse_plan(plan_text('id="a"\nprompt="x"', session="max_turns = 9")))
    assert waves[0].max_turns == 9


def test_wave_isolation_resolved_with_reason() -> None:
    tasks = [f'id="t{i}"\nprompt="x"' for i in range(5)]
    waves = plan_waves(parse_plan(plan_text(*tasks)))
    assert waves[0].isolation is Isolation.WORKTREE
    assert waves[0].isolation_reason
    small = plan_waves(parse_plan(plan_text('id="a"\nprompt="x"')))
    assert small[0].isolation is Isolation.NONE
    assert str(small[0].enforcement) == "strict"  # in place promotes warn
    risky = plan_waves(parse_plan(plan_text('id="a"\nprompt="x"\ncollision_risk="high"')))
    assert risky[0].isolation is Isolation.WORKTREE


def test_plan_is_deterministic() -> None:
    tasks = []
    for i in range(12):
        deps = ", ".join(f'"t{j}"' for j in range(i % 3))
        tasks.append(f'id="t{i}"\nprompt="x"\ndepends_on=[{deps}]')
    text = plan_text(*tasks)
    first = [w.task_ids for w in plan_waves(parse_plan(text))]
    for _ in range(5):
        assert [w.task_ids for w in plan_waves(parse_plan(text))] == first


def test_waves_of_one_shape_share_its_decision_under_their_own_numbers() -> None:
    tasks = [f'id="t{i}"\nprompt="x"' + (f'\ndepends_on=["t{i - 2}"]' if i > 1 else "")
             for i in range(8)]  # fmt: skip
    waves = plan_waves(parse_plan(plan_text(*tasks)))
    assert [w.task_ids for w in waves] == [("t0", "t1"), ("t2", "t3"), ("t4", "t5"), ("t6", "t7")]
    assert [w.number for w in waves] == [1, 2, 3, 4]
    decisions = {(w.isolation, w.enforcement, w.max_turns, w.isolation_reason,
                  w.enforcement_reason) for w in waves}  # fmt: skip
    assert len(decisions) == 1


def test_runner_script_paths_are_relative_to_the_plan(tmp_path: Path) -> None:
    plan = tmp_path / "plans" / "p.toml"
    plan.parent.mkdir()
    plan.write_text(
        '[session]\nname = "s"\nagent = "s"\n[runners.s]\nkind = "scripted"\n'
        'options = { script = "scripts.toml" }\n[[task]]\nid = "a"\nprompt = "x"\n'
    )
    loaded = load_plan(plan)
    assert loaded.runners["s"].options["script"] == str(tmp_path / "plans" / "scripts.toml")


def test_every_planned_wave_is_what_deciding_it_alone_gives() -> None:
    risks = ("low", "medium", "high")
    tasks = []
    for i in range(40):
        deps = f'\ndepends_on=["t{i - 7}"]' if i >= 7 else ""
        tasks.append(f'id="t{i}"\nprompt="x"\ncollision_risk="{risks[i * 7 % 5 % 3]}"{deps}')
    plan = parse_plan(plan_text(*tasks).replace("[session]", "[session]\nmax_agents_per_wave = 3"))
    waves = plan_waves(plan, first_wave=4)
    assert [w.number for w in waves] == list(range(4, 4 + len(waves)))
    assert len({len(w.tasks) for w in waves}) > 1
    assert len({w.isolation for w in waves}) > 1
    for wave in waves:
        assert wave == make_wave(wave.tasks, plan.session, number=wave.number)


def test_a_renumbered_wave_is_the_wave_with_its_number_and_tasks_replaced() -> None:
    plan = parse_plan(plan_text('id="a"\nprompt="x"', 'id="b"\nprompt="y"'))
    (wave,) = plan_waves(plan)
    other = (plan.tasks[1],)
    again = wave.renumbered(9, other)
    assert again == dataclasses.replace(wave, number=9, tasks=other)
    assert wave.renumbered(9, other) == again
    with pytest.raises(dataclasses.FrozenInstanceError):
        again.number = 1  # type: ignore[misc]


def test_a_renumbered_wave_keeps_every_decision_of_the_wave() -> None:
    like = Wave(
        number=1, tasks=(Task(id="a", prompt="x"),), isolation=Isolation.WORKTREE,
        enforcement=Enforcement.STRICT, max_turns=7, isolation_reason="why",
        enforcement_reason="how",
    )  # fmt: skip
    for spec in dataclasses.fields(Wave):  # every field set apart from its default
        assert getattr(like, spec.name) != spec.default, spec.name
    tasks = (Task(id="b", prompt="y"),)
    assert like.renumbered(4, tasks) == dataclasses.replace(like, number=4, tasks=tasks)
