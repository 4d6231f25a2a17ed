"""What a task's sparse checkout holds, and the cone-mode patterns git is given."""

from __future__ import annotations

import pytest

from seawall.errors import PlanError
from seawall.git.sparse import ALWAYS, cone_patterns, sparse_dirs, task_sparse_dirs
from seawall.model import SessionConfig, Task
from seawall.plan import parse_plan
from seawall.plan.render import render_plan


@pytest.mark.parametrize(
    ("scope", "reads", "expected"),
    [
        (["src/a/"], [], ("src/a",)),
        (["src/a/mod.py"], [], ("src/a",)),
        (["src/pkg/**/*.py"], ["docs/api/"], ("docs/api", "src/pkg")),
        (["src/"], ["src/a/", "src/b/x.py"], ("src",)),  # inner folders fold into src
        (["README.md", "*.toml"], ["lib/"], ("lib",)),  # top-level files need no folder
        (["/tmp/cache/"], ["lib/"], ("lib",)),  # an absolute grant is outside the repo
    ],
)
def test_a_task_needs_the_folders_of_its_scope_and_reads(
    scope: list[str], reads: list[str], expected: tuple[str, ...]
) -> None:
    assert sparse_dirs(scope, reads) == tuple(sorted({*ALWAYS, *expected}))


def test_patterns_that_match_anywhere_or_no_paths_mean_the_whole_tree() -> None:
    assert sparse_dirs(["**/*.py"]) is None
    assert sparse_dirs(["src/a/"], shared=["**/conftest.py"]) is None
    assert sparse_dirs([], []) is None  # a read-only task that declares nothing
    assert sparse_dirs([], ["docs/"]) == (".claude", "docs")


def test_the_sessions_reads_join_every_tasks_set() -> None:
    assert sparse_dirs(["src/a/"], shared=["tests/", "tools/ci/run.sh"]) == (
        ".claude",
        "src/a",
        "tests",
        "tools/ci",
    )


def test_cone_patterns_list_each_parent_with_its_own_files_only() -> None:
    assert cone_patterns(("lib", "src/pkg/core")).splitlines() == [
        "/*",
        "!/*/",
        "/lib/",
        "/src/",
        "!/src/*/",
        "/src/pkg/",
        "!/src/pkg/*/",
        "/src/pkg/core/",
    ]
    assert cone_patterns(("we?ird",)).splitlines()[-1] == "/we\\?ird/"


def test_sparse_is_chosen_by_the_task_else_the_session() -> None:
    task = Task(id="a", prompt="p", scope=("src/a/",))
    assert task_sparse_dirs(task, SessionConfig()) is None  # off by default
    assert task_sparse_dirs(task, SessionConfig(sparse=True)) == (".claude", "src/a")
    whole = Task(id="b", prompt="p", scope=("src/a/",), sparse=False)
    assert task_sparse_dirs(whole, SessionConfig(sparse=True)) is None
    one = Task(id="c", prompt="p", scope=("src/a/",), sparse=True)
    assert task_sparse_dirs(one, SessionConfig(reads=("tests/",))) == (".claude", "src/a", "tests")


PLAN = """\
[session]
name = "s"
sparse = true
reads = ["tests/"]

[[task]]
id = "a"
prompt = "Do a."
scope = ["src/a/"]
reads = ["src/shared/"]
sparse = false
"""


def test_plan_fields_parse_and_render_back() -> None:
    plan = parse_plan(PLAN, path="plan.toml")
    assert plan.session.sparse is True and plan.session.reads == ("tests/",)
    task = plan.tasks[0]
    assert task.reads == ("src/shared/",) and task.sparse is False
    assert parse_plan(render_plan(plan)) == parse_plan(PLAN)


@pytest.mark.parametrize(
    ("old", "new", "line", "field"),
    [
        ('reads = ["src/shared/"]', 'reads = ["src/../x"]', 10, "reads[0]"),
        ('reads = ["tests/"]', 'reads = ["tests//unit"]', 4, "session.reads[0]"),
        ("sparse = false", 'sparse = "no"', 11, "sparse"),
    ],
)
def test_bad_reads_and_sparse_values_name_file_line_and_field(
    old: str, new: str, line: int, field: str
) -> None:
    with pytest.raises(PlanError) as caught:
        parse_plan(PLAN.replace(old, new), path="plan.toml")
    message = str(caught.value)
    assert f"plan.toml:{line}" in message and field in message, message
