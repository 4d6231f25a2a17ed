"""A link an agent makes is judged by its target: an outward one is never merged.

A real session (the ``seawall`` CLI, a real repository, command-runner agents that run
``ln`` and ``cp`` themselves, under Landlock where the kernel has it) makes links inside
its scope in several forms: ``ln -sr`` (the target named from the working directory),
``ln -s`` with a text read from the link's directory, an absolute link out of the
repository, ``cp -s``, ``cp -a`` of a link, a link through another link, and one link
that points inside the scope. Landlock lets each be created (the link itself is in the
scope); the post-wave check keeps every outward one out of the merge and names it, and
merges the inward one.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.integration.sessionkit import agents_by_wave, git, make_repo, seawall, status

AGENT = textwrap.dedent(
    """
    import os, subprocess, sys
    sys.stdin.read()
    outside, repo = os.environ["OUTSIDE"], os.getcwd()
    commands = [
        "echo 'alpha = 1' > src/alpha/impl.py",
        "ln -sr src/other.py src/alpha/l_relative",
        "ln -s ../other.py src/alpha/l_up",
        f"ln -s {outside} src/alpha/l_abs",
        f"cp -s {repo}/README.md src/alpha/l_cps",
        "cp -a src/alpha/l_up src/alpha/sub_copy",
        "ln -s ../alpha src/alpha/l_loop && ln -s l_loop/../../other.py src/alpha/l_chain",
        "ln -s impl.py src/alpha/l_in",
    ]
    for command in commands:
        done = subprocess.run(command, shell=True, capture_output=True, text=True)
        print(command, "->", done.returncode, done.stderr.strip())
    print("STATUS: done")
    """
)
OUTWARD = ("l_relative", "l_up", "l_abs", "l_cps", "sub_copy", "l_chain")


@pytest.mark.parametrize("isolation", ["worktree", "none"])
def test_outward_links_are_never_merged_and_an_inward_one_is(
    tmp_path: Path, isolation: str
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {"README.md": "# p\n", "src/other.py": "other = 1\n", "src/alpha/__init__.py": ""},
    )
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        textwrap.dedent(
            f"""
            [session]
            name = "links"
            isolation = "{isolation}"
            enforcement = "strict"
            agent = "py"
            accept_hooks_only = true

            [runners.py]
            kind = "command"
            argv = [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]
            env = {{ OUTSIDE = {json.dumps(str(outside))} }}

            [[task]]
            id = "alpha"
            prompt = "Write alpha."
            scope = ["src/alpha/**"]
            """
        )
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    merged = git(repo, "ls-tree", "-r", "--name-only", "main", "src/alpha").split()
    assert "src/alpha/impl.py" in merged
    assert "src/alpha/l_in" in merged  # inward: merged, still a link to impl.py
    assert git(repo, "cat-file", "-p", "main:src/alpha/l_in") == "impl.py"
    assert not [name for name in OUTWARD if f"src/alpha/{name}" in merged], merged
    assert agents_by_wave(status(repo))[0]["alpha"]["status"] == "done"
    ledger = json.loads(next((repo / ".seawall").glob("*/state.json")).read_text())
    violations = ledger["waves"][0]["agents"][0]["scope_violations"]
    assert set(violations) == {f"src/alpha/{name}" for name in OUTWARD}  # l_loop is inward
    for name in OUTWARD:  # named on the console, with what the link points at
        assert f"src/alpha/{name} is a link to " in done.stderr, done.stderr
    state = next((repo / ".seawall").glob("*/STATE.md")).read_text()
    assert "src/alpha/l_abs" in state
    assert not [
        n for n in OUTWARD if (repo / "src/alpha" / n).is_symlink()
    ]  # none left in the tree
    assert git(repo, "status", "--porcelain") == ""
