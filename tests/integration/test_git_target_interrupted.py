"""An advance a killed ``git read-tree -m -u`` interrupted is redone.

git writes the files of a two-tree ``read-tree -m -u`` first and the index last: one
killed midway (its ``index.lock`` since removed) leaves some files as in the new tree
while the index still says old. Real repositories; the state is the one git leaves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.errors import DirtyWorkingTreeError
from seawall.git.target import advance_target
from tests.integration.sessionkit import git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/a.py": "a = 0\n"})


def _two_commits(repo: Path) -> tuple[str, str]:
    old = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "-c", "integration")
    (repo / "src" / "a.py").write_text("a = 1\n")
    (repo / "src" / "b.py").write_text("b = 1\n")
    (repo / "README.md").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "wave")
    new = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "main")
    return old, new


@pytest.mark.parametrize(
    "written",
    [("README.md",), ("README.md", "src/a.py"), ("README.md", "src/a.py", "src/b.py")],
)
def test_an_advance_a_kill_interrupted_is_redone(repo: Path, written: tuple[str, ...]) -> None:
    old, new = _two_commits(repo)
    # what a read-tree killed midway leaves: the removals done, some files written (a
    # changed one, an added one), the index untouched
    (repo / "README.md").unlink()
    if "src/a.py" in written:
        (repo / "src" / "a.py").write_text("a = 1\n")
    if "src/b.py" in written:
        (repo / "src" / "b.py").write_text("b = 1\n")
    (repo / "notes.txt").write_text("the user's\n")

    advance_target(repo, branch="main", expected_old=old, new=new)

    assert git(repo, "rev-parse", "main") == new
    assert git(repo, "status", "--porcelain") == "?? notes.txt"
    assert (repo / "src" / "b.py").read_text() == "b = 1\n"


def test_a_user_change_is_still_refused_after_an_interrupted_advance(repo: Path) -> None:
    old, new = _two_commits(repo)
    (repo / "src" / "a.py").write_text("a = 'the user's own'\n")  # not what the wave wrote
    (repo / "README.md").unlink()

    with pytest.raises(DirtyWorkingTreeError) as refused:
        advance_target(repo, branch="main", expected_old=old, new=new)

    assert refused.value.paths == ("src/a.py",)
    assert (repo / "src" / "a.py").read_text() == "a = 'the user's own'\n"
    assert git(repo, "rev-parse", "main") == old


@pytest.mark.parametrize("left", ["a = ", "", None], ids=["a prefix", "empty", "not there"])
def test_the_file_git_was_writing_when_it_died_is_gits_on_the_redo(
    repo: Path, left: str | None
) -> None:
    old, new = _two_commits(repo)
    # the advance was under way (written down first), and git died writing src/a.py
    (repo / ".git" / "seawall-advance").write_text(f"{old} {new}\n")
    (repo / "README.md").unlink()
    if left is None:
        (repo / "src" / "a.py").unlink()
    else:
        (repo / "src" / "a.py").write_text(left)

    advance_target(repo, branch="main", expected_old=old, new=new)

    assert git(repo, "rev-parse", "main") == new
    assert (repo / "src" / "a.py").read_text() == "a = 1\n"
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "seawall-advance").exists()  # done: nothing to redo


def test_a_prefix_is_the_users_when_no_advance_was_under_way(repo: Path) -> None:
    old, new = _two_commits(repo)
    (repo / "src" / "a.py").write_text("a = ")  # the user's, however it looks

    with pytest.raises(DirtyWorkingTreeError) as refused:
        advance_target(repo, branch="main", expected_old=old, new=new)

    assert refused.value.paths == ("src/a.py",)
    assert (repo / "src" / "a.py").read_text() == "a = "
