"""File names that are not UTF-8: recorded, merged and checked out byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from seawall.git.trees import update_tree
from seawall.model import Enforcement, Isolation, Status
from seawall.state.ledger import AgentRecord, Resolution, SessionState, WaveRecord
from seawall.state.store import StateStore
from tests.integration.sessionkit import git, make_repo, seawall

RAW_NAME = b"caf\xe9-\xff.txt"  # Latin-1 bytes: not valid UTF-8


def _ls_tree(repo: Path, rev: str) -> list[bytes]:
    done = subprocess.run(
        ["git", "ls-tree", "-r", "-z", "--name-only", rev],
        cwd=repo,
        capture_output=True,
        check=True,
    )
    return [name for name in done.stdout.split(b"\0") if name]


def test_update_tree_writes_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"d/a.txt": "a\n", "d.x": "x\n"})
    repo = pygit2.Repository(str(root))
    blob = repo.create_blob(b"bytes\n")
    name = "d/" + os.fsdecode(RAW_NAME)
    tree = update_tree(
        repo, repo.revparse_single("HEAD").peel(pygit2.Tree), {name: (blob, FileMode.BLOB)}
    )
    commit = repo.create_commit(None, repo.default_signature, repo.default_signature, "m", tree, [])
    assert _ls_tree(root, str(commit)) == [b"d.x", b"d/a.txt", b"d/" + RAW_NAME]
    fsck = subprocess.run(
        ["git", "fsck", "--strict", "--no-dangling"], cwd=root, capture_output=True
    )
    assert fsck.returncode == 0, fsck.stderr
    removed = update_tree(repo, repo[tree].peel(pygit2.Tree), {name: None})
    assert [entry.raw_name for entry in repo[removed].peel(pygit2.Tree)["d"].peel(pygit2.Tree)] == [
        b"a.txt"
    ]


_AGENT = textwrap.dedent(
    """
    import os, sys
    sys.stdin.read()
    os.makedirs("src", exist_ok=True)
    with open(os.path.join(b"src", RAW), "wb") as handle:
        handle.write(b"written by the agent\\n")
    print("STATUS: done - wrote a file with a Latin-1 name")
    """
)


def test_an_agent_file_with_a_non_utf8_name_reaches_the_merge(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    agent = tmp_path / "agent.py"
    agent.write_text(f"RAW = {RAW_NAME!r}\n" + _AGENT)
    for isolation in ("worktree", "none"):
        plan = tmp_path / f"plan-{isolation}.toml"
        plan.write_text(
            textwrap.dedent(
                f"""
                [session]
                name = "bytes-{isolation}"
                agent = "agent"
                isolation = "{isolation}"

                [runners.agent]
                kind = "command"
                argv = [{sys.executable!r}, {str(agent)!r}]

                [[task]]
                id = "latin"
                prompt = "Write the file."
                scope = ["src/**"]
                """
            )
        )
        done = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
        assert done.returncode == 0, done.stdout + done.stderr
        assert b"src/" + RAW_NAME in _ls_tree(repo, "main")
        content = git(repo, "cat-file", "-p", "main:src/" + os.fsdecode(RAW_NAME))
        assert content == "written by the agent"
        assert (repo / "src" / os.fsdecode(RAW_NAME)).read_bytes() == b"written by the agent\n"
        assert git(repo, "status", "--porcelain") == ""
        git(repo, "rm", "-q", "src/" + os.fsdecode(RAW_NAME))
        git(repo, "commit", "-q", "-m", "reset for the next isolation")


def test_the_ledger_and_state_md_hold_a_non_utf8_path(tmp_path: Path) -> None:
    name = "src/" + os.fsdecode(RAW_NAME)
    store = StateStore(tmp_path, "s")
    state = SessionState(
        session="s", name="s", repo=str(tmp_path), target_branch="main", start_commit="0" * 40
    )
    wave = WaveRecord(
        number=1, tasks=[], isolation=Isolation.NONE, enforcement=Enforcement.STRICT, max_turns=5
    )
    wave.resolutions = [Resolution(path=name, rule="both-modified", agents=("a", "b"))]
    wave.agents = [AgentRecord(task="a", touched=[name], status=Status.DONE)]
    state.waves.append(wave)
    store.save(state)
    assert store.load().waves[0].agents[0].touched == [name]
    assert b"src/" + RAW_NAME in store.paths.state_md.read_bytes()
