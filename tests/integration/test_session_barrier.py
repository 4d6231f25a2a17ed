"""A whole session against the scope barrier: agents are told their manifest, and the
post-wave check takes back what an agent planted in the repository's git state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from seawall.telemetry import AgentSalvaged, RepoStateChanged, read_events
from tests.integration.sessionkit import git, make_repo, seawall, show, status, write_plan
from tests.waiting import wait_until


def _changes(repo: Path, session: str) -> list[RepoStateChanged]:
    return list(read_events(repo / ".seawall" / session / "events.jsonl", RepoStateChanged))


def test_a_planted_hook_is_taken_back_and_agents_know_their_manifest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    spec = tmp_path / "agents.json"
    spec.write_text(
        json.dumps(
            {
                "planter": [
                    {
                        "writes": {
                            "src/p.py": "p = 1\n",
                            ".git/hooks/post-merge": "#!/bin/sh\necho planted\n",
                        },
                        "env_to": str(tmp_path / "planter-env.json"),
                        "final": "STATUS: done — p",
                    }
                ],
                "quiet": [{"writes": {"docs/q.md": "q\n"}, "final": "STATUS: done — q"}],
            }
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "barrier"',
        tasks=[
            {"id": "planter", "prompt": "p", "scope": ["src/"]},
            {"id": "quiet", "prompt": "q", "scope": ["docs/"]},
        ],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env={"AGENT_SPEC": str(spec)})
    assert done.returncode == 0, done.stdout + done.stderr
    session = status(repo)["session"]
    assert not (repo / ".git/hooks/post-merge").exists()
    kept = repo / ".seawall" / session / "wave-1" / "planted" / "hooks" / "post-merge"
    assert kept.read_text() == "#!/bin/sh\necho planted\n"
    changes = [e.change for e in _changes(repo, session)]
    assert [(c.area, c.name, c.restored) for c in changes] == [("hook", "hooks/post-merge", True)]
    assert show(repo, "main", "src/p.py") == "p = 1\n"  # the agent's task work still merges
    told = json.loads((tmp_path / "planter-env.json").read_text())
    manifest = Path(told["SEAWALL_MANIFEST"])
    assert manifest == repo / ".seawall" / session / "wave-1" / "scope.json"
    assert len(told["SEAWALL_MANIFEST_SHA256"]) == 64
    assert git(repo, "status", "--porcelain") == ""


def test_a_worktree_pointed_at_a_decoy_repository_is_put_back_and_named(tmp_path: Path) -> None:
    """An agent rewrites its worktree's ``.git`` file to name another repository: seawall
    reads the worktree through git's own record of it, so the merge takes the agent's
    real work only, the decoy is never written, and the change is a finding."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    decoy = tmp_path / "decoy"
    git(tmp_path, "clone", "-q", str(repo), str(decoy))
    (decoy / "README.md").write_text("# decoy\n")
    git(decoy, "-c", "user.name=d", "-c", "user.email=d@x.invalid", "commit", "-qam", "decoy")
    decoy_refs = git(decoy, "for-each-ref")
    link = f"gitdir: {decoy / '.git'}\n"
    spec = tmp_path / "agents.json"
    spec.write_text(
        json.dumps(
            {
                "mover": [
                    {
                        "writes": {"src/m.py": "m = 1\n", ".git": link},
                        "final": "STATUS: done — m",
                    }
                ],
                "quiet": [{"writes": {"docs/q.md": "q\n"}, "final": "STATUS: done — q"}],
            }
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "decoy"\nisolation = "worktree"',
        tasks=[
            {"id": "mover", "prompt": "m", "scope": ["src/"]},
            {"id": "quiet", "prompt": "q", "scope": ["docs/"]},
        ],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env={"AGENT_SPEC": str(spec)})
    assert done.returncode == 0, done.stdout + done.stderr
    session = status(repo)["session"]
    assert show(repo, "main", "src/m.py") == "m = 1\n"
    assert show(repo, "main", "docs/q.md") == "q\n"
    assert show(repo, "main", "README.md") == "# p\n"
    assert git(decoy, "for-each-ref") == decoy_refs  # nothing written there
    assert git(decoy, "status", "--porcelain") == ""
    changes = [e.change for e in _changes(repo, session)]
    assert [(c.area, c.agents, c.restored) for c in changes] == [("worktree", ("mover",), True)], (
        changes
    )
    kept = Path(str(changes[0].saved))
    assert kept.read_text() == link  # what the agent wrote, kept where agents cannot write
    assert kept.is_relative_to(repo / ".seawall" / session)
    assert "by mover (restored" in done.stderr, done.stderr


@pytest.mark.slow
def test_a_salvaged_worktree_is_read_through_its_own_git_directory(tmp_path: Path) -> None:
    """The coordinator dies while an agent that pointed its ``.git`` at a decoy still
    runs: the resumed session salvages the agent's work into the repository, never into
    the decoy, and names the change."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    decoy = tmp_path / "decoy"
    git(tmp_path, "clone", "-q", str(repo), str(decoy))
    decoy_refs = git(decoy, "for-each-ref")
    link = f"gitdir: {decoy / '.git'}\n"
    marker = tmp_path / "started"
    spec = tmp_path / "agents.json"
    first = {"marker": str(marker), "writes": {"src/m.py": "m = 1\n", ".git": link}, "sleep": 60}
    again = {"writes": {"src/m.py": "m = 2\n"}, "final": "STATUS: done — m"}
    spec.write_text(json.dumps({"mover": [first, again]}))
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "salvage"\nisolation = "worktree"',
        tasks=[{"id": "mover", "prompt": "m", "scope": ["src/"]}],
    )
    env = {**os.environ, "AGENT_SPEC": str(spec)}
    process = subprocess.Popen(
        [sys.executable, "-m", "seawall", "run", str(plan), "--repo", str(repo)],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            lambda: _planted(repo, link), timeout=60, what="the link to be planted", process=process
        )
    finally:
        process.kill()
        process.wait(timeout=30)
    resumed = seawall("resume", "--repo", str(repo), cwd=repo, env={"AGENT_SPEC": str(spec)})
    session = status(repo)["session"]
    assert git(decoy, "for-each-ref") == decoy_refs, resumed.stderr  # nothing written there
    events = repo / ".seawall" / session / "events.jsonl"
    (salvaged,) = read_events(events, AgentSalvaged)
    assert salvaged.checkpoint, salvaged  # the work read from the worktree itself
    assert git(repo, "show", f"{salvaged.checkpoint}:src/m.py") == "m = 1"
    changes = [e.change for e in _changes(repo, session)]
    assert [(c.area, c.agents) for c in changes] == [("worktree", ("mover",))], changes
    assert show(repo, "main", "src/m.py") == "m = 2\n", resumed.stdout + resumed.stderr


def _planted(repo: Path, link: str) -> bool:
    """Whether some worktree of ``repo``'s sessions holds the planted ``.git`` link."""
    root = repo.parent / f".{repo.name}.seawall-worktrees"
    return any(path.read_text() == link for path in root.glob("*/w*/*/.git") if path.is_file())
