"""Files that predate a wave are the user's: an in-place wave never sweeps them away.

Only what changed during the wave is attributed to agents or set aside; what is set
aside is reported with the command that restores it, and ``seawall restore`` brings it
back without overwriting anything present.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.integration.sessionkit import git, make_repo, seawall, show, status, write_plan


def _spec(tmp_path: Path, spec: dict[str, object]) -> dict[str, str]:
    path = tmp_path / "agents.json"
    path.write_text(json.dumps(spec))
    return {"AGENT_SPEC": str(path)}


def _in_place_plan(
    tmp_path: Path, tasks: list[dict[str, object]], *, stream_json: bool = False
) -> Path:
    extra = 'options = { output = "stream-json" }' if stream_json else ""
    return write_plan(tmp_path / "plan.toml", session='name = "mine"', tasks=tasks, extra=extra)


def test_untracked_and_ignored_user_files_survive_an_in_place_wave(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", ".gitignore": "*.log\n"})
    (repo / "NOTES.txt").write_text("my notes\n")
    (repo / "debug.log").write_text("ignored, but mine\n")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{}\n")
    env = _spec(
        tmp_path,
        {"edit": [{"writes": {"src/app.py": "x = 1\n"}, "final": "STATUS: done — app"}]},
    )
    plan = _in_place_plan(tmp_path, [{"id": "edit", "prompt": "Edit.", "scope": ["src/"]}])
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert show(repo, "main", "src/app.py") == "x = 1\n"
    assert (repo / "NOTES.txt").read_text() == "my notes\n"
    assert (repo / "debug.log").read_text() == "ignored, but mine\n"
    assert (repo / ".claude" / "settings.json").read_text() == "{}\n"
    assert show(repo, "main", "NOTES.txt") is None  # the user's file is not merged either
    assert "set aside" not in done.stdout + done.stderr


def test_an_untracked_user_file_in_a_scope_refuses_the_wave_before_dispatch(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", ".gitignore": "*.pyc\n"})
    (repo / "src").mkdir()
    (repo / "src" / "draft.py").write_text("the user's draft\n")
    (repo / "src" / "cache.pyc").write_text("ignored: adopted without asking\n")
    marker = tmp_path / "started"
    env = _spec(
        tmp_path,
        {
            "edit": [
                {
                    "marker": str(marker),
                    "writes": {"src/draft.py": "the agent's\n"},
                    "final": "STATUS: done — draft",
                }
            ]
        },
    )
    plan = _in_place_plan(tmp_path, [{"id": "edit", "prompt": "Edit.", "scope": ["src/"]}])
    refused = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "src/draft.py (task 'edit')" in refused.stderr
    assert "--adopt-user-files" in refused.stderr and "Commit" in refused.stderr
    assert "cache.pyc" not in refused.stderr
    assert not marker.exists()  # nothing was dispatched
    assert (repo / "src" / "draft.py").read_text() == "the user's draft\n"
    # the user chooses: adopt it; the copy and its restore command are named
    adopted = seawall("resume", "--adopt-user-files", "--repo", str(repo), cwd=repo, env=env)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    assert show(repo, "main", "src/draft.py") == "the agent's\n"
    data = status(repo)
    session = data["session"]
    record = data["waves"][0]["adopted"]
    assert record["files"] == ["src/draft.py"] and record["ignored"] == ["src/cache.pyc"]
    assert record["ref"] == f"refs/seawall/{session}/user-files-w1"
    assert record["restore"] in adopted.stderr
    state_md = (repo / ".seawall" / session / "STATE.md").read_text()
    assert "src/draft.py" in state_md and record["restore"] in state_md
    report = (repo / ".seawall" / session / "report.html").read_text()
    assert "src/draft.py" in report and "user-files-w1" in report
    # the restore command, run as shown, writes the user's draft back
    (repo / "src" / "draft.py").unlink()
    subprocess.run(record["restore"], shell=True, check=True, cwd=tmp_path)
    assert (repo / "src" / "draft.py").read_text() == "the user's draft\n"


def test_in_scope_user_file_is_copied_before_dispatch_and_put_back(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    (repo / "src").mkdir()
    (repo / "src" / "draft.py").write_text("the user's draft\n")
    (repo / "src" / "other.py").write_text("another user file the agent never touches\n")
    env = _spec(
        tmp_path,
        {
            "edit": [
                {
                    "writes": {"src/draft.py": "overwritten by the agent\n"},
                    "final": "STATUS: failed — could not finish",
                }
            ]
        },
    )
    plan = _in_place_plan(
        tmp_path, [{"id": "edit", "prompt": "Edit.", "scope": ["src/"], "max_turns": 5}]
    )
    done = seawall("run", str(plan), "--adopt-user-files", "--repo", str(repo), cwd=repo, env=env)
    data = status(repo)
    session = data["session"]
    # the copy taken before dispatch holds the user's content
    copy = f"refs/seawall/{session}/user-files-w1"
    assert git(repo, "show", f"{copy}:src/draft.py") == "the user's draft", done.stderr
    # the failed agent's write was not merged, and the user's file is back
    assert show(repo, "main", "src/draft.py") is None
    assert (repo / "src" / "draft.py").read_text() == "the user's draft\n"
    # a user file the agent never touched is not the agent's change
    assert show(repo, "main", "src/other.py") is None
    assert (repo / "src" / "other.py").read_text().startswith("another user file")


def test_stray_files_an_agent_wrote_are_set_aside_reported_and_restored(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    env = _spec(
        tmp_path,
        {
            "edit": [
                {
                    "writes": {"src/app.py": "x = 1\n"},
                    # seawall sees the agent's shell command write outside its scope
                    "shell": ["mkdir -p scratch && echo stray > scratch/out.txt"],
                    "final": "STATUS: done — app",
                }
            ]
        },
    )
    plan = _in_place_plan(
        tmp_path, [{"id": "edit", "prompt": "Edit.", "scope": ["src/"]}], stream_json=True
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (repo / "scratch" / "out.txt").exists()
    data = status(repo)
    session = data["session"]
    command = f"seawall restore --repo {repo} --session {session} --wave 1"
    aside = data["waves"][0]["set_aside"]
    assert aside["files"] == ["scratch/out.txt"]
    assert aside["ref"] == f"refs/seawall/{session}/unattributed-w1"
    assert aside["restore"] == command
    assert command in done.stdout + done.stderr
    state_md = (repo / ".seawall" / session / "STATE.md").read_text()
    assert "scratch/out.txt" in state_md and command in state_md
    restored = seawall(
        "restore", "--repo", str(repo), "--session", session, "--wave", "1", cwd=repo
    )
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert (repo / "scratch" / "out.txt").read_text() == "stray\n"
    assert "restored scratch/out.txt" in restored.stdout


def test_changes_no_agent_was_seen_making_stay_in_place_and_are_reported(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    env = _spec(
        tmp_path,
        {
            "edit": [
                {
                    # written without any call seawall sees: it cannot be told from a
                    # file the user or the lead wrote meanwhile
                    "writes": {"src/app.py": "x = 1\n", "step.json": '{"lead": 1}\n'},
                    "final": "STATUS: done — app",
                }
            ]
        },
    )
    plan = _in_place_plan(tmp_path, [{"id": "edit", "prompt": "Edit.", "scope": ["src/"]}])
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (repo / "step.json").read_text() == '{"lead": 1}\n'  # never moved ...
    assert show(repo, "main", "step.json") is None  # ... nor merged
    assert show(repo, "main", "src/app.py") == "x = 1\n"
    data = status(repo)
    session = data["session"]
    aside = data["waves"][0]["set_aside"]
    assert aside["outside_scope"] == ["step.json"]
    assert aside["files"] == [] and aside["ref"] == ""
    assert "step.json" in done.stderr and "left in place" in done.stderr
    state_md = (repo / ".seawall" / session / "STATE.md").read_text()
    assert "step.json" in state_md and "left in place" in state_md
    nothing = seawall("restore", "--repo", str(repo), "--session", session, cwd=repo)
    assert nothing.returncode == 0 and "set nothing aside" in nothing.stdout


def test_restore_never_overwrites_a_file_that_is_present(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    env = _spec(
        tmp_path,
        {
            "edit": [
                {
                    "writes": {"src/app.py": "x\n"},
                    "shell": ['echo "agent\'s" > out.txt'],
                    "final": "STATUS: done",
                }
            ]
        },
    )
    plan = _in_place_plan(
        tmp_path, [{"id": "edit", "prompt": "Edit.", "scope": ["src/"]}], stream_json=True
    )
    seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env, check=True)
    (repo / "out.txt").write_text("written since\n")
    restored = seawall("restore", "--repo", str(repo), cwd=repo)
    assert restored.returncode == 1, restored.stdout + restored.stderr
    assert "out.txt" in restored.stderr and "exists" in restored.stderr
    assert (repo / "out.txt").read_text() == "written since\n"


def test_the_plan_file_and_runner_queue_are_never_set_aside(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    env = _spec(
        tmp_path,
        {"edit": [{"writes": {"src/app.py": "x = 1\n"}, "final": "STATUS: done — app"}]},
    )
    (repo / "plans").mkdir()
    plan = write_plan(
        repo / "plans" / "one.toml",
        session='name = "mine"',
        tasks=[{"id": "edit", "prompt": "Edit.", "scope": ["src/"]}],
        agent_writes=tmp_path,
    )
    done = seawall("run", "plans/one.toml", "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert plan.is_file()
    assert show(repo, "main", "plans/one.toml") is None


def test_the_unattended_walk_through_keeps_its_plans_folder(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin", {"README.md": "# p\n", "src/login.py": "x = 0\n"})
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "config", "user.name", "seawall test")
    git(clone, "config", "user.email", "test@seawall.invalid")
    env = _spec(
        tmp_path,
        {"fix": [{"writes": {"src/login.py": "x = 1\n"}, "final": "STATUS: done — fixed"}]},
    )
    (clone / "plans").mkdir()
    tasks = [{"id": "fix", "prompt": "Fix the login.", "scope": ["src/login.py"]}]
    write_plan(
        clone / "plans" / "fix-login.toml",
        session='name = "fix-login"',
        tasks=tasks,
        agent_writes=tmp_path,
    )
    # the walk-through of docs/unattended.md, as written
    enqueued = seawall("runner", "enqueue", "plans/fix-login.toml", cwd=clone, env=env)
    assert enqueued.returncode == 0, enqueued.stdout + enqueued.stderr
    assert "queued fix-login-1" in enqueued.stdout
    ticked = seawall("runner", "tick", cwd=clone, env=env)
    assert ticked.returncode == 0, ticked.stdout + ticked.stderr
    assert "-> done" in ticked.stdout, ticked.stdout + ticked.stderr
    assert seawall("runner", "status", cwd=clone, env=env).returncode == 0
    assert show(clone, "HEAD", "src/login.py") == "x = 1\n"
    assert (clone / "plans" / "fix-login.toml").is_file()
    again = seawall("runner", "enqueue", "plans/fix-login.toml", cwd=clone, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
