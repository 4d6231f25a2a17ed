"""One session per repository, and a target branch that moved under a halted session."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pygit2

from seawall.exitcodes import ExitCode
from seawall.git import AgentChange, merge_wave
from tests.integration.sessionkit import git, make_repo, seawall, show, status, write_plan
from tests.waiting import wait_until


def _plan(
    tmp_path: Path, name: str, spec: dict[str, list[dict[str, object]]]
) -> tuple[Path, dict[str, str]]:
    spec_file = tmp_path / f"{name}.json"
    spec_file.write_text(json.dumps(spec))
    plan = write_plan(
        tmp_path / f"{name}.toml",
        session=f'name = "{name}"\nisolation = "worktree"',
        tasks=[{"id": task, "prompt": f"Do {task}.", "scope": [f"src/{task}.py"]} for task in spec],
    )
    return plan, {"AGENT_SPEC": str(spec_file)}


def test_one_live_session_per_repository_and_a_dead_holder_is_taken_over(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "started"
    slow: dict[str, object] = {"marker": str(marker), "sleep": 120, "final": "STATUS: done — a"}
    quick: dict[str, object] = {"writes": {"src/a.py": "a = 1\n"}, "final": "STATUS: done — a"}
    first_plan, env = _plan(tmp_path, "first", {"a": [slow, quick]})
    second_plan, second_env = _plan(
        tmp_path,
        "second",
        {"b": [{"writes": {"src/b.py": "b = 1\n"}, "final": "STATUS: done — b"}]},
    )
    with subprocess.Popen(
        [sys.executable, "-m", "seawall", "run", str(first_plan), "--repo", str(repo)],
        cwd=repo,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    ) as first:
        try:
            wait_until(marker.exists, timeout=60, what="the agent to start", process=first)
            holder = json.loads((repo / ".seawall" / "lock").read_text())
            assert holder["pid"] == first.pid
            for command in (
                ["run", str(second_plan)],
                ["resume"],
                ["wave", "prepare", str(second_plan)],
            ):
                done = seawall(*command, "--repo", str(repo), cwd=repo, env=second_env)
                assert done.returncode == ExitCode.ERROR, done.stdout + done.stderr
                assert f"session {holder['session']} (pid {first.pid}" in done.stderr, done.stderr
                assert "One session runs per repository" in done.stderr
        finally:
            os.killpg(first.pid, signal.SIGKILL)  # the coordinator dies, and its agent with it
            first.wait(timeout=30)
    assert not any(p.name.startswith("second") for p in (repo / ".seawall").iterdir())
    done = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert f"took over the repository lock of session {holder['session']}" in done.stderr
    assert f"pid {first.pid} is no longer running" in done.stderr
    assert show(repo, "main", "src/a.py") == "a = 1\n"
    assert (repo / ".seawall" / "lock").read_text() == ""  # released
    done = seawall("run", str(second_plan), "--repo", str(repo), cwd=repo, env=second_env)
    assert done.returncode == ExitCode.OK and "took over" not in done.stderr, done.stderr


def test_resume_rebase_merges_the_wave_onto_the_moved_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "docs/notes.md": "n\n"})
    plan, env = _plan(
        tmp_path,
        "moved",
        {
            "a": [{"writes": {"src/a.py": "a = 1\n"}, "final": "STATUS: done — a"}],
            "b": [{"writes": {"src/b.py": "b = 1\n"}, "final": "STATUS: done — b"}],
        },
    )
    killed = seawall(
        "run",
        str(plan),
        "--repo",
        str(repo),
        cwd=repo,
        env={**env, "SEAWALL_KILL_AT": "before-advance"},
    )
    assert killed.returncode == -9, killed.stderr
    (repo / "docs" / "notes.md").write_text("someone else's change\n")
    git(repo, "commit", "-q", "-am", "someone else moved main")
    moved = git(repo, "rev-parse", "main")
    halted = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert halted.returncode == ExitCode.HALTED, halted.stdout + halted.stderr
    assert "seawall resume --rebase" in halted.stdout + halted.stderr
    assert git(repo, "rev-parse", "main") == moved
    done = seawall("resume", "--rebase", "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert "merging the wave onto the new tip" in done.stderr
    assert git(repo, "merge-base", "--is-ancestor", moved, "main") == ""
    assert (
        show(repo, "main", "src/a.py") == "a = 1\n" and show(repo, "main", "src/b.py") == "b = 1\n"
    )
    assert show(repo, "main", "docs/notes.md") == "someone else's change\n"
    assert git(repo, "status", "--porcelain") == ""
    data = status(repo)
    assert data["phase"] == "done"
    assert all(agent["merged"] for agent in data["waves"][0]["agents"])


def test_merging_onto_a_moved_tip_keeps_the_branch_and_sets_a_conflict_aside(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "repo", {"shared.txt": "one\ntwo\n", "own.txt": "x\n"})
    repo = pygit2.Repository(str(root))
    base = str(repo.head.target)
    sig = pygit2.Signature("t", "t@t")

    def commit_on(parent: str, files: dict[str, str]) -> str:
        tree = repo.revparse_single(parent).peel(pygit2.Commit).tree
        builder = repo.TreeBuilder(tree)
        for name, text in files.items():
            builder.insert(name, repo.create_blob(text.encode()), pygit2.enums.FileMode.BLOB)
        return str(
            repo.create_commit(
                None, sig, sig, "c", builder.write(), [repo.revparse_single(parent).id]
            )
        )

    tip = commit_on(base, {"shared.txt": "ONE (the branch)\ntwo\n"})
    clash = commit_on(base, {"shared.txt": "one (agent)\ntwo\n"})
    clean = commit_on(base, {"new.txt": "new\n"})
    result = merge_wave(
        root,
        base=base,
        changes=[
            AgentChange(task_id="clash", commit=clash),
            AgentChange(task_id="clean", commit=clean),
        ],
        session_id="s",
        wave=1,
        onto=tip,
    )
    assert result.base == tip
    integration = repo.revparse_single(result.integration).peel(pygit2.Commit)
    assert repo.descendant_of(integration.id, repo.revparse_single(tip).id)
    assert integration.tree["shared.txt"].peel(pygit2.Blob).data == b"ONE (the branch)\ntwo\n"
    assert integration.tree["new.txt"].peel(pygit2.Blob).data == b"new\n"
    (resolution,) = result.resolutions
    assert (resolution.path, resolution.kept_task) == ("shared.txt", "the target branch")
    assert [fix.source_task for fix in result.fix_tasks] == ["clash"]
