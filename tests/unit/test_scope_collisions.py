"""The pre-dispatch collision check and what an in-place wave does about overlaps."""

from __future__ import annotations

import pytest

from seawall.model import Enforcement, Isolation, OverlapPolicy, Task, Wave
from seawall.scope.collisions import OverlapKind, check_pair, plan_collisions


def task(task_id: str, *scope: str) -> Task:
    return Task(id=task_id, prompt=task_id, scope=scope)


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        (("src/a.py",), ("src/a.py",), OverlapKind.CONCRETE),
        (("src/",), ("src/a.py",), OverlapKind.CONCRETE),
        (("src/**/*.py",), ("src/x/a.py",), OverlapKind.CONCRETE),
        (("src/",), ("src/lib/",), OverlapKind.CONCRETE),
        (("src/**/*.py",), ("src/**/test_*",), OverlapKind.GLOB_PREFIX),
        (("src/",), ("src/**/*.md",), OverlapKind.GLOB_PREFIX),
        (("src/a.py",), ("src/b.py",), OverlapKind.DISJOINT),
        (("src/",), ("srcx/",), OverlapKind.DISJOINT),
        (("src/**/*.py",), ("docs/*.md",), OverlapKind.DISJOINT),
        (("src/*.py",), ("src/a.txt",), OverlapKind.DISJOINT),
        ((), ("src/",), OverlapKind.DISJOINT),
    ],
)
def test_pairs_are_classified(a: tuple[str, ...], b: tuple[str, ...], kind: OverlapKind) -> None:
    overlap = check_pair(task("a", *a), task("b", *b))
    assert overlap.kind is kind
    assert overlap.where if kind is not OverlapKind.DISJOINT else not overlap.where


def wave(isolation: Isolation, *tasks: Task) -> Wave:
    return Wave(
        number=4, tasks=tasks, isolation=isolation, enforcement=Enforcement.STRICT, max_turns=15
    )


TASKS = (
    task("t1", "src/core/"),
    task("t2", "src/core/io.py"),
    task("t3", "docs/"),
    task("t4", "src/core/util.py"),
)


def test_in_place_overlaps_split_into_sequential_sub_waves() -> None:
    report = plan_collisions(wave(Isolation.NONE, *TASKS), policy=OverlapPolicy.SPLIT)
    assert [w.task_ids for w in report.waves] == [("t1", "t3"), ("t2", "t4")]
    assert all(w.isolation is Isolation.NONE for w in report.waves)
    assert "split: tasks with overlapping scopes wait for a later wave" in report.lines()[0]
    assert any("t1 x t2: concrete overlap (src/core/io.py)" in line for line in report.lines())
    assert "  wave 4 runs t1, t3" in report.lines()
    assert "  a later wave runs t2, t4" in report.lines()


def test_in_place_overlaps_move_to_worktrees_when_configured() -> None:
    report = plan_collisions(wave(Isolation.NONE, *TASKS), policy=OverlapPolicy.WORKTREE)
    (moved,) = report.waves
    assert moved.isolation is Isolation.WORKTREE
    assert moved.task_ids == ("t1", "t2", "t3", "t4")
    assert report.action == "moved to worktrees"


def test_worktree_waves_keep_their_overlaps() -> None:
    report = plan_collisions(wave(Isolation.WORKTREE, *TASKS), policy=OverlapPolicy.SPLIT)
    assert len(report.waves) == 1
    assert len(report.colliding) == 2


def test_disjoint_scopes_run_as_planned() -> None:
    tasks = (task("a", "src/a/"), task("b", "src/b/"), task("c", "docs/c.md"))
    original = wave(Isolation.NONE, *tasks)
    report = plan_collisions(original, policy=OverlapPolicy.SPLIT)
    assert report.waves == (original,)
    assert report.colliding == ()
    assert report.lines() == ["wave 4: scope check (none): scopes are disjoint"]
