"""The refs a wave must leave alone are read without reading seawall's own.

The names come from the loose files under ``refs/`` (the session's own folders not
entered) and from ``packed-refs``; the result must be exactly what libgit2's listing of
every reference gives once the session's own are left out.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from seawall.scope.repostate import snapshot

SESSION = "s1"
OWN = (f"refs/seawall/{SESSION}/", f"refs/heads/seawall/{SESSION}/")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, timeout=60)


def _every_ref(repo: Path) -> dict[str, str]:
    """What libgit2 lists, the session's own left out: the expected reading."""
    repository = pygit2.Repository(str(repo))
    found: dict[str, str] = {}
    for name in ("HEAD", *repository.references):
        if name.startswith(OWN):
            continue
        target = repository.references[name].target
        found[name] = str(target) if isinstance(target, pygit2.Oid) else f"ref:{target}"
    return found


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _git(tmp_path, "init", "-q", "-b", "main", str(root))
    for message in ("a", "b"):
        _git(root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q",
             "--allow-empty", "-m", message)  # fmt: skip
    for name in ("feature/deep/one", "seawall/other-session/t1", "seawall/s1x"):
        _git(root, "branch", name, "HEAD~1")
    _git(root, "tag", "v1", "HEAD~1")
    _git(root, "-c", "user.name=u", "-c", "user.email=u@x", "tag", "-a", "-m", "t", "v2")
    for index in range(30):
        _git(root, "update-ref", f"refs/seawall/{SESSION}/t{index}", "HEAD")
        _git(root, "branch", f"seawall/{SESSION}/t{index}")
    _git(root, "update-ref", "refs/seawall/other-session/t1", "HEAD")
    _git(root, "update-ref", "refs/notes/commits", "HEAD")
    _git(root, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/main")
    return root


def test_loose_refs_are_read_as_libgit2_lists_them(repo: Path) -> None:
    assert snapshot(repo, session=SESSION).refs == _every_ref(repo)


def test_packed_refs_and_a_loose_one_over_its_packed_copy(repo: Path) -> None:
    _git(repo, "pack-refs", "--all")
    _git(repo, "update-ref", "refs/heads/feature/deep/one", "HEAD")  # loose, over the packed
    _git(repo, "update-ref", f"refs/seawall/{SESSION}/late", "HEAD")
    _git(repo, "update-ref", "-d", "refs/tags/v1")  # gone from packed-refs too
    refs = snapshot(repo, session=SESSION).refs
    assert refs == _every_ref(repo)
    assert "refs/tags/v1" not in refs and "refs/tags/v2" in refs
    assert "refs/heads/seawall/other-session/t1" in refs and "refs/heads/seawall/s1x" in refs
    assert not any(name.startswith(OWN) for name in refs)


def test_a_stray_lock_file_is_not_a_ref(repo: Path) -> None:
    (repo / ".git" / "refs" / "heads" / "main.lock").write_text("0" * 40 + "\n")
    assert snapshot(repo, session=SESSION).refs == _every_ref(repo)
