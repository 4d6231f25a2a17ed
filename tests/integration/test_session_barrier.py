"""A whole session against the scope barrier: agents are told their manifest, and the
post-wave check takes back what an agent planted in the repository's git state."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.sessionkit import git, make_repo, seawall, show, status, write_plan


def _events(repo: Path, session: str) -> list[dict[str, object]]:
    lines = (repo / ".seawall" / session / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


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
    changes = [e for e in _events(repo, session) if e["event"] == "repo_state_changed"]
    assert [(e["area"], e["name"], e["restored"]) for e in changes] == [
        ("hook", "hooks/post-merge", True)
    ]
    assert show(repo, "main", "src/p.py") == "p = 1\n"  # the agent's task work still merges
    told = json.loads((tmp_path / "planter-env.json").read_text())
    manifest = Path(told["SEAWALL_MANIFEST"])
    assert manifest == repo / ".seawall" / session / "wave-1" / "scope.json"
    assert len(told["SEAWALL_MANIFEST_SHA256"]) == 64
    assert git(repo, "status", "--porcelain") == ""
