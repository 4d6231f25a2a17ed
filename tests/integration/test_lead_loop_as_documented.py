"""The lead loop of docs/lead-agents.md, run as written, from the repository root:
``seawall next plan.toml --json > step.json``, dispatch, ``seawall next --input
outputs.json > step.json``, until done. Every file the lead wrote beside the agents'
work stays where it is, and every answer parses, through three in-place waves."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.integration.sessionkit import ROOT, make_repo, show

DOC = ROOT / "docs" / "lead-agents.md"


def _documented_commands() -> tuple[str, str]:
    """The two commands of the doc's script, exactly as written (comments dropped)."""
    text = DOC.read_text()
    first = re.search(r"^(seawall next plan\.toml --json > step\.json)", text, re.M)
    again = re.search(r"^(seawall next --input outputs\.json > step\.json)", text, re.M)
    assert first and again, "docs/lead-agents.md no longer shows the loop"
    return first.group(1), again.group(1)


def _shell(command: str, repo: Path) -> None:
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(
        ["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode in (0, 4), f"{command}: {done.returncode}\n{done.stderr}"


def test_the_documented_lead_loop_keeps_every_file_of_the_lead(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n"})
    (repo / "plan.toml").write_text(
        '[session]\nname = "lead"\nisolation = "none"\n'
        '[[task]]\nid = "one"\nprompt = "Write one."\nscope = ["src/one.py"]\n'
        '[[task]]\nid = "two"\nprompt = "Write two."\nscope = ["src/two.py"]\n'
        'depends_on = ["one"]\n'
        '[[task]]\nid = "three"\nprompt = "Write three."\nscope = ["src/three.py"]\n'
        'depends_on = ["two"]\n'
    )
    (repo / "lead-notes.md").write_text("the lead's own notes\n")
    first, again = _documented_commands()
    _shell(first, repo)
    waves = 0
    while True:
        step = json.loads((repo / "step.json").read_text())  # every answer parses
        assert (repo / "lead-notes.md").read_text() == "the lead's own notes\n"
        if step.get("done"):
            break
        wave = step["wave"]
        assert wave["isolation"] == "none", step
        waves += 1
        outputs = {}
        for agent in wave["agents"]:  # the lead's dispatch: each agent writes its scope
            (name,) = agent["scope"]
            target = Path(agent["workspace"]) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"{agent['task']} = 1\n")
            outputs[agent["task"]] = f"Wrote {name}.\nSTATUS: done — {agent['task']}"
        (repo / "outputs.json").write_text(json.dumps({"outputs": outputs}))
        _shell(again, repo)
        assert (repo / "outputs.json").is_file()  # the lead's answer is still there
        assert waves <= 4, "the loop never ended"
    assert waves == 3
    for name in ("one", "two", "three"):
        assert show(repo, "main", f"src/{name}.py") == f"{name} = 1\n"
    for lead_file in ("step.json", "outputs.json", "lead-notes.md", "plan.toml"):
        assert (repo / lead_file).is_file(), lead_file
        assert show(repo, "main", lead_file) is None, lead_file  # never merged
