"""What a wave sets aside, skips or retries is said where people look: on the console
(the run's progress lines) and in STATE.md, not only in events.jsonl and the report.
Each case is a real session of real agent processes (the command runner) or of the
scripted runner, on a real repository."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path

import anyio

from seawall.adapters.runners.scripted import AgentScript, Edit, ScriptedRunner, Tool
from seawall.plan import parse_plan
from seawall.report.progress import Progress
from seawall.session.engine import Session
from tests.integration.sessionkit import make_repo, seawall, show, write_plan


def _run(
    tmp_path: Path, repo: Path, spec: Mapping[str, object], plan: Path
) -> tuple[int, str, str]:
    """Run ``plan`` with the spec agent; the exit code, the console and STATE.md."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    done = seawall(
        "run", str(plan), "--repo", str(repo), "--heartbeat", "0",
        cwd=repo, env={"AGENT_SPEC": str(path)},
    )  # fmt: skip
    state_md = next((repo / ".seawall").glob("*/STATE.md")).read_text()
    return done.returncode, done.stderr, state_md


def test_conflicting_hunks_and_a_both_added_file_set_aside_are_said(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"shared.md": "one\ntwo\nthree\n"})
    both = {"shared.md": "one\nC\nthree\n", "new.md": "from c\n"}
    other = {"shared.md": "one\nD\nthree\n", "new.md": "from d\n"}
    spec = {
        "c": [{"writes": both, "final": "STATUS: done — c"}],
        "d": [{"writes": other, "final": "STATUS: done — d"}],
        "d-fix-w1": [{"writes": {"new.md": "from c\nfrom d\n"}, "final": "STATUS: done — d"}],
    }
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "aside"\nisolation = "worktree"',
        tasks=[
            {"id": "c", "prompt": "C", "scope": ["shared.md", "new.md"]},
            {"id": "d", "prompt": "D", "scope": ["shared.md", "new.md"]},
        ],
    )
    code, console, state_md = _run(tmp_path, repo, spec, plan)
    assert code == 0, console
    said = "not merged: `new.md`, `shared.md` set aside for fix task d-fix-w1 (kept: c)"
    assert f"W1 d: {said}" in console, console
    row = next(line for line in state_md.splitlines() if line.startswith("- W1 · d ·"))
    assert said in row
    assert "conflict `new.md`: both-added" in state_md
    assert "conflict `shared.md`: both-modified" in state_md
    assert show(repo, "main", "new.md") == "from c\nfrom d\n"  # the fix task landed it


def test_a_user_file_an_in_place_agent_changed_is_said(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    (repo / "NOTES.txt").write_text("my notes\n")
    spec = {
        "edit": [
            {
                "writes": {"src/app.py": "x = 1\n", "NOTES.txt": "the agent's\n"},
                "final": "STATUS: done — app",
            }
        ]
    }
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "mine"',
        tasks=[{"id": "edit", "prompt": "Edit.", "scope": ["src/"]}],
    )
    code, console, state_md = _run(tmp_path, repo, spec, plan)
    assert code == 0, console
    # written by no call seawall saw: the user's as far as seawall can tell, left and said
    assert "by no agent seawall saw (yours, the lead's, a tool's): NOTES.txt" in console
    assert "left in place and not merged: `NOTES.txt`" in state_md
    assert (repo / "NOTES.txt").read_text() == "the agent's\n"  # left in place


def test_a_retry_a_waiting_dependent_and_a_carried_forward_task_are_said(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.py": "a = 1\n"})
    failing = {"final": "STATUS: failed — ImportError: no module named 'b'"}
    spec = {
        "a": [failing],
        "b": [{"writes": {"src/b.py": "b = 1\n"}}],
        "p": [
            {
                "writes": {"src/p.py": "p = 1\n"},
                "final": "STATUS: partial — half of it | REMAINING: the other half",
            },
            {"writes": {"src/p.py": "p = 2\n"}, "final": "STATUS: done — p"},
        ],
    }
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "retry"\nisolation = "worktree"',
        tasks=[
            {"id": "a", "prompt": "A", "scope": ["src/a.py"]},
            {"id": "b", "prompt": "B", "scope": ["src/b.py"], "depends_on": ["a"]},
            {"id": "p", "prompt": "P", "scope": ["src/p.py"]},
        ],
    )
    code, console, state_md = _run(tmp_path, repo, spec, plan)
    assert code == 3, console  # the same failure twice: the wave breaker halts
    assert "W1 a: failed: fix task queued; a runs again in a later wave" in console
    assert "W1 b: waits for a (W1: failed: fix task queued)" in console
    assert "W2 b: waits for a (W2: failed: fix task queued)" in console
    assert "- b (implement) · waits for a (W2: failed: fix task queued)" in state_md
    assert "- W2 · a · FAILED" in state_md and "· failed: fix task queued ·" in state_md
    assert show(repo, "main", "src/b.py") is None  # b never ran
    carried = "W1 p: partial: remaining work carried forward; p runs again in a later wave"
    assert carried in console
    assert "· partial: remaining work carried forward ·" in state_md
    assert show(repo, "main", "src/p.py") == "p = 2\n"


def test_an_abandoned_dependency_is_said(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.py": "a = 1\n"})
    spec = {
        "a": [{"final": "STATUS: failed — the API it needs does not exist"}],
        "b": [{"writes": {"src/b.py": "b = 1\n"}, "final": "STATUS: done — b"}],
    }
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "without"\nisolation = "worktree"',
        tasks=[
            {"id": "a", "prompt": "A", "scope": ["src/a.py"]},
            {"id": "b", "prompt": "B", "scope": ["src/b.py"], "depends_on": ["a"]},
        ],
        extra="\n[session.wave_breaker]\nmax_rework_cycles = 0\n",
    )
    code, console, state_md = _run(tmp_path, repo, spec, plan)
    assert code == 4, console  # finished, with a carryover for a
    assert "W1 a: 1 attempts used: escalated" in console
    assert "W1 b: will run without a (not completed, issue #1)" in console
    assert "· 1 attempts used: escalated ·" in state_md
    assert show(repo, "main", "src/b.py") == "b = 1\n"


PLAN = """
[session]
name = "loops"
agent = "scripted"

[[task]]
id = "looper"
prompt = "Make the list helper."
scope = ["src/list.py"]
"""


def test_a_blocked_agent_and_its_retry_are_said(tmp_path: Path) -> None:
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
            ]
        }
    )
    console = io.StringIO()
    progress = Progress(console, live=False, heartbeat=0)
    session = Session(parse_plan(PLAN), repo=repo, runner=runner, plan_text=PLAN, progress=progress)
    anyio.run(session.run)
    said = console.getvalue()
    assert "W1 looper: failed: fix task queued; looper runs again in a later wave" in said
    state_md = next((repo / ".seawall").glob("loops-*/STATE.md")).read_text()
    row = next(line for line in state_md.splitlines() if line.startswith("- W1 · looper ·"))
    assert row.startswith("- W1 · looper · BLOCKED* (breaker/loop:")
    assert "· failed: fix task queued ·" in row
    assert show(repo, "main", "src/list.py") == "items = [1, 2]\n"
