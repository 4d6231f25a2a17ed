"""Helpers for the git layer's tests: real repositories in temporary folders."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pygit2

from seawall.git import AgentChange, MergeResult, merge_wave

Files = Mapping[str, str | bytes | None]


def git(cwd: Path, *args: str) -> str:
    """Run git and return its stdout; fail the test on a non-zero exit."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def write_files(root: Path, files: Files) -> None:
    for path, content in files.items():
        full = root / path
        if content is None:
            full.unlink()
            continue
        full.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            full.write_bytes(content)
        else:
            full.write_text(content)


def make_repo(tmp_path: Path, files: Files, *, name: str = "repo") -> Path:
    """A repository on branch ``main`` with one commit holding ``files``."""
    root = tmp_path / name
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    git(root, "config", "commit.gpgsign", "false")
    write_files(root, files)
    commit_all(root, "base")
    return root


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return head(root)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def agent_commit(
    root: Path,
    base: str,
    files: Files,
    *,
    renames: Mapping[str, str] | None = None,
    modes: Mapping[str, int] | None = None,
    message: str = "agent work",
) -> str:
    """A commit on ``base`` changing ``files`` (None deletes), built without a checkout."""
    repo = pygit2.Repository(str(root))
    base_commit = repo.revparse_single(base).peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(base_commit.tree)
    for old, new in (renames or {}).items():
        entry = index[old]
        index.remove(old)
        index.add(pygit2.IndexEntry(new, entry.id, entry.mode))
    for path, content in files.items():
        if content is None:
            index.remove(path)
            continue
        data = content.encode() if isinstance(content, str) else content
        mode = pygit2.enums.FileMode((modes or {}).get(path, pygit2.enums.FileMode.BLOB))
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), mode))
    tree = index.write_tree(repo)
    signature = pygit2.Signature("Agent", "agent@example.com")
    return str(repo.create_commit(None, signature, signature, message, tree, [base_commit.id]))


def blob_text(root: Path, commit: str, path: str) -> str:
    repo = pygit2.Repository(str(root))
    tree = repo.revparse_single(commit).peel(pygit2.Tree)
    return repo[tree[path].id].peel(pygit2.Blob).data.decode()


def tree_paths(root: Path, commit: str) -> set[str]:
    return set(git(root, "ls-tree", "-r", "--name-only", commit).split())


def test_make_repo_has_one_commit_on_main(tmp_path: Path) -> None:
    root = make_repo(tmp_path, {"a.txt": "a\n"})
    assert git(root, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(root, "branch", "--show-current").strip() == "main"
    assert blob_text(root, "HEAD", "a.txt") == "a\n"


def merge_agents(root: Path, base: str, a: str, b: str, **options: Any) -> MergeResult:
    """Merge the commits of agents ``a`` and ``b`` (in that order) onto ``base``, as wave 1
    of session ``s1``; ``options`` for ``merge_wave``."""
    changes = [AgentChange(task_id="a", commit=a), AgentChange(task_id="b", commit=b)]
    return merge_wave(root, base=base, changes=changes, session_id="s1", wave=1, **options)
