"""`seawall run` with the default claude-code runner driving the real Claude Code CLI."""

from __future__ import annotations

import html
import json
import os
import re
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.integration.realcli import agent_clis, anthropic, claude_env
from tests.integration.sessionkit import agents_by_wave, git, make_repo, seawall, show, status

__all__ = ["agent_clis", "anthropic", "claude_env"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "claude-code" / "plan.toml"

PLAN = """
[session]
name = "{name}"
type = "feature"
agent = "claude"
{extra}
[runners.claude]
kind = "claude-code"

{tasks}
"""


def task(task_id: str, marker: str, scope: list[str]) -> str:
    scope_list = ", ".join(f'"{s}"' for s in scope)
    return (
        f'[[task]]\nid = "{task_id}"\n'
        f'prompt = "Work item {marker}: do the change."\nscope = [{scope_list}]\n'
    )


SIBLING = "python3 -c \"open('src/other.py', 'w').write('O = 1')\""
"""A write beside the granted file that the hook lets run: only the kernel refuses it."""

ONE_WAVE = "[session.wave_breaker]\nmax_rework_cycles = 0\n"
"""A failed agent is escalated at once instead of re-dispatched (keeps the test short)."""


def write_plan(path: Path, name: str, *tasks: str, extra: str = "") -> Path:
    path.write_text(PLAN.format(name=name, tasks="\n".join(tasks), extra=extra))
    return path


@pytest.mark.slow
def test_default_runner_edits_in_scope_and_is_denied_outside_live(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n", "src/__init__.py": ""})
    anthropic.add(
        Script(
            marker="SCOPE-1",
            turns=[
                # the sandbox made the granted file empty; the prompt mentions it
                # (@src/app.py), so Claude Code has it as read and Write runs at once
                ModelTurn(
                    calls=[
                        Call(
                            name="Write",
                            input={"file_path": "{cwd}/src/app.py", "content": "X = 1\n"},
                        )
                    ]
                ),
                ModelTurn(calls=[Call(name="Bash", input={"command": SIBLING})]),
                ModelTurn(calls=[Call(name="Read", input={"file_path": "{cwd}/README.md"})]),
                ModelTurn(
                    calls=[
                        Call(
                            name="Edit",
                            input={
                                "file_path": "{cwd}/README.md",
                                "old_string": "# project",
                                "new_string": "# hijacked",
                            },
                        )
                    ]
                ),
                ModelTurn(calls=[Call(name="Bash", input={"command": "git commit -am sneaky"})]),
                ModelTurn(text="Added the module.\nSTATUS: done — app added"),
            ],
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml", "claude-scope", task("app", "SCOPE-1", ["src/app.py"])
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = [r.body for r in anthropic.answered("SCOPE-1")]
    assert len(shown) == 6
    assert "NEW FILES: @src/app.py" in json.dumps(shown[0])
    results = _tool_results(shown[-1])
    assert results[0] == (False, "")  # the in-scope Write ran, with no Read before it
    sibling_error, sibling_text = results[1]
    assert sibling_error and "Permission denied" in sibling_text, sibling_text
    assert "seawall" not in sibling_text  # refused by the kernel, not by the hook
    edit_error, edit_text = results[3]
    assert edit_error and "README.md" in edit_text and "src/app.py" in edit_text, edit_text
    assert "seawall scope-denied: " in edit_text  # counted as a denial, not a failure
    commit_error, commit_text = results[4]
    assert commit_error and "git commit" in commit_text, commit_text
    assert show(repo, "main", "src/app.py") == "X = 1\n"
    assert show(repo, "main", "README.md") == "# project\n"
    assert (repo / "README.md").read_text() == "# project\n"
    assert not (repo / "src" / "other.py").exists()
    assert git(repo, "log", "--format=%s", "-1") != "sneaky"
    data = status(repo)
    agent = agents_by_wave(data)[0]["app"]
    assert agent["status"] == "done"
    assert agent["merged"] is True
    # Claude Code lists both calls the hook denied as its permission denials: they are
    # seawall's, and nothing points at a permission setting of the CLI
    session = repo / ".seawall" / data["session"]
    ours = "seawall refused 2 call(s) itself (not the agent CLI's permission settings): Edit "
    report = seawall("report", "--repo", str(repo), cwd=repo, check=True)
    page = (session / "report.html").read_text()
    for text in (done.stderr, (session / "STATE.md").read_text(), html.unescape(page)):
        assert ours in text and "the last by its command policy: `git commit" in text, text
        assert "agent CLI refused" not in text and "without permission" not in text, text
    assert 'data-field="refused_by" data-value="seawall"' in page, report.stdout
    assert 'data-value="agent-cli"' not in page


def _lines_about(text: str, task: str) -> list[str]:
    """The lines of a console log (``seawall: W1 task: ...``) or of STATE.md (an agent's
    Wave History line and the notes under it) that are about ``task``."""
    found: list[str] = []
    current = None
    for line in text.splitlines():
        heading = re.match(
            r"(?:seawall: )?W\d+ (\S+): |- W\d+ · (\S+) · |  - (\S+): inferred", line
        )
        if heading is not None:
            current = next(name for name in heading.groups() if name)
        elif not line.startswith("  - "):
            current = None
        if current == task:
            found.append(line)
    return found


def _tool_results(body: object) -> list[tuple[bool, str]]:
    """(is_error, text) of each tool result the model was sent, in order."""
    out: list[tuple[bool, str]] = []
    assert isinstance(body, dict)
    for message in body["messages"]:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                raw = block.get("content")
                text = (
                    raw
                    if isinstance(raw, str)
                    else " ".join(
                        str(part.get("text", "")) for part in raw or [] if isinstance(part, dict)
                    )
                )
                out.append((bool(block.get("is_error")), text if block.get("is_error") else ""))
    return out


def test_turn_limit_hit_is_partial_and_continued_in_its_conversation_with_the_work_saved(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n", "src/__init__.py": ""})
    write = Call(name="Write", input={"file_path": "{cwd}/src/slow.py", "content": "S = 1\n"})
    look = Call(name="Bash", input={"command": "ls src"})
    finished = ModelTurn(text="Finished the rest.\nSTATUS: done — all steps")
    anthropic.add(
        Script(
            marker="LIMIT-1",
            turns=[ModelTurn(calls=[write]), ModelTurn(calls=[look]), finished],
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml",
        "claude-limit",
        task("slow", "LIMIT-1", ["src/slow.py"]) + "max_turns = 2\n",
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    data = status(repo)
    first = agents_by_wave(data)[0]["slow"]
    assert first["status"] == "partial", (first, done.stdout, done.stderr)
    assert first.get("issue") is None  # carried forward, not filed as a carryover
    assert "turn limit" in first["remaining"], first
    second = agents_by_wave(data)[1]["slow"]
    assert second["status"] == "done"
    # claude's own --max-turns ended the first run after two requests; the second
    # continued that conversation (its turns were not asked for again), told why
    requests = anthropic.answered("LIMIT-1")
    assert [r.turn for r in requests] == [0, 1, 2]
    assert second["continued"] == first["conversation"] != ""
    assert "CONTINUE: you were stopped (turn limit" in json.dumps(requests[2].body)
    assert show(repo, "main", "src/slow.py") == "S = 1\n"  # the first agent's work kept
    assert done.returncode == 0, done.stdout + done.stderr


def test_permission_denials_of_the_cli_are_named(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n"})
    anthropic.add(
        Script(
            marker="DENY-1",
            turns=[
                ModelTurn(
                    calls=[
                        Call(name="Write", input={"file_path": "{cwd}/notes.md", "content": "n\n"})
                    ]
                ),
                ModelTurn(text="Could not write.\nSTATUS: failed — no permission to write"),
            ],
        )
    )
    plan = write_plan(
        tmp_path / "plan.toml", "claude-deny", task("notes", "DENY-1", ["notes.md"]), extra=ONE_WAVE
    )
    text = plan.read_text().replace(
        'kind = "claude-code"', 'kind = "claude-code"\noptions = { permissions = "none" }'
    )
    plan.write_text(text)
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    assert not (repo / "notes.md").exists()
    named = "the agent CLI refused 1 call(s) without permission: Write "
    assert named in done.stderr, done.stderr
    data = status(repo)
    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    assert named in state_md and "notes.md" in state_md
    for shown in (done.stderr, state_md):  # the CLI's own: where its permissions are set
        assert "not seawall's: see the runner's permissions" in shown, shown
        assert "`options.permissions`" in shown and "seawall refused" not in shown, shown
    runs = list((repo / ".seawall" / data["session"]).rglob("*.json"))
    assert any(re.search(r'"denials": ?\["Write ', p.read_text()) for p in runs), runs


@pytest.mark.slow
def test_the_claude_code_example_plan_works_as_shipped(
    anthropic: AnthropicServer,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    venv_bin = str(Path(sys.executable).parent)  # `python3 -m pytest`, the plan's check
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}{os.environ['PATH']}")
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/config/__init__.py": ""})
    code = "def parse(keys):\n    unknown = set(keys) - {'name'}\n    if unknown:\n"
    code += "        raise KeyError(sorted(unknown)[0])\n"
    test = "import sys\nsys.path.insert(0, 'src')\nfrom config.parse import parse\n\n"
    test += "def test_rejects():\n    try:\n        parse(['x'])\n    except KeyError:\n"
    test += "        return\n    raise AssertionError\n"
    write = "{cwd}/"
    anthropic.add(
        Script(
            marker="reject unknown keys",
            turns=[
                ModelTurn(
                    calls=[
                        Call(
                            name="Write",
                            input={"file_path": write + "src/config/parse.py", "content": code},
                        ),
                        Call(
                            name="Write",
                            input={"file_path": write + "tests/test_config.py", "content": test},
                        ),
                    ]
                ),
                ModelTurn(
                    text="Unknown keys are rejected.\nSTATUS: done — parse rejects unknown keys"
                ),
            ],
        )
    )
    anthropic.add(
        Script(
            marker="Document the config keys",
            turns=[
                ModelTurn(
                    calls=[
                        Call(
                            name="Write",
                            input={"file_path": write + "docs/config.md", "content": "# name\n"},
                        )
                    ]
                ),
                ModelTurn(text="Documented.\nSTATUS: done — docs written"),
            ],
        )
    )
    done = seawall("run", str(EXAMPLE), "--repo", str(repo), cwd=repo, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert show(repo, "main", "src/config/parse.py") == code
    assert show(repo, "main", "docs/config.md") == "# name\n"
    waves = agents_by_wave(status(repo))
    assert waves[0]["parse-config"]["status"] == "done"
    assert waves[1]["config-docs"]["status"] == "done"


def test_seawall_plan_names_each_runners_live_barrier() -> None:
    done = seawall("plan", str(EXAMPLE), cwd=EXAMPLE.parent, check=True)
    assert "barrier (claude): the kernel's sandbox (Landlock)" in done.stdout
    assert "seawall's PreToolUse hook: scope and command policy" in done.stdout
    codex = seawall(
        "plan", str(EXAMPLE.parents[1] / "codex" / "plan.toml"), "--json", cwd=EXAMPLE.parent
    )
    assert "Codex sandbox (workspace-write" in codex.stdout


def test_a_cli_that_cannot_start_halts_with_its_stderr_shown(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n"})
    plan = write_plan(tmp_path / "plan.toml", "claude-flag", task("x", "FLAG-1", ["x.md"]))
    plan.write_text(
        plan.read_text().replace(
            'kind = "claude-code"', 'kind = "claude-code"\nargv = ["--no-such-flag"]'
        )
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    assert done.returncode != 0
    assert not anthropic.requests  # it never got as far as the model
    assert "no-such-flag" in done.stderr, done.stderr  # claude's own words, on the console
    data = status(repo)
    assert data["phase"] == "halted"
    session = repo / ".seawall" / str(data["session"])
    assert "no-such-flag" in (session / "STATE.md").read_text()
    events = (session / "events.jsonl").read_text()
    assert "agent_start_failed" in events and "no-such-flag" in events
    assert not list((repo / ".seawall" / "issues").glob("*.md"))  # not the task's failure


@pytest.mark.slow
def test_a_done_after_only_denied_edits_is_failed_with_the_denials_as_its_reason(
    anthropic: AnthropicServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """Two agents in one wave, each claiming done after its only edit was refused: one by
    seawall's guard (out of scope), one by Claude Code's own permission layer."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# project\n", "src/__init__.py": ""})
    outside = Call(name="Write", input={"file_path": "{cwd}/docs/x.md", "content": "x\n"})
    refused = Call(name="Write", input={"file_path": "{cwd}/src/b.py", "content": "B = 1\n"})
    for marker, call in (("FALSE-GUARD", outside), ("FALSE-CLI", refused)):
        anthropic.add(
            Script(
                marker=marker,
                turns=[ModelTurn(calls=[call]), ModelTurn(text="Written.\nSTATUS: done — added")],
            )
        )
    bare = task("bare", "FALSE-CLI", ["src/b.py"]) + 'agent = "claude-bare"\n'
    plan = write_plan(
        tmp_path / "plan.toml",
        "claude-false-done",
        task("guarded", "FALSE-GUARD", ["src/a.py"]),
        bare,
        extra=ONE_WAVE,
    )
    plan.write_text(
        plan.read_text()
        + '\n[runners.claude-bare]\nkind = "claude-code"\noptions = { permissions = "none" }\n'
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    assert not (repo / "docs" / "x.md").exists() and not (repo / "src" / "b.py").exists()
    data = status(repo)
    agents = agents_by_wave(data)[0]
    guarded, bare_agent = agents["guarded"], agents["bare"]
    assert guarded["status"] == "failed", (guarded, done.stdout, done.stderr)
    assert "seawall's guard denied 1 call(s) (seawall scope-denied: " in guarded["summary"]
    assert bare_agent["status"] == "failed", bare_agent
    assert "the agent CLI refused 1 call(s): Write " in bare_agent["summary"], bare_agent
    console = done.stdout + done.stderr
    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    for shown in (console, state_md):
        assert "reported done, but nothing changed and seawall's guard denied" in shown, shown
        assert "reported done, but nothing changed and the agent CLI refused" in shown, shown
        guarded_notes = _lines_about(shown, "guarded")
        assert any("seawall refused 1 call(s) itself" in n for n in guarded_notes), shown
        assert not any("without permission" in n for n in guarded_notes), guarded_notes
        bare_notes = _lines_about(shown, "bare")
        assert any("the agent CLI refused 1 call(s) without permission" in n for n in bare_notes)
        assert not any("seawall refused" in n for n in bare_notes), bare_notes
    record = json.loads(
        next(
            (repo / ".seawall" / data["session"] / "agents" / "guarded").glob("*-run.json")
        ).read_text()
    )
    assert record["guard_denials"] == 1 and record["writes"] == 0, record
    assert done.returncode != 0
