"""End to end: a looping agent is stopped live; the wave breaker halts, resumes, re-trips."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from seawall.adapters.runners.scripted import AgentScript, Edit, ScriptedRunner, Tool
from seawall.plan import parse_plan
from seawall.session.engine import Session
from seawall.state.ledger import SessionPhase
from tests.integration.sessionkit import agents_by_wave, git, make_repo, seawall, show, status

PLAN = """
[session]
name = "loops"
type = "feature"
agent = "scripted"

[[task]]
id = "looper"
prompt = "Make the list helper."
scope = ["src/list.py"]

[[task]]
id = "steady"
prompt = "Add the README section."
scope = ["docs/guide.md"]
"""


def test_looping_agent_is_stopped_snapshotted_and_the_session_goes_on(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/list.py": "items = []\n"})
    loop = [Tool(name="Bash", arguments={"command": "ls src"}, result="list.py")] * 8
    runner = ScriptedRunner(
        {
            "looper": [
                AgentScript(
                    steps=(Edit(path="src/list.py", content="items = [1]\n"), *loop),
                    final="STATUS: done — never reached",
                ),
                AgentScript(
                    steps=(Edit(path="src/list.py", content="items = [1, 2]\n"),),
                    final="STATUS: done — list helper",
                ),
            ],
            "steady": [
                AgentScript(
                    steps=(Edit(path="docs/guide.md", content="# Guide\n"),),
                    final="STATUS: done — guide",
                )
            ],
        }
    )
    session = Session(parse_plan(PLAN), repo=repo, runner=runner, plan_text=PLAN)
    result = anyio.run(session.run)
    assert result.phase is SessionPhase.DONE
    data = status(repo)
    waves = agents_by_wave(data)
    looper = waves[0]["looper"]
    assert looper["status"] == "blocked"
    assert looper["merged"] is False
    assert waves[0]["steady"]["status"] == "done"
    assert waves[0]["steady"]["merged"] is True
    assert waves[1]["looper"]["status"] == "done"
    assert show(repo, "main", "src/list.py") == "items = [1, 2]\n"
    # stopped after the 4th identical call, not after all 8
    assert runner.results[0].cancelled or runner.results[1].cancelled
    state = json.loads((repo / ".seawall" / data["session"] / "state.json").read_text())
    record = next(a for a in state["waves"][0]["agents"] if a["task"] == "looper")
    assert record["trip"]["kind"] == "loop"
    assert record["tool_calls"] <= 6
    # the agent's work was snapshotted as wip before anything else happened
    assert record["wip"]
    message = git(repo, "log", "-1", "--format=%B", record["wip"])
    assert message.startswith("wip: looper") and "unverified" in message
    assert git(repo, "show", f"{record['wip']}:src/list.py") == "items = [1]"
    blocked = (repo / ".seawall" / data["session"] / "BLOCKED.md").read_text()
    assert "breaker/loop" in blocked and "looper" in blocked
    events = (repo / ".seawall" / data["session"] / "events.jsonl").read_text().splitlines()
    tripped = [json.loads(line) for line in events if '"breaker_tripped"' in line]
    assert any(e.get("agent") == "looper" for e in tripped)


SCRIPTS = """
[scripts.flaky]
final = "STATUS: failed — ImportError: cannot import name 'Widget' from 'app.ui'"
[[scripts.flaky.steps]]
tool = "Bash"
arguments = { command = "python -m app" }
result = "ImportError: cannot import name 'Widget'"
is_error = true
exit_code = 1
"""


def test_wave_breaker_trips_halts_resumes_and_retrips(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    scripts = tmp_path / "scripts.toml"
    scripts.write_text(SCRIPTS)
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "trip"\nagent = "s"\n'
        f'[runners.s]\nkind = "scripted"\noptions = {{ script = "{scripts}" }}\n'
        '[[task]]\nid = "flaky"\nprompt = "Build the widget."\nscope = ["src/ui.py"]\n'
        '[[task]]\nid = "later"\nprompt = "Use the widget."\nscope = ["src/use.py"]\n'
        'depends_on = ["flaky"]\n'
    )
    first = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
    assert first.returncode == 3, first.stdout + first.stderr
    assert "wave breaker tripped" in first.stderr
    data = status(repo)
    assert data["phase"] == "halted"
    assert data["breaker"]["tripped"] is True
    trigger = data["breaker"]["trigger"]
    assert trigger in ("stall", "identical-failure")
    counters = data["breaker"]["counters"]
    waves_before = len(data["waves"])
    assert waves_before == 2
    # resume clears the trip (counters kept) and re-trips at once on the same trigger
    again = seawall("resume", "--repo", str(repo), cwd=repo)
    assert again.returncode == 3, again.stdout + again.stderr
    data = status(repo)
    assert data["phase"] == "halted"
    assert data["breaker"]["tripped"] is True
    assert len(data["waves"]) == waves_before + 1
    assert data["breaker"]["counters"]["stall_waves"] >= counters["stall_waves"]
    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    assert "Breaker tripped" in state_md and "seawall resume" in state_md
    # kill ends it for good
    killed = seawall("kill", "--repo", str(repo), cwd=repo)
    assert killed.returncode == 0
    assert status(repo)["phase"] == "killed"
    assert seawall("resume", "--repo", str(repo), cwd=repo).returncode == 1


def test_in_place_spiral_is_reverted_to_the_base_not_deleted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/x.py": "x = 0\n", "src/y.py": "y = 0\n"})
    edits = tuple(Edit(path="src/x.py", content=f"x = {n}\n") for n in (1, 2, 1, 3))
    runner = ScriptedRunner(
        {
            "xs": [
                AgentScript(steps=edits, final="STATUS: done — x"),
                AgentScript(
                    steps=(Edit(path="src/x.py", content="x = 9\n"),), final="STATUS: done"
                ),
            ],
            "ys": [
                AgentScript(
                    steps=(Edit(path="src/y.py", content="y = 0\n"),),
                    final="STATUS: done — unchanged",
                )
            ],
        }
    )
    plan = (
        '[session]\nname = "inplace"\n'
        '[[task]]\nid = "xs"\nprompt = "x"\nscope = ["src/x.py"]\n'
        '[[task]]\nid = "ys"\nprompt = "y"\nscope = ["src/y.py"]\n'
    )
    session = Session(parse_plan(plan), repo=repo, runner=runner, plan_text=plan)
    progress: list[str] = []
    result = anyio.run(session.run)
    assert result.phase is SessionPhase.DONE, progress
    waves = agents_by_wave(status(repo))
    assert waves[0]["xs"]["status"] == "spiral"
    assert waves[0]["ys"]["status"] == "done"
    # between the waves the spiral was reverted to the base content, never deleted
    wave2_base = json.loads((repo / ".seawall" / result.session / "state.json").read_text())[
        "waves"
    ][1]["base"]
    assert show(repo, wave2_base, "src/x.py") == "x = 0\n"
    assert show(repo, "main", "src/x.py") == "x = 9\n"
    assert show(repo, "main", "src/y.py") == "y = 0\n"
    assert git(repo, "status", "--porcelain") == ""


def test_target_moved_during_a_wave_halts_on_merge_conflict_then_resumes(
    tmp_path: Path,
) -> None:
    from seawall.adapters.runners.callable import CallableRunner
    from seawall.runner import AgentRequest, EmitFn

    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    base = git(repo, "rev-parse", "main")

    async def agent(request: AgentRequest, emit: EmitFn) -> str:
        (request.workspace / f"{request.task_id}.txt").write_text("work\n")
        if request.task_id == "a":  # meanwhile someone commits on the target branch
            (repo / "other.txt").write_text("someone else\n")
            git(repo, "add", "other.txt")
            git(repo, "commit", "-q", "-m", "someone else's commit")
        return "STATUS: done — wrote it"

    plan = (
        '[session]\nname = "moved"\nisolation = "worktree"\n'
        '[[task]]\nid = "a"\nprompt = "a"\nscope = ["a.txt"]\n'
        '[[task]]\nid = "b"\nprompt = "b"\nscope = ["b.txt"]\n'
    )
    session = Session(parse_plan(plan), repo=repo, runner=CallableRunner(agent), plan_text=plan)
    result = anyio.run(session.run)
    assert result.phase is SessionPhase.HALTED
    assert result.exit_code == 3
    data = status(repo)
    assert data["breaker"]["trigger"] == "merge-conflict"
    assert show(repo, "main", "a.txt") is None  # nothing was merged
    moved = git(repo, "rev-parse", "main")
    # a person reconciles the history (here: moves the stray commit off the branch)
    git(repo, "branch", "stray", moved)
    git(repo, "reset", "-q", "--hard", base)
    again = Session.open(repo, result.session, runner=CallableRunner(agent))
    resumed = anyio.run(again.resume)
    assert resumed.phase is SessionPhase.DONE
    assert show(repo, "main", "a.txt") == "work\n" and show(repo, "main", "b.txt") == "work\n"
