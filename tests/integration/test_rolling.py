"""Rolling sessions end to end: each task starts as soon as what it needs has landed,
each finished agent is reviewed and merged on its own, in the order agents finished."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seawall.state.store import StateStore
from tests.integration.sessionkit import make_repo, seawall, show, status, write_plan


def _spec(tmp_path: Path, agents: dict[str, list[dict[str, Any]]]) -> Path:
    spec = tmp_path / "agents.json"
    spec.write_text(json.dumps(agents))
    return spec


def _run(tmp_path: Path, repo: Path, plan: Path, spec: Path, *args: str) -> str:
    done = seawall(
        "run", str(plan), "--repo", str(repo), *args, cwd=repo, env={"AGENT_SPEC": str(spec)}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_a_dependant_starts_once_its_dependency_landed_not_when_the_slow_one_ends(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = _spec(
        tmp_path,
        {
            "slow": [{"writes": {"slow/s.txt": "s\n"}, "sleep": 4, "final": "STATUS: done — s"}],
            "quick": [{"writes": {"lib/q.txt": "q\n"}, "final": "STATUS: done — q"}],
            "after": [{"writes": {"app/a.txt": "a\n"}, "final": "STATUS: done — a"}],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "roll"\nschedule = "rolling"\nmax_agents = 4',
        tasks=[
            {"id": "slow", "prompt": "s", "scope": ["slow/"]},
            {"id": "quick", "prompt": "q", "scope": ["lib/"]},
            {"id": "after", "prompt": "a", "scope": ["app/"], "depends_on": ["quick"]},
        ],
    )
    _run(tmp_path, repo, plan, spec)
    data = status(repo)
    state = StateStore(repo, data["session"]).load()
    by_task = {wave.tasks[0].id: wave for wave in state.waves}
    assert sorted(by_task) == ["after", "quick", "slow"]
    assert all(len(wave.tasks) == 1 for wave in state.waves)  # one dispatch per record
    slow, quick, after = by_task["slow"], by_task["quick"], by_task["after"]
    # the dependant started after its dependency landed, while the slow agent still ran
    assert quick.merged_at > 0 and after.started_at >= quick.merged_at
    assert after.started_at < slow.ended_at
    # each dispatch has its own base: the dependant's base holds its dependency's merge
    assert after.base == quick.target_after
    assert show(repo, after.base, "lib/q.txt") == "q\n"
    # running beside others, every agent got a worktree, and says why
    assert {w.isolation for w in state.waves} == {"worktree"}
    assert "beside" in slow.isolation_reason
    for path, content in {"slow/s.txt": "s\n", "lib/q.txt": "q\n", "app/a.txt": "a\n"}.items():
        assert show(repo, "main", path) == content
    # merged in the order agents finished: the slow one last
    assert max(w.merged_at for w in state.waves) == slow.merged_at
    assert state.phase == "done"


def test_an_agent_alone_runs_in_place_and_a_chain_lands_link_by_link(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = _spec(
        tmp_path,
        {
            "one": [{"writes": {"a/one.txt": "1\n"}, "final": "STATUS: done — 1"}],
            "two": [{"writes": {"a/two.txt": "2\n"}, "final": "STATUS: done — 2"}],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "chain"\nschedule = "rolling"',
        tasks=[
            {"id": "one", "prompt": "1", "scope": ["a/one.txt"]},
            {"id": "two", "prompt": "2", "scope": ["a/two.txt"], "depends_on": ["one"]},
        ],
    )
    _run(tmp_path, repo, plan, spec)
    state = StateStore(repo, status(repo)["session"]).load()
    one, two = state.waves
    assert (one.isolation, two.isolation) == ("none", "none")
    assert "runs alone" in one.isolation_reason
    assert two.base == one.target_after
    assert show(repo, "main", "a/two.txt") == "2\n"


def test_the_old_cap_key_still_works_and_both_names_at_once_is_an_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "both"\nmax_agents = 2\nmax_agents_per_wave = 3',
        tasks=[{"id": "t", "prompt": "t", "scope": ["t/"]}],
    )
    done = seawall("plan", str(plan), cwd=repo)
    assert done.returncode != 0
    assert "max_agents" in done.stderr and "old name" in done.stderr
