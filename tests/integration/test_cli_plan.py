"""`seawall plan`, `seawall prompt`, `--help` and `--version` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "plan.toml"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "seawall", *args],
        capture_output=True,
        text=True,
        timeout=60,
        input=stdin,
    )


def test_plan_json_shape() -> None:
    done = cli("plan", str(QUICKSTART), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [w["number"] for w in data["waves"]] == [1, 2, 3]
    for wave in data["waves"]:
        assert set(wave) >= {
            "number",
            "tasks",
            "isolation",
            "enforcement",
            "max_turns",
            "isolation_reason",
            "enforcement_reason",
            "scope_check",
        }
        assert wave["isolation"] in ("worktree", "none")
        assert wave["max_turns"] == 15
    assert data["waves"][0]["tasks"] == ["config-loader", "db-models"]


def test_plan_reports_the_overlap_split(tmp_path: Path) -> None:
    plan = tmp_path / "p.toml"
    plan.write_text(
        '[session]\nname = "o"\n'
        '[[task]]\nid = "a"\nprompt = "x"\nscope = ["src/"]\n'
        '[[task]]\nid = "b"\nprompt = "y"\nscope = ["src/b.py"]\n'
    )
    done = cli("plan", str(plan))
    assert done.returncode == 0, done.stderr
    assert "wave 1 runs a" in done.stdout and "wave 2: 1 agent(s)" in done.stdout
    assert "sub-wave" not in done.stdout  # the groups are named as the run names them
    data = json.loads(cli("plan", str(plan), "--json").stdout)
    assert [w["tasks"] for w in data["waves"]] == [["a"], ["b"]]
    assert data["waves"][0]["scope_check"]["later"] == ["b"]


def test_plan_error_names_file_task_field(tmp_path: Path) -> None:
    plan = tmp_path / "bad.toml"
    plan.write_text('[session]\nisolation = "worktre"\n[[task]]\nid = "a"\nprompt = "x"\n')
    done = cli("plan", str(plan))
    assert done.returncode == 1
    assert str(plan) in done.stderr
    assert "session.isolation" in done.stderr and "did you mean 'worktree'" in done.stderr
    assert "Traceback" not in done.stderr


def test_prompt_has_scope_turn_limit_and_status_blocks() -> None:
    done = cli("prompt", str(QUICKSTART), "auth-tests")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "TURN LIMIT: You have a maximum of 15 turns." in text
    assert "STATUS: done — <1-line summary of what was accomplished>" in text
    assert "STATUS: no-tests-needed" in text  # a test-writer task
    assert "tests/test_auth.py" in text
    unknown = cli("prompt", str(QUICKSTART), "nope")
    assert unknown.returncode == 1 and "auth-tests" in unknown.stderr


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["run"],
        ["plan"],
        ["demo"],
        ["status"],
        ["resume"],
        ["wave"],
        ["wave", "prepare"],
        ["wave", "review"],
        ["worktrees"],
        ["carryover"],
        ["hook"],
        ["hooks"],
        ["runner"],
        ["reset"],
        ["kill"],
        ["prompt"],
    ],
)
def test_help_everywhere(args: list[str]) -> None:
    done = cli(*args, "--help")
    assert done.returncode == 0, done.stderr
    assert "usage: seawall" in done.stdout


def test_version() -> None:
    done = cli("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("seawall ")
