"""The examples run as their READMEs say."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.plan import load_plan
from tests.integration.sessionkit import make_repo, seawall, show, status

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["quickstart", "claude-code", "codex"])
def test_example_plans_are_valid(name: str) -> None:
    plan = load_plan(ROOT / "examples" / name / "plan.toml")
    assert plan.tasks


def test_quickstart_runs_offline(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "service")
    done = seawall(
        "run",
        str(ROOT / "examples" / "quickstart" / "plan.toml"),
        "--repo",
        str(repo),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = status(repo)
    statuses = {a["task"]: a["status"] for w in data["waves"] for a in w["agents"]}
    assert statuses["auth-tests"] == "no-tests-needed"
    assert statuses["api-auth"] == "done"  # after its partial was carried forward
    partial = [a for w in data["waves"] for a in w["agents"] if a["status"] == "partial"]
    assert [a["task"] for a in partial] == ["api-auth"]
    assert show(repo, "main", "docs/auth.md") is not None
    assert show(repo, "main", "src/app/models.py") is not None
