"""The plan a session records is the plan it runs: ``--accept-hooks-only`` on the
command line is in the recorded plan, and a plan file run as it is is recorded as
written, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.plan import parse_plan
from tests.integration.sessionkit import make_repo, seawall, write_plan
from tests.reliability.kit import ledger


@pytest.mark.parametrize("flag", [True, False])
def test_the_recorded_plan_is_the_plan_run(tmp_path: Path, flag: bool) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = write_plan(
        tmp_path / "plan.toml",
        session='name = "recorded"\nisolation = "none"\n# a comment the file keeps',
        tasks=[{"id": "a", "prompt": "Write a.", "scope": ["a.txt"]}],
    )
    text = plan.read_text().replace("accept_hooks_only = true", "")
    plan.write_text(text)
    spec = tmp_path / "agents.json"
    spec.write_text(json.dumps({"a": [{"writes": {"a.txt": "a\n"}, "final": "STATUS: done"}]}))
    argv = ["run", str(plan), "--repo", str(repo), *(["--accept-hooks-only"] if flag else [])]
    done = seawall(*argv, cwd=repo, env={"AGENT_SPEC": str(spec)})
    assert done.returncode == 0, done.stderr

    recorded = ledger(repo).plan_text
    assert parse_plan(recorded).session.accept_hooks_only is flag
    assert [task.id for task in parse_plan(recorded).tasks] == ["a"]
    assert (recorded == text) is not flag  # a plan run as written is recorded as written
