"""The mistakes a new user makes, through the real command line: each error names what
was wrong, where (file:line[:column], the task, the field path) and what to do, with the
likely intent for a name the user typed; and an error outside a repository names no
session that was never created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.exitcodes import ExitCode
from tests.integration.sessionkit import make_repo, seawall

HEAD = '[session]\nname = "x"\n'
TASK = '[[task]]\nid = "a"\nprompt = "p"\n'

MISTAKES = [
    (
        "runner-name",
        HEAD + 'agent = "farewel"\n[runners.farewell]\nkind = "command"\nargv = ["true"]\n' + TASK,
        "plan.toml:3, field 'session.agent': unknown runner 'farewel'; did you mean 'farewell'?",
    ),
    (
        "task-runner",
        HEAD + TASK + 'agent = "codx"\n',
        "plan.toml:6, task 'a', field 'agent': unknown runner 'codx'; did you mean 'codex'?",
    ),
    (
        "dependency",
        HEAD + TASK + '[[task]]\nid = "farewell"\nprompt = "p"\ndepends_on = ["farwell"]\n',
        "plan.toml:9, task 'farewell', field 'depends_on[0]': unknown dependency 'farwell'; "
        "did you mean 'farewell'?",
    ),
    (
        "runner-kind",
        HEAD + 'agent = "docs"\n[runners.docs]\nkind = "comand"\n' + TASK,
        "plan.toml:5, field 'runners.docs.kind': runner 'docs': unknown runner 'comand'; "
        "did you mean 'command'?",
    ),
    (
        "tracker-kind",
        HEAD + '[session.tracker]\nkind = "gitlb"\n' + TASK,
        "plan.toml:4, field 'session.tracker.kind': unknown tracker 'gitlb'; "
        "did you mean 'gitlab'?",
    ),
    (
        "union-type",
        HEAD + 'max_turns = "ten"\n' + TASK,
        "plan.toml:3, field 'session.max_turns': must be a whole number or 'auto', not 'ten'",
    ),
    (
        "key-typo",
        HEAD + TASK + "scop = []\n",
        "plan.toml:6, task 'a', field 'scop': unknown key; did you mean 'scope'?",
    ),
    (
        "toml-unclosed",
        HEAD + TASK + 'scope = ["src/a.py",\n',
        "plan.toml:6:9: not valid TOML: the array opened at line 6 is not closed "
        "(close it with ']')",
    ),
    (
        "toml-bare-string",
        "[session]\nname = x\n" + TASK,
        'plan.toml:2:8: not valid TOML: invalid value (a string needs quotes: "x")',
    ),
]


@pytest.mark.parametrize(
    ("plan_text", "message"), [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES]
)
def test_a_plan_mistake_is_named_where_it_is_with_what_to_do(
    tmp_path: Path, plan_text: str, message: str
) -> None:
    (tmp_path / "plan.toml").write_text(plan_text)
    done = seawall("plan", "plan.toml", cwd=tmp_path)
    assert done.returncode == ExitCode.ERROR
    assert done.stderr.startswith(f"seawall: error: {message}"), done.stderr
    assert "Traceback" not in done.stderr
    error = json.loads(seawall("plan", "plan.toml", "--json", cwd=tmp_path).stdout)["error"]
    assert error["file"] == "plan.toml" and isinstance(error["line"], int)
    assert error["message"] in done.stderr


def test_names_typed_on_the_command_line_get_their_likely_intent(tmp_path: Path) -> None:
    (tmp_path / "plan.toml").write_text(HEAD + TASK + '[[task]]\nid = "docs"\nprompt = "d"\n')
    prompt = seawall("prompt", "plan.toml", "doc", cwd=tmp_path)
    assert prompt.returncode == ExitCode.ERROR
    assert "'doc' is not a task of plan.toml; did you mean 'docs'? tasks: a, docs" in prompt.stderr
    command = seawall("stauts", cwd=tmp_path)
    assert command.returncode == ExitCode.USAGE and "did you mean 'status'?" in command.stderr
    sub = seawall("worktrees", "lst", cwd=tmp_path)
    assert sub.returncode == ExitCode.USAGE and "did you mean 'list'?" in sub.stderr


def test_a_runner_typed_on_the_command_line_is_suggested_from_every_runner(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    runners = '[runners.farewell]\nkind = "command"\nargv = ["true"]\n'
    (tmp_path / "plan.toml").write_text(HEAD + runners + TASK)
    typo = seawall("run", str(tmp_path / "plan.toml"), "--runner", "farewel", cwd=repo)
    assert typo.returncode == ExitCode.ERROR
    assert "unknown runner 'farewel'; did you mean 'farewell'?" in typo.stderr, typo.stderr
    other = seawall("run", str(tmp_path / "plan.toml"), "--runner", "zzzqqq", "--json", cwd=repo)
    error = json.loads(other.stdout)["error"]
    assert error["field"] == "--runner"
    assert "define [runners.zzzqqq] or use one of" in error["message"]
    assert "farewell" in error["message"] and "codex" in error["message"]
    assert not list((repo / ".seawall").glob("*/state.json"))  # no session was started


def test_outside_a_repository_no_session_is_named(tmp_path: Path) -> None:
    (tmp_path / "plan.toml").write_text(HEAD + TASK)
    outside = seawall("run", "plan.toml", "--repo", str(tmp_path), cwd=tmp_path)
    assert outside.returncode == ExitCode.ERROR
    assert outside.stderr.strip().splitlines() == [
        f"seawall: error: {tmp_path} is not inside a git repository: run seawall in the "
        "repository (or give --repo), or make this folder one with `git init` and a first commit"
    ]
    gone = tmp_path / "x" / "nonexistent"
    missing = seawall("run", "plan.toml", "--repo", str(gone), cwd=tmp_path)
    assert missing.stderr.strip().splitlines() == [
        f"seawall: error: {gone} does not exist: give --repo the repository's folder"
    ]
    assert not (tmp_path / ".seawall").exists()
    repo = make_repo(tmp_path / "repo")
    status = seawall("status", "--repo", str(repo), cwd=repo)
    assert status.returncode == ExitCode.ERROR and "no seawall session in" in status.stderr
