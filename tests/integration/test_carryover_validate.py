"""`seawall carryover validate` files what a session could not file, and records it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.sessionkit import make_repo, seawall, status, write_plan


def test_validate_files_missing_carryovers_and_updates_state(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the tracker wants a folder\n")
    spec = {"x": [{"final": "STATUS: failed — KeyError: 'user'"}]}
    (tmp_path / "agents.json").write_text(json.dumps(spec))
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "v"',
        tasks=[{"id": "x", "prompt": "x", "scope": ["x.py"]}],
        extra=f'\n[session.tracker]\nkind = "local"\nurl = "{blocked}/issues"\n'
        "[session.wave_breaker]\nenabled = false\n[session.breakers]\n",
    )
    env = {"AGENT_SPEC": str(tmp_path / "agents.json")}
    run = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env=env)
    assert "not filed" in run.stderr  # the tracker failed; the session went on
    data = status(repo)
    assert all(a["issue"] is None for w in data["waves"] for a in w["agents"])

    good = tmp_path / "issues"
    done = seawall("carryover", "validate", "--repo", str(repo), "--url", str(good), cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "→ issue #1" in done.stdout
    assert len(list(good.glob("*.md"))) == 1
    data = status(repo)
    assert len(data["waves"]) == 4  # bounded: escalated after 4 attempts, breaker or not
    assert data["waves"][-1]["agents"][0]["issue"] == 1
    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    assert "→ issue #1" in state_md
    again = seawall("carryover", "validate", "--repo", str(repo), "--url", str(good), cwd=repo)
    assert again.returncode == 0 and "every SPIRAL/FAILED line has its issue" in again.stdout
    assert len(list(good.glob("*.md"))) == 1
