"""`seawall run` with the codex runner driving the real Codex CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.sandbox.launch import available
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.fakes.openai_server import OpenAIResponsesServer
from tests.integration.realcli import agent_clis, codex_env, openai
from tests.integration.sessionkit import agents_by_wave, git, make_repo, seawall, show, status

__all__ = ["agent_clis", "codex_env", "openai"]

BAD_PATCH = "*** Begin Patch\n*** Update File: src/gone.py\n@@\n-old\n+new\n*** End Patch\n"


def write_plan(
    path: Path, name: str, tasks: list[dict[str, object]], extra: str = "", *, model: str = ""
) -> Path:
    lines = [
        "[session]",
        f'name = "{name}"',
        'type = "feature"',
        'agent = "codex"',
        extra,
        "[runners.codex]",
        'kind = "codex"',
        f"model = {json.dumps(model)}" if model else "",
    ]
    for task in tasks:
        lines.append("[[task]]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in task.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
def test_false_done_after_failed_patches_is_not_taken_at_its_word(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    patch = Call(name="apply_patch", input=BAD_PATCH)
    openai.add(
        Script(
            marker="CXS-FALSE",
            turns=[
                ModelTurn(calls=[patch]),
                ModelTurn(calls=[patch]),
                ModelTurn(text="Patched the module.\nSTATUS: done — module patched"),
            ],
        )
    )
    openai.add(Script(marker="gone", turns=[ModelTurn(text="STATUS: failed — no such file")]))
    plan = write_plan(
        tmp_path / "plan.toml",
        "codex-false-done",
        [{"id": "gone", "prompt": "Work item CXS-FALSE.", "scope": ["src/gone.py"]}],
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    data = status(repo)
    first = agents_by_wave(data)[0]["gone"]
    assert first["status"] == "failed", (first, done.stdout, done.stderr)
    assert "2 edit(s) failed" in first["summary"], first
    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    assert "nothing changed and 2 edit(s) failed" in state_md


@pytest.mark.slow
def test_codex_cost_is_priced_kept_and_trips_the_cost_budget(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    add = "*** Begin Patch\n*** Add File: src/one.py\n+ONE = 1\n*** End Patch\n"
    openai.add(
        Script(
            marker="CXS-COST",
            turns=[
                ModelTurn(calls=[Call(name="apply_patch", input=add)], input_tokens=20_000),
                ModelTurn(text="Added.\nSTATUS: done — one added", input_tokens=20_000),
            ],
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        "codex-cost",
        [
            {"id": "one", "prompt": "Work item CXS-COST.", "scope": ["src/one.py"]},
            {
                "id": "two",
                "prompt": "Work item CXS-NEVER.",
                "scope": ["src/two.py"],
                "depends_on": ["one"],
            },
        ],
        extra=(
            "[session.budgets]\ncost_usd = 0.05\n"
            '[session.prices."gpt-5.5"]\ninput = 2.0\noutput = 8.0\n'
        ),
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    data = status(repo)
    agent = agents_by_wave(data)[0]["one"]
    assert agent["status"] == "done", (agent, done.stdout, done.stderr)
    assert agent["input_tokens"] == 40_000 and agent["output_tokens"] == 160
    expected = (40_000 * 2.0 + 160 * 8.0) / 1_000_000
    assert abs(agent["cost_usd"] - expected) < 1e-9, agent
    assert agent["cost_estimated"] is True
    assert data["breaker"]["tripped"] is True, data["breaker"]
    assert "budget" in data["breaker"]["detail"], data["breaker"]
    assert len(data["waves"]) == 1  # the second task never started
    assert not openai.answered("CXS-NEVER")
    assert done.returncode != 0
    runs = list((repo / ".seawall" / data["session"] / "agents" / "one").glob("*-run.json"))
    assert runs and json.loads(runs[0].read_text())["counts"]["input_tokens"] == 40_000


@pytest.mark.slow
@pytest.mark.skipif(not available(), reason="this kernel has no Landlock")
def test_codex_adds_the_absent_scope_file_and_the_kernel_refuses_a_sibling(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], tmp_path: Path
) -> None:
    """In place, a scope file that does not exist yet is granted alone: Codex's
    ``*** Add File`` writes it (the sandbox made it empty first); a patch adding a file
    beside it and a shell write of another are refused by the kernel."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    mine = "*** Begin Patch\n*** Add File: src/one.py\n+ONE = 1\n*** End Patch\n"
    sibling = "*** Begin Patch\n*** Add File: src/two.py\n+TWO = 2\n*** End Patch\n"
    shell = Call(name="exec_command", input={"cmd": "echo 3 > src/three.py"})
    openai.add(
        Script(
            marker="CXS-NEW",
            turns=[
                ModelTurn(calls=[Call(name="apply_patch", input=mine)]),
                ModelTurn(calls=[Call(name="apply_patch", input=sibling)]),
                ModelTurn(calls=[shell]),
                ModelTurn(text="Added one.\nSTATUS: done — one added"),
            ],
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        "codex-new-file",
        [{"id": "one", "prompt": "Work item CXS-NEW.", "scope": ["src/one.py"]}],
        extra='isolation = "none"\nenforcement = "strict"\n',
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    outputs = _call_outputs(openai.answered("CXS-NEW")[-1].body)
    assert len(outputs) == 3, outputs
    assert "Success. Updated the following files:\nA src/one.py" in outputs[0], outputs
    assert "Failed to write file" in outputs[1] and "src/two.py" in outputs[1], outputs
    assert "src/three.py: Permission denied" in outputs[2], outputs
    assert "agents are sandboxed by the kernel (Landlock)" in done.stderr
    agent = agents_by_wave(status(repo))[0]["one"]
    assert agent["status"] == "done", (agent, done.stdout, done.stderr)
    assert show(repo, "main", "src/one.py") == "ONE = 1\n"
    assert not (repo / "src" / "two.py").exists()
    assert not (repo / "src" / "three.py").exists()
    assert git(repo, "status", "--porcelain") == ""


def _call_outputs(body: object) -> list[str]:
    """The output text of each tool call the model was sent back, in order."""
    assert isinstance(body, dict)
    return [
        str(item.get("output"))
        for item in body["input"]
        if isinstance(item, dict) and str(item.get("type", "")).endswith("call_output")
    ]


LOCAL_MODEL = "local-coder"
"""A model Codex has no metadata for: it edits with ``apply_patch`` through the shell."""


def heredoc(patch: str) -> Call:
    """``apply_patch <<'PATCH'`` ... ``PATCH`` as an ``exec_command``."""
    return Call(name="exec_command", input={"cmd": f"apply_patch <<'PATCH'\n{patch}PATCH"})


@pytest.mark.slow
def test_false_done_after_rejected_shell_patches_is_failed(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    openai.add(
        Script(
            marker="CXS-SHELL-FALSE",
            turns=[
                ModelTurn(calls=[heredoc(BAD_PATCH)]),
                ModelTurn(calls=[heredoc(BAD_PATCH)]),
                ModelTurn(text="Patched the module.\nSTATUS: done — module patched"),
            ],
        )
    )
    openai.add(Script(marker="gone", turns=[ModelTurn(text="STATUS: failed — no such file")]))
    plan = write_plan(
        tmp_path / "plan.toml",
        "codex-shell-false-done",
        [{"id": "gone", "prompt": "Work item CXS-SHELL-FALSE.", "scope": ["src/gone.py"]}],
        model=LOCAL_MODEL,
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    outputs = _call_outputs(openai.answered("CXS-SHELL-FALSE")[-1].body)
    assert len(outputs) == 2 and all("verification failed" in o for o in outputs), outputs
    data = status(repo)
    first = agents_by_wave(data)[0]["gone"]
    assert first["status"] == "failed", (first, done.stdout, done.stderr)
    assert "2 edit(s) failed" in first["summary"], first
    assert "FAILED: reported done, but nothing changed and 2 edit(s) failed" in done.stderr
    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    assert "nothing changed and 2 edit(s) failed" in state_md


@pytest.mark.slow
@pytest.mark.skipif(not available(), reason="this kernel has no Landlock")
def test_shell_patches_in_place_are_the_agents_edits_out_of_scope_ones_its_violation(
    openai: OpenAIResponsesServer, codex_env: dict[str, str], tmp_path: Path
) -> None:
    """In place, each heredoc patch gets its checkpoint and its files are the agent's;
    a patch outside its scope (``docs/``, which the plan lets every sandbox write) is the
    agent's scope violation, not a change of nobody's set aside."""
    repo = make_repo(
        tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": "", "docs/notes.md": "n\n"}
    )
    add = "*** Begin Patch\n*** Add File: src/one.py\n+ONE = 1\n*** End Patch\n"
    update = "*** Begin Patch\n*** Update File: src/one.py\n@@\n-ONE = 1\n+ONE = 2\n*** End Patch\n"
    stray = "*** Begin Patch\n*** Update File: docs/notes.md\n@@\n-n\n+hijacked\n*** End Patch\n"
    openai.add(
        Script(
            marker="CXS-SHELL-SCOPE",
            turns=[
                ModelTurn(calls=[heredoc(add)]),
                ModelTurn(calls=[heredoc(update)]),
                ModelTurn(calls=[heredoc(stray)]),
                ModelTurn(text="Added one.\nSTATUS: done — one added"),
            ],
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        "codex-shell-scope",
        [{"id": "one", "prompt": "Work item CXS-SHELL-SCOPE.", "scope": ["src/one.py"]}],
        extra=(
            'isolation = "none"\nenforcement = "strict"\n'
            f"sandbox_writable = [{json.dumps(str(repo / 'docs'))}]\n"
        ),
        model=LOCAL_MODEL,
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    outputs = _call_outputs(openai.answered("CXS-SHELL-SCOPE")[-1].body)
    assert len(outputs) == 3 and all("Success." in o for o in outputs), outputs
    data = status(repo)
    assert agents_by_wave(data)[0]["one"]["status"] == "done", (done.stdout, done.stderr)
    folder = repo / ".seawall" / data["session"]
    ledger = json.loads((folder / "state.json").read_text())
    agent = ledger["waves"][0]["agents"][0]
    assert agent["scope_violations"] == ["docs/notes.md"], (agent, done.stdout, done.stderr)
    assert agent["touched"] == ["docs/notes.md", "src/one.py"], agent
    events = [json.loads(row) for row in (folder / "events.jsonl").read_text().splitlines()]
    assert not [e for e in events if e["event"] == "unattributed_changes"], events
    violations = [e for e in events if e["event"] == "scope_violation"]
    assert [(v["agent"], v["files"], v["action"]) for v in violations] == [
        ("one", ["docs/notes.md"], "left out of the merge")
    ]
    ref = f"refs/seawall/{data['session']}/one"
    checkpoints = git(repo, "log", "--format=%s", f"{data['waves'][0]['base']}..{ref}")
    # one per edit, as seawall reads them from the rollout: with a scripted model that
    # answers at once, the second patch can land before the first one's result is read,
    # and that checkpoint then holds both (a real model's turn takes seconds)
    assert checkpoints.splitlines() in (["checkpoint: one"] * 3, ["checkpoint: one"] * 2)
    assert agent["run"]["writes"] == 3, agent["run"]  # every patch was seen as an edit
    assert show(repo, "main", "src/one.py") == "ONE = 2\n"
    assert show(repo, "main", "docs/notes.md") == "n\n"
    assert git(repo, "status", "--porcelain") == ""
