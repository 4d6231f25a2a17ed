"""The repository as seawall finds it: an unfinished git operation is refused up front."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.integration.sessionkit import git, make_repo, seawall, show, write_plan


def _conflicting_merge(repo: Path) -> None:
    """Leave a merge of branch ``other`` stopped on a conflict in README.md."""
    git(repo, "switch", "-q", "-c", "other")
    (repo / "README.md").write_text("# other\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "switch", "-q", "main")
    (repo / "README.md").write_text("# main\n")
    git(repo, "commit", "-q", "-am", "main")
    merge = subprocess.run(["git", "merge", "other"], cwd=repo, capture_output=True, text=True)
    assert merge.returncode != 0 and (repo / ".git" / "MERGE_HEAD").exists()


def _plan(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    spec = tmp_path / "agents.json"
    spec.write_text(
        json.dumps({"a": [{"writes": {"src/a.py": "a = 1\n"}, "final": "STATUS: done — a"}]})
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "guard"\nisolation = "worktree"',
        tasks=[{"id": "a", "prompt": "Write a.", "scope": ["src/a.py"]}],
    )
    return plan, {"AGENT_SPEC": str(spec)}


def test_a_merge_in_progress_is_refused_before_anything_starts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    _conflicting_merge(repo)
    head = git(repo, "rev-parse", "main")
    plan, env = _plan(tmp_path)
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "a merge is in progress" in done.stderr and "git merge --abort" in done.stderr
    assert not list((repo / ".seawall").glob("*/state.json"))
    assert git(repo, "rev-parse", "main") == head
    assert (repo / ".git" / "MERGE_HEAD").exists()


def test_a_rebase_in_progress_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "switch", "-q", "-c", "topic")
    (repo / "README.md").write_text("# topic\n")
    git(repo, "commit", "-q", "-am", "topic")
    git(repo, "switch", "-q", "main")
    (repo / "README.md").write_text("# main\n")
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "switch", "-q", "topic")
    rebase = subprocess.run(["git", "rebase", "main"], cwd=repo, capture_output=True, text=True)
    assert rebase.returncode != 0 and (repo / ".git" / "rebase-merge").is_dir()
    plan, env = _plan(tmp_path)
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 1
    assert "a rebase is in progress" in done.stderr and "git rebase --abort" in done.stderr
    assert not list((repo / ".seawall").glob("*/state.json"))


def test_resume_refuses_a_merge_started_after_the_crash(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan, env = _plan(tmp_path)
    killed = seawall(
        "run",
        str(plan),
        "--repo",
        str(repo),
        cwd=repo,
        env={**env, "SEAWALL_KILL_AT": "before-advance"},
    )
    assert killed.returncode == -9, killed.stderr
    _conflicting_merge(repo)
    head = git(repo, "rev-parse", "main")
    done = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert done.returncode == 1 and "a merge is in progress" in done.stderr, done.stderr
    assert git(repo, "rev-parse", "main") == head
    git(repo, "merge", "--abort")
    done = seawall("resume", "--repo", str(repo), cwd=repo, env=env)
    assert show(repo, "main", "src/a.py") is None  # the branch moved: the wave is not merged
    assert done.returncode == 3 and "moved" in done.stdout + done.stderr, done.stdout + done.stderr
