"""End to end: `seawall run` with command-runner agents on real repositories."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

from tests.integration.sessionkit import (
    FAKE_BIN,
    agents_by_wave,
    git,
    make_repo,
    seawall,
    show,
    status,
    write_plan,
)


def _spec(tmp_path: Path, spec: dict[str, object]) -> dict[str, str]:
    path = tmp_path / "agents.json"
    path.write_text(json.dumps(spec))
    return {"AGENT_SPEC": str(path)}


def test_in_place_wave_merges_and_failure_files_one_carryover(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    env = _spec(
        tmp_path,
        {
            "parser": [
                {
                    "writes": {"src/parser.py": "def parse(): ...\n"},
                    "final": "Added the parser.\nSTATUS: done — parser added",
                }
            ],
            "report": [
                {"final": "Traceback: csvkit missing\nSTATUS: failed — No module named 'csvkit'"},
                {"writes": {"src/report.py": "import csv\n"}, "final": "STATUS: done — std csv"},
            ],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "s1"\ntype = "feature"',
        tasks=[
            {"id": "parser", "prompt": "Add the parser.", "scope": ["src/parser.py"]},
            {"id": "report", "prompt": "Add the report.", "scope": ["src/report.py"]},
        ],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    data = status(repo)
    waves = agents_by_wave(data)
    assert data["waves"][0]["isolation"] == "none"
    assert data["waves"][0]["enforcement"] == "strict"
    assert waves[0]["parser"]["status"] == "done"
    assert waves[0]["parser"]["merged"] is True
    assert waves[0]["report"]["status"] == "failed"
    assert waves[0]["report"]["issue"] == 1
    assert waves[1]["report"]["status"] == "done"
    assert show(repo, "main", "src/parser.py") == "def parse(): ...\n"
    assert show(repo, "main", "src/report.py") == "import csv\n"
    assert git(repo, "status", "--porcelain") == ""
    issues = sorted((repo / ".seawall" / "issues").glob("*.md"))
    assert [p.name for p in issues] == ["1.md"]
    assert "[Carryover] [FAILED]" in issues[0].read_text()
    state_md = Path(data_path(repo, data["session"], "STATE.md")).read_text()
    assert "- W1 · report · FAILED" in state_md and "→ issue #1" in state_md


def data_path(repo: Path, session: str, name: str) -> Path:
    return repo / ".seawall" / session / name


def test_worktree_wave_spiral_from_commits_is_reverted_and_rescoped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/auth.py": "A = 0\n"})
    commits = [
        {"writes": {"src/auth.py": f"A = {n}\n"}, "message": f"try {n}"} for n in (1, 2, 1, 3)
    ]
    env = _spec(
        tmp_path,
        {
            "auth": [
                {"commits": commits, "final": "STATUS: done — auth"},
                {"writes": {"src/auth.py": "A = 42\n"}, "final": "STATUS: done — once"},
            ],
            "docs": [{"writes": {"docs/a.md": "a\n"}, "final": "STATUS: done — docs"}],
            "tests": [{"writes": {"tests/t.py": "t\n"}, "final": "STATUS: done — tests"}],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "s2"\nisolation = "worktree"',
        tasks=[
            {"id": "auth", "prompt": "Fix auth.", "scope": ["src/auth.py"]},
            {"id": "docs", "prompt": "Docs.", "scope": ["docs/"]},
            {"id": "tests", "prompt": "Tests.", "scope": ["tests/"]},
        ],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    data = status(repo)
    waves = agents_by_wave(data)
    assert data["waves"][0]["isolation"] == "worktree"
    spiral = waves[0]["auth"]
    assert spiral["status"] == "spiral"
    assert "src/auth.py changed 4×" in spiral["spiral"]["summary"]
    assert spiral["merged"] is False
    assert spiral["issue"] is None  # a first spiral is re-scoped, not escalated
    assert waves[1]["auth"]["status"] == "done"
    assert show(repo, "main", "src/auth.py") == "A = 42\n"
    assert show(repo, "main", "docs/a.md") == "a\n"
    # the spiralled work is not lost: it stays reachable from the agent's ref
    refs = git(repo, "for-each-ref", "--format=%(refname)", f"refs/seawall/{data['session']}/")
    assert f"refs/seawall/{data['session']}/auth" in refs.splitlines()
    log = git(repo, "log", "--format=%s", f"refs/seawall/{data['session']}/auth")
    assert "try 3" in log or "checkpoint" in log


def test_second_spiral_escalates_with_a_carryover(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/x.py": "x = 0\n"})
    commits = [{"writes": {"src/x.py": f"x = {n}\n"}, "message": f"x {n}"} for n in (1, 2, 3)]
    env = _spec(tmp_path, {"loop": [{"commits": commits, "final": "STATUS: done — x"}]})
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "s3"\nisolation = "worktree"',
        tasks=[{"id": "loop", "prompt": "Change x.", "scope": ["src/x.py"]}],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 5, done.stdout + done.stderr
    waves = agents_by_wave(status(repo))
    assert [w["loop"]["status"] for w in waves] == ["spiral", "spiral"]
    assert waves[1]["loop"]["issue"] == 1
    issue = (repo / ".seawall" / "issues" / "1.md").read_text()
    assert "[Carryover] [SPIRAL]" in issue
    assert show(repo, "main", "src/x.py") == "x = 0\n"


def test_fake_claude_and_codex_on_path(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "s4"\nagent = "claude"\n'
        '[runners.claude]\nkind = "claude-code"\n'
        '[runners.codex]\nkind = "codex"\n'
        '[[task]]\nid = "one"\nprompt = "Write notes."\nscope = ["notes/"]\n'
        '[[task]]\nid = "two"\nprompt = "Write more notes."\nscope = ["notes/"]\n'
        'agent = "codex"\ndepends_on = ["one"]\n'
    )
    env = {"PATH": f"{FAKE_BIN}:{os.environ['PATH']}", "FAKE_AGENT_EDIT": "notes/out.txt"}
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    waves = agents_by_wave(status(repo))
    assert waves[0]["one"]["status"] == "done"
    assert waves[1]["two"]["status"] == "done"
    assert show(repo, "main", "notes/out.txt") is not None
    state = json.loads((repo / ".seawall" / status(repo)["session"] / "state.json").read_text())
    agents = {a["task"]: a for a in state["waves"][0]["agents"]}
    assert agents["one"]["turns"] >= 1
    assert agents["one"]["tool_calls"] >= 1
    assert agents["one"]["cost_usd"] > 0


def _usage_limit(resets_at: float) -> dict[str, object]:
    """An attempt that meets Claude Code's usage limit as the real CLI reports it: a
    rejected ``rate_limit_event``, then an error ``result`` with ``api_error_status``
    429 (its ``subtype`` still ``success``), exit 1."""
    event = {
        "type": "rate_limit_event",
        "rate_limit_info": {
            "status": "rejected",
            "resetsAt": int(resets_at),
            "rateLimitType": "five_hour",
        },
        "uuid": "u1",
        "session_id": "s1",
    }
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "api_error_status": 429,
        "result": "You've hit your session limit · resets 10:16pm (UTC)",
        "num_turns": 1,
        "total_cost_usd": 0,
    }
    return {"final": f"{json.dumps(event)}\n{json.dumps(result)}", "exit": 1}


def _limit_plan(tmp_path: Path, on_limit: str) -> Path:
    return write_plan(
        tmp_path / "plan.toml",
        session=f'name = "rl"\non_limit = "{on_limit}"\nmax_wait = 1',
        tasks=[
            {"id": "a", "prompt": "a", "scope": ["a.txt"]},
            {"id": "b", "prompt": "b", "scope": ["b.txt"]},
        ],
        extra='options = { output = "stream-json" }',
    )


def test_a_usage_limit_pauses_the_agent_which_runs_again_after_the_reset(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    resets_at = time.time() + 4
    begun = {**_usage_limit(resets_at), "writes": {"a.txt": "a (begun)\n"}}
    env = _spec(
        tmp_path,
        {
            "a": [begun, {"writes": {"a.txt": "a\n"}, "final": "STATUS: done"}],
            "b": [{"writes": {"b.txt": "b\n"}, "final": "STATUS: done — b"}],
        },
    )
    plan = _limit_plan(tmp_path, "wait")
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.time() >= int(resets_at)  # the second dispatch of a waited for the reset
    waves = agents_by_wave(status(repo))
    assert waves[0]["a"]["status"] == "paused" and waves[0]["b"]["status"] == "done"
    assert waves[1]["a"]["status"] == "done"
    assert waves[0]["a"]["merged"] is True  # the work it had begun was kept and merged
    assert "usage limit" in waves[0]["a"]["reason"]
    assert not (repo / ".seawall" / "issues").exists()  # a limit is not the task's failure
    assert show(repo, "main", "a.txt") == "a\n" and show(repo, "main", "b.txt") == "b\n"
    state = json.loads((repo / ".seawall" / status(repo)["session"] / "state.json").read_text())
    assert state["tasks"]["a"]["attempts"] == 1 and state["tasks"]["a"]["failures"] == 0


def test_a_reset_past_max_wait_halts_with_exit_6_naming_the_reset(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    resets_at = time.time() + 3 * 3600
    env = _spec(
        tmp_path,
        {
            "a": [_usage_limit(resets_at)],
            "b": [{"writes": {"b.txt": "b\n"}, "final": "STATUS: done — b"}],
        },
    )
    plan = _limit_plan(tmp_path, "wait")
    first = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert first.returncode == 6, first.stdout + first.stderr
    shown = datetime.fromtimestamp(int(resets_at), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert shown in first.stdout + first.stderr
    data = status(repo)
    assert data["phase"] == "halted"
    assert data["halt"]["reason"] == "rate-limited"
    assert data["halt"]["resets_at"] == int(resets_at)
    state = json.loads((repo / ".seawall" / data["session"] / "state.json").read_text())
    assert state["holds"] == {"": int(resets_at)}  # kept: a resume holds until the reset
    assert not (repo / ".seawall" / "issues").exists()
    assert show(repo, "main", "b.txt") == "b\n"  # the other agent's work landed


def test_on_limit_halt_halts_at_once_and_resume_runs_the_agent_after_the_reset(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    resets_at = time.time() + 3
    env = _spec(
        tmp_path,
        {
            "a": [_usage_limit(resets_at), {"writes": {"a.txt": "a\n"}, "final": "STATUS: done"}],
            "b": [{"writes": {"b.txt": "b\n"}, "final": "STATUS: done — b"}],
        },
    )
    plan = _limit_plan(tmp_path, "halt")
    first = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert first.returncode == 6, first.stdout + first.stderr
    assert 'on_limit is "halt"' in status(repo)["halt"]["detail"]
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert time.time() >= int(resets_at)  # the resumed dispatch held until the reset
    assert show(repo, "main", "a.txt") == "a\n" and show(repo, "main", "b.txt") == "b\n"


def test_a_task_paused_three_dispatches_in_a_row_halts_with_exit_6(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    env = _spec(
        tmp_path,
        {
            "a": [_usage_limit(time.time() + 1)],  # refused again at every reset
            "b": [{"writes": {"b.txt": "b\n"}, "final": "STATUS: done — b"}],
        },
    )
    plan = _limit_plan(tmp_path, "wait")
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 6, done.stdout + done.stderr
    data = status(repo)
    assert "paused 3 dispatches in a row" in data["halt"]["detail"]
    assert [wave["agents"][0]["status"] for wave in data["waves"]] == ["paused"] * 3
    assert not (repo / ".seawall" / "issues").exists()


def test_run_refuses_a_dirty_working_tree_before_starting(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    (repo / "src" / "app.py").write_text("x = 2  # the user's own work in progress\n")
    env = _spec(tmp_path, {"a": [{"writes": {"a.txt": "a\n"}, "final": "STATUS: done — a"}]})
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "dirty"',
        tasks=[{"id": "a", "prompt": "a", "scope": ["a.txt"]}],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 1
    assert "src/app.py" in done.stderr and "Commit or stash" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (repo / ".seawall").exists() or not list((repo / ".seawall").glob("*/state.json"))
    assert (repo / "src" / "app.py").read_text() == "x = 2  # the user's own work in progress\n"


def test_in_place_agent_commit_halts_the_merge_and_stray_writes_stay(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    env = _spec(
        tmp_path,
        {
            # commits on the shared branch (a git write in a shared tree) ...
            "committer": [
                {
                    "commits": [{"writes": {"src/c.py": "c = 1\n"}, "message": "mine"}],
                    "final": "STATUS: done — c",
                }
            ],
            # ... and writes a file outside every scope, with no call seawall sees
            "stray": [
                {
                    "writes": {"src/s.py": "s = 1\n", "NOTES.txt": "scratch\n"},
                    "final": "STATUS: done — s",
                }
            ],
        },
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "shared"',
        tasks=[
            {"id": "committer", "prompt": "c", "scope": ["src/c.py"]},
            {"id": "stray", "prompt": "s", "scope": ["src/s.py"]},
        ],
    )
    start = git(repo, "rev-parse", "main")
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    # the branch moved under the wave: seawall never moves it back, it halts
    assert done.returncode == 3, done.stdout + done.stderr
    moved = git(repo, "rev-parse", "main")
    assert moved != start and git(repo, "log", "-1", "--format=%s", "main") == "mine"
    assert start[:12] in done.stdout and moved[:12] in done.stdout
    assert status(repo)["waves"][0]["isolation"] == "none"
    # a write no agent was seen making is not moved: reported, left in place
    assert (repo / "NOTES.txt").read_text() == "scratch\n"
    assert "NOTES.txt" in done.stderr
    resumed = seawall("resume", "--rebase", "--repo", str(repo), cwd=repo, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert show(repo, "main", "src/c.py") == "c = 1\n"
    assert show(repo, "main", "src/s.py") == "s = 1\n"
    assert show(repo, "main", "NOTES.txt") is None  # out of every scope: not merged
    assert git(repo, "merge-base", "--is-ancestor", moved, "main") == ""
    assert (repo / "NOTES.txt").read_text() == "scratch\n"
