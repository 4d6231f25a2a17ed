"""Retries can escalate: a task's ``models`` name the model of each attempt. A retry
after a failure moves to the next model (the last repeats); the model an attempt used
is given to the agent and shown in ``status --json``, STATE.md and the run's lines."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.sessionkit import (
    agents_by_wave,
    make_repo,
    seawall,
    show,
    status,
    write_plan,
)


def test_a_failed_attempt_is_retried_on_the_next_model(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    spec = tmp_path / "agents.json"
    spec.write_text(
        json.dumps(
            {
                "parse": [
                    {"env_to": str(first), "final": "STATUS: failed — ValueError: bad input"},
                    {
                        "env_to": str(second),
                        "writes": {"src/parse.py": "P = 1\n"},
                        "final": "STATUS: done — parser added",
                    },
                ]
            }
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "escalate"',
        tasks=[
            {
                "id": "parse",
                "prompt": "Add the parser.",
                "scope": ["src/parse.py"],
                "models": ["small-model", "large-model"],
            }
        ],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, env={"AGENT_SPEC": str(spec)})
    assert done.returncode == 0, done.stdout + done.stderr
    # each attempt was given its model
    assert json.loads(first.read_text())["SEAWALL_MODEL"] == "small-model"
    assert json.loads(second.read_text())["SEAWALL_MODEL"] == "large-model"
    data = status(repo)
    waves = agents_by_wave(data)
    assert [wave["parse"]["model"] for wave in waves] == ["small-model", "large-model"]
    assert [wave["parse"]["status"] for wave in waves] == ["failed", "done"]
    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    assert "model small-model" in state_md and "model large-model" in state_md
    assert "attempt 2 on model large-model" in done.stderr
    assert show(repo, "main", "src/parse.py") == "P = 1\n"
