"""What is merged with a warning is said where people look: an agent's files outside its
scope in a ``warn`` wave are named on the console and in STATE.md, not only in
events.jsonl and the report."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.sessionkit import make_repo, seawall, show, write_plan


def test_out_of_scope_files_merged_in_a_warn_wave_are_on_the_console_and_in_state_md(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "app": [
                    {
                        "writes": {"src/app.py": "x = 2\n", "NOTES.md": "stray\n"},
                        "final": "STATUS: done — x is 2",
                    }
                ]
            }
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "warned"\nisolation = "worktree"\nenforcement = "warn"',
        tasks=[{"id": "app", "prompt": "Bump x.", "scope": ["src/app.py"]}],
    )
    done = seawall(
        "run", str(plan), "--repo", str(repo), "--heartbeat", "0",
        cwd=repo, env={"AGENT_SPEC": str(spec)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    said = "out of scope: `NOTES.md`: merged with a warning (enforcement warn): review them"
    assert f"W1 app: {said}" in done.stderr
    state_md = next((repo / ".seawall").glob("warned-*/STATE.md")).read_text()
    assert f"  - {said}" in state_md
    assert show(repo, "main", "NOTES.md") == "stray\n"  # merged, as warn does
