"""Rolling sessions end to end: each task starts as soon as what it needs has landed,
each finished agent is reviewed and merged on its own, in the order agents finished."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema

from seawall.session.step_types import load_schema
from seawall.state.store import StateStore
from seawall.telemetry import RepoStateChanged, read_events
from tests.integration.sessionkit import git, make_repo, seawall, show, status, write_plan


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
    out = _run(tmp_path, repo, plan, spec)
    data = status(repo)
    state = StateStore(repo, data["session"]).load()
    by_task = {wave.tasks[0].id: wave for wave in state.waves}
    assert sorted(by_task) == ["after", "quick", "slow"]
    for task, wave in by_task.items():  # each line names the agent's own dispatch
        assert f"W{wave.number} {task}: finished" in out
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
    assert state.phase == "done" and state.schedule == "rolling"
    # what the session did while an agent ran (landings moved main, other dispatches'
    # worktrees came and went) is no change of that agent's to the repository's state
    events = repo / ".seawall" / data["session"] / "events.jsonl"
    assert list(read_events(events, RepoStateChanged)) == []
    # the report draws the schedule: a lane per dispatch, each with its merge
    page = (repo / ".seawall" / data["session"] / "report.html").read_text()
    assert 'aria-label="rolling schedule"' in page
    assert page.count('class="lane"') == 3 and page.count('class="merged"') == 3


def test_in_place_agents_never_share_the_tree_with_an_agent_or_a_merge(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    agents = {
        task: [{"writes": {f"{task}/f.txt": f"{task}\n"}, "sleep": sleep, "final": "STATUS: done"}]
        for task, sleep in (("root", 0.2), ("left", 0.8), ("right", 0.3), ("join", 0.2))
    }
    spec = _spec(tmp_path, agents)
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "mixed"\nschedule = "rolling"',
        tasks=[
            {"id": "root", "prompt": "r", "scope": ["root/"]},
            {"id": "left", "prompt": "l", "scope": ["left/"], "depends_on": ["root"]},
            {"id": "right", "prompt": "r", "scope": ["right/"], "depends_on": ["root"]},
            {"id": "join", "prompt": "j", "scope": ["join/"], "depends_on": ["left", "right"]},
        ],
    )
    _run(tmp_path, repo, plan, spec)
    state = StateStore(repo, status(repo)["session"]).load()
    isolation = {w.tasks[0].id: str(w.isolation) for w in state.waves}
    assert isolation == {"root": "none", "left": "worktree", "right": "worktree", "join": "none"}
    # an in-place agent's whole stay in the tree (dispatch to merge) overlaps nobody's
    for alone in (w for w in state.waves if w.isolation == "none"):
        for other in state.waves:
            if other is not alone:
                assert other.merged_at <= alone.started_at or other.started_at >= alone.merged_at
    assert {w.tasks[0].id for w in state.waves if w.agents[0].merged} == set(isolation)


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


def _check_script(tmp_path: Path, *, seconds: float) -> str:
    """A check that takes ``seconds`` and fails when any file holds the word BROKEN."""
    script = tmp_path / "check.py"
    script.write_text(
        "import pathlib, sys, time\n"
        f"time.sleep({seconds})\n"
        "bad = [p for p in pathlib.Path('.').rglob('*.txt') if 'BROKEN' in p.read_text()]\n"
        "sys.exit(1 if bad else 0)\n"
    )
    return f"{sys.executable} {script}"


def test_agents_that_finish_close_together_are_checked_once_together(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = _spec(
        tmp_path,
        {
            "first": [{"writes": {"a/f.txt": "f\n"}, "sleep": 0.2, "final": "STATUS: done — f"}],
            "second": [{"writes": {"b/s.txt": "s\n"}, "sleep": 0.6, "final": "STATUS: done — s"}],
            "third": [{"writes": {"c/t.txt": "t\n"}, "sleep": 0.6, "final": "STATUS: done — t"}],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "batch"\nschedule = "rolling"\nmax_agents = 3\n'
        f"checks = [{json.dumps(_check_script(tmp_path, seconds=1.5))}]",
        tasks=[
            {"id": "first", "prompt": "f", "scope": ["a/"]},
            {"id": "second", "prompt": "s", "scope": ["b/"]},
            {"id": "third", "prompt": "t", "scope": ["c/"]},
        ],
    )
    out = _run(tmp_path, repo, plan, spec)
    state = StateStore(repo, status(repo)["session"]).load()
    by_task = {wave.tasks[0].id: wave for wave in state.waves}
    first, second, third = by_task["first"], by_task["second"], by_task["third"]
    assert first.checks is not None and first.checks.passed
    # the two that finished while the first one's checks ran: one run for both
    assert second.checks is not None and third.checks is not None
    assert second.checks.commit == third.checks.commit
    # what was checked is what landed: the tree of the batch's last merge
    last = max((second, third), key=lambda wave: wave.merged_at)
    assert last.target_after is not None
    tree = git(repo, "rev-parse", f"{last.target_after}^{{tree}}")
    assert git(repo, "rev-parse", f"{third.checks.commit}^{{tree}}") == tree
    assert "checked together" in out
    for path in ("a/f.txt", "b/s.txt", "c/t.txt"):
        assert show(repo, "main", path) is not None


def test_a_batch_whose_checks_fail_lands_one_by_one_and_drops_the_breaking_agent(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = _spec(
        tmp_path,
        {
            "slowcheck": [{"writes": {"a/f.txt": "f\n"}, "final": "STATUS: done — f"}],
            "good": [{"writes": {"b/g.txt": "g\n"}, "sleep": 0.6, "final": "STATUS: done — g"}],
            "bad": [{"writes": {"c/b.txt": "BROKEN\n"}, "sleep": 0.6, "final": "STATUS: done — b"}],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "broken"\nschedule = "rolling"\nmax_agents = 3\n'
        f"checks = [{json.dumps(_check_script(tmp_path, seconds=1.0))}]",
        tasks=[
            {"id": "slowcheck", "prompt": "f", "scope": ["a/"]},
            {"id": "good", "prompt": "g", "scope": ["b/"]},
            {"id": "bad", "prompt": "b", "scope": ["c/"]},
        ],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env={"AGENT_SPEC": str(spec)})
    assert done.returncode in (0, 5), done.stdout + done.stderr
    state = StateStore(repo, status(repo)["session"]).load()
    assert show(repo, "main", "a/f.txt") == "f\n"
    assert show(repo, "main", "b/g.txt") == "g\n"
    assert show(repo, "main", "c/b.txt") is None  # the target holds only checked merges
    bad = [w for w in state.waves if w.tasks[0].id == "bad"]
    assert bad and not any(a.merged for w in bad for a in w.agents)
    assert any(d.task == "bad" for w in bad for d in w.dropped)


def test_a_change_beside_its_scope_conflicts_with_what_landed_first(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"shared.txt": "base\n"})
    spec = _spec(
        tmp_path,
        {
            "early": [
                {"writes": {"a/e.txt": "e\n", "shared.txt": "early\n"}, "final": "STATUS: done — e"}
            ],
            "late": [
                {
                    "writes": {"b/l.txt": "l\n", "shared.txt": "late\n"},
                    "sleep": 1.0,
                    "final": "STATUS: done — l",
                }
            ],
            "late-fix-w2": [{"writes": {"shared.txt": "both\n"}, "final": "STATUS: done — both"}],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "clash"\nschedule = "rolling"\nenforcement = "warn"',
        tasks=[
            {"id": "early", "prompt": "e", "scope": ["a/"]},
            {"id": "late", "prompt": "l", "scope": ["b/"]},
        ],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env={"AGENT_SPEC": str(spec)})
    assert done.returncode in (0, 5), done.stdout + done.stderr
    state = StateStore(repo, status(repo)["session"]).load()
    late = next(w for w in state.waves if w.tasks[0].id == "late")
    early = next(w for w in state.waves if w.tasks[0].id == "early")
    # the late one was merged onto what landed first, the conflict settled by the policy
    # (the target branch's version kept) and a fix task dispatched for the rest
    assert late.onto == early.target_after
    assert [(r.path, r.fix_task) for r in late.resolutions] == [("shared.txt", "late-fix-w2")]
    assert show(repo, "main", "b/l.txt") == "l\n"
    assert show(repo, "main", "shared.txt") == "both\n"


def test_a_spiral_is_rescoped_and_a_repeated_failure_trips_the_breaker(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/x.py": "x = 0\n"})
    commits = [{"writes": {"src/x.py": f"x = {n}\n"}, "message": f"x {n}"} for n in (1, 2, 1, 3)]
    spec = _spec(
        tmp_path,
        {
            "loop": [
                {"commits": commits, "final": "STATUS: done — x"},
                {"writes": {"src/x.py": "x = 42\n"}, "final": "STATUS: done — once"},
            ],
            "flaky": [
                {
                    "writes": {"src/f.py": "f\n"},
                    "sleep": 0.3,
                    "final": "STATUS: failed — ValueError: the widget is missing",
                }
            ],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "trip"\nschedule = "rolling"\nisolation = "worktree"',
        tasks=[
            {"id": "loop", "prompt": "x", "scope": ["src/x.py"]},
            {"id": "flaky", "prompt": "f", "scope": ["src/f.py"]},
        ],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env={"AGENT_SPEC": str(spec)})
    assert done.returncode == 3, done.stdout + done.stderr
    assert "wave breaker tripped" in done.stderr
    data = status(repo)
    assert data["phase"] == "halted"
    assert data["breaker"]["trigger"] == "identical-failure"
    state = StateStore(repo, data["session"]).load()
    loops = [w.agents[0] for w in state.waves if w.tasks[0].id == "loop"]
    assert loops[0].status == "spiral" and not loops[0].merged
    assert loops[-1].status == "done" and loops[-1].merged
    assert show(repo, "main", "src/x.py") == "x = 42\n"
    assert show(repo, "main", "src/f.py") is None


def test_a_halt_lets_running_agents_finish_and_resume_lands_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    failing = {"writes": {"f/f.txt": "f\n"}, "final": "STATUS: failed — KeyError: 'widget'"}
    spec = _spec(
        tmp_path,
        {
            "flaky": [failing, failing, {"writes": {"f/f.txt": "ok\n"}, "final": "STATUS: done"}],
            "slow": [{"writes": {"s/s.txt": "s\n"}, "sleep": 3.0, "final": "STATUS: done — s"}],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "halt"\nschedule = "rolling"\nisolation = "worktree"',
        tasks=[
            {"id": "flaky", "prompt": "f", "scope": ["f/"]},
            {"id": "slow", "prompt": "s", "scope": ["s/"]},
        ],
    )
    env = {"AGENT_SPEC": str(spec)}
    first = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert first.returncode == 3, first.stdout + first.stderr
    data = status(repo)
    assert data["breaker"]["trigger"] == "identical-failure"
    state = StateStore(repo, data["session"]).load()
    slow = next(w for w in state.waves if w.tasks[0].id == "slow")
    # halted while the slow agent ran: no new dispatch, but the agent finished and
    # was recorded; nothing of it merged yet
    assert [w.tasks[0].id for w in state.waves].count("flaky") == 2
    assert slow.phase == "dispatched" and slow.agents[0].run is not None
    assert show(repo, "main", "s/s.txt") is None
    again = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    state = StateStore(repo, data["session"]).load()
    slow = next(w for w in state.waves if w.tasks[0].id == "slow")
    assert slow.agents[0].merged and slow.agents[0].run is not None
    assert show(repo, "main", "s/s.txt") == "s\n"
    assert show(repo, "main", "f/f.txt") == "ok\n"
    assert sum(1 for w in state.waves if w.tasks[0].id == "slow") == 1  # not run again


def _next(repo: Path, outputs: dict[str, str] | None = None) -> dict[str, Any]:
    args = ("next", "--json", "--repo", str(repo))
    if outputs is None:
        done = seawall(*args, cwd=repo, check=True)
    else:
        stdin = json.dumps({"outputs": outputs})
        done = seawall(*args, "--input", "-", cwd=repo, stdin=stdin, check=True)
    data: dict[str, Any] = json.loads(done.stdout)
    jsonschema.validate(data, load_schema(data["schema"]))
    return data


def test_a_lead_gets_newly_ready_agents_as_soon_as_a_review_frees_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "lead"\nschedule = "rolling"',
        tasks=[
            {"id": "slow", "prompt": "s", "scope": ["s/"]},
            {"id": "quick", "prompt": "q", "scope": ["q/"]},
            {"id": "after", "prompt": "a", "scope": ["a/"], "depends_on": ["quick"]},
        ],
    )
    first = json.loads(
        seawall("next", str(plan), "--json", "--repo", str(repo), cwd=repo, check=True).stdout
    )
    assert first["action"] == "dispatch" and not first["again"]
    second = _next(repo)  # one more agent may start beside the first
    assert second["action"] == "dispatch" and not second["again"]
    handed = {first["wave"]["agents"][0]["task"], second["wave"]["agents"][0]["task"]}
    assert handed == {"slow", "quick"}
    assert first["wave"]["isolation"] == second["wave"]["isolation"] == "worktree"
    assert _next(repo)["again"] is True  # nothing else may start: "after" waits for quick
    agent = {w["agents"][0]["task"]: w["agents"][0] for w in (first["wave"], second["wave"])}
    Path(agent["quick"]["workspace"], "q").mkdir()
    Path(agent["quick"]["workspace"], "q/q.txt").write_text("q\n")
    # quick finished (slow still runs): its review lands it and hands out "after" at once
    step = _next(repo, {"quick": "STATUS: done — q"})
    assert [a["task"] for a in step["reviewed"]["agents"]] == ["quick"]
    assert step["reviewed"]["agents"][0]["merged"] is True
    assert step["action"] == "dispatch" and not step["again"]
    assert [a["task"] for a in step["wave"]["agents"]] == ["after"]
    assert show(repo, step["wave"]["base"], "q/q.txt") == "q\n"  # its base holds quick
    for task, workspace in (("slow", agent["slow"]["workspace"]),
                            ("after", step["wave"]["agents"][0]["workspace"])):  # fmt: skip
        Path(workspace, task[0]).mkdir()
        Path(workspace, task[0], "f.txt").write_text(f"{task}\n")
    step = _next(repo, {"after": "STATUS: done — a", "slow": "STATUS: done — s"})
    assert [a["task"] for a in step["reviewed"]["agents"]] == ["after", "slow"]
    assert step["action"] == "done", step
    for path, content in (("s/f.txt", "slow\n"), ("q/q.txt", "q\n"), ("a/f.txt", "after\n")):
        assert show(repo, "main", path) == content


def test_past_its_session_time_a_rolling_session_halts_before_the_next_dispatch(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = _spec(
        tmp_path,
        {
            "first": [{"writes": {"a/a.txt": "a\n"}, "sleep": 1.5, "final": "STATUS: done"}],
            "then": [{"writes": {"b/b.txt": "b\n"}, "final": "STATUS: done"}],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "clock"\nschedule = "rolling"\nbudgets = { session_minutes = 0.02 }',
        tasks=[
            {"id": "first", "prompt": "a", "scope": ["a/"]},
            {"id": "then", "prompt": "b", "scope": ["b/"], "depends_on": ["first"]},
        ],
    )
    env = {"AGENT_SPEC": str(spec)}
    halted = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert halted.returncode == 3, halted.stdout + halted.stderr
    data = status(repo)
    assert data["phase"] == "halted" and data["halt"]["reason"] == "session-time"
    assert [w["agents"][0]["task"] for w in data["waves"]] == ["first"]  # landed, then halted
    assert show(repo, "main", "a/a.txt") == "a\n"
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert show(repo, "main", "b/b.txt") == "b\n"
