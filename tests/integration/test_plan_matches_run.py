"""``seawall plan`` tells the truth about the run: for every example plan, the waves it
shows (numbers, tasks, isolation, enforcement) are the waves a session of that plan
dispatches, and the barrier it names for each wave's runners is the sandbox dispatch
builds for those agents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seawall.model import Enforcement, RunnerSpec
from seawall.plan import load_plan
from seawall.runner import build_runner
from seawall.sandbox.selection import agent_sandbox
from tests.integration.sessionkit import make_repo, seawall

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(
    path for path in (ROOT / "examples").rglob("*.toml") if "[[task]]" in path.read_text()
)


def _run_waves(plan: Path, repo: Path) -> list[dict[str, Any]]:
    """The waves a session of ``plan`` dispatches when every agent reports done, as the
    lead's loop (`seawall next`) hands them out."""
    where = ("--repo", str(repo))
    step = json.loads(seawall("next", str(plan), *where, cwd=repo, check=True).stdout)
    waves = []
    while step["action"] == "dispatch":
        wave = step["wave"]
        waves.append(wave)
        outputs = {a["task"]: "STATUS: done — nothing left" for a in wave["agents"]}
        answer = seawall(
            "next", "--input", "-", *where, cwd=repo, stdin=json.dumps({"outputs": outputs})
        )
        assert answer.returncode == 0, answer.stdout + answer.stderr
        step = json.loads(answer.stdout)
    assert step["action"] == "done", step
    return waves


@pytest.mark.parametrize("plan", EXAMPLES, ids=[str(p.relative_to(ROOT)) for p in EXAMPLES])
def test_the_plan_view_names_the_waves_and_barriers_the_run_has(plan: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    shown = json.loads(seawall("plan", str(plan), "--json", cwd=repo, check=True).stdout)
    ran = _run_waves(plan, repo)
    assert [(w["number"], w["tasks"]) for w in shown["waves"]] == [
        (w["wave"], [a["task"] for a in w["agents"]]) for w in ran
    ]
    text = seawall("plan", str(plan), cwd=repo, check=True).stdout
    assert "sub-wave" not in text
    loaded = load_plan(plan)
    tasks = {task.id: task for task in loaded.tasks}
    for planned, dispatched in zip(shown["waves"], ran, strict=True):
        assert planned["isolation"] == dispatched["isolation"]
        assert planned["enforcement"] == dispatched["enforcement"]
        assert f"\nwave {dispatched['wave']}: " in text
        for agent in dispatched["agents"]:
            task = tasks[agent["task"]]
            name = task.agent or loaded.session.agent
            runner = build_runner(loaded.runners.get(name) or RunnerSpec(name=name, kind=name))
            built = agent_sandbox(  # what dispatch gives this agent
                task_id=task.id,
                workspace=Path(agent["workspace"]),
                in_place=dispatched["isolation"] == "none",
                scope=task.scope,
                enforcement=Enforcement(dispatched["enforcement"]),
                accept_hooks_only=loaded.session.accept_hooks_only,
                starts_processes=runner.starts_processes,
            )
            barrier = planned["barriers"][name]
            assert barrier.startswith("the kernel's sandbox") == (built is not None), barrier
            assert f"barrier ({name}): {barrier}" in text
