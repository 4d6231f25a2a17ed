"""``worktree_status`` reads a sparse worktree's state from the index file's bytes and
gives exactly what the straightforward reading gives: every skip-worktree entry read
through libgit2's binding, each one checked on disk. The straightforward reading is kept
here as the reference; each kind of change, and seeded random mixes of them, is applied
to real sparse worktrees (seawall's own and ``git sparse-checkout set --cone``) and to a
whole one, and both readings are compared for every way of listing untracked and ignored
files."""

from __future__ import annotations

import os
import random
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import anyio
import pygit2
import pytest
from pygit2.enums import FileMode, FileStatus
from pygit2.ffi import C

from seawall.git import prepare_workspaces
from seawall.git.index_file import read_skipped
from seawall.git.tree_state import checkout_problem, disk_blob, skipped_paths, worktree_status
from seawall.model import Isolation
from tests.integration.sessionkit import git, make_repo

FILES = {
    "README.md": "# p\n",
    ".gitignore": "*.log\nbuild/\n",
    "run.sh": "#!/bin/sh\n",
    "src/a/x.py": "x = 1\n",
    "src/a/deep/z.py": "z = 1\n",
    "src/b/y.py": "y = 1\n",
    "src/top.py": "t = 1\n",
    "src.md": "names that sort around src/\n",
    "src-b/k.py": "k = 1\n",
    **{f"pkg/m{i}.py": f"n = {i}\n" for i in range(12)},
    **{f"lib/q/r{i}.py": f"r = {i}\n" for i in range(6)},
    "docs/guide.md": "guide\n",
}
CONE = ("src/a",)
MODES = [(untracked, ignored) for untracked in ("all", "normal", "no") for ignored in (True, False)]


def _reference_skipped(repo: pygit2.Repository) -> frozenset[str]:
    index = repo.index
    index.read(False)
    handle = index._index
    skipped: set[str] = set()
    for position in range(C.git_index_entrycount(handle)):
        entry = C.git_index_get_byindex(handle, position)
        if entry.flags_extended & (1 << 14):
            skipped.add(os.fsdecode(pygit2.ffi.string(entry.path)))
    return frozenset(skipped)


def _reference(repo: pygit2.Repository, untracked_files: str, ignored: bool) -> dict[str, int]:
    status = repo.status(untracked_files=untracked_files, ignored=ignored)
    assert repo.workdir is not None
    skipped = _reference_skipped(repo)
    root = repo.workdir.rstrip("/") + "/"
    folders: dict[str, bool] = {"": True}
    for path in skipped:
        folder = path.rpartition("/")[0]
        present = folders.get(folder)
        if present is None:
            present = folders[folder] = Path(root + folder).is_dir()
        if present and os.path.lexists(root + path):
            if path not in status:
                entry = repo.index[path]
                found = disk_blob(Path(root + path))
                if found is None or found[1] != entry.mode or pygit2.hash(found[0]) != entry.id:
                    status[path] = FileStatus.WT_MODIFIED
            continue
        flags = status.get(path)
        if flags is None or not int(flags) & FileStatus.WT_DELETED:
            continue
        rest = int(flags) & ~FileStatus.WT_DELETED
        if rest:
            status[path] = FileStatus(rest)
        else:
            del status[path]
    return status


def _reference_checkout_problem(repo: pygit2.Repository) -> str | None:
    if repo.workdir is None or repo.head_is_unborn:
        return "it has no working tree or no HEAD"
    index = repo.index
    index.read(False)
    if len(index.diff_to_tree(repo.head.peel(pygit2.Commit).tree)):
        return "its index is not HEAD's tree"
    root = repo.workdir.rstrip("/") + "/"
    handle = index._index
    for position in range(C.git_index_entrycount(handle)):
        entry = C.git_index_get_byindex(handle, position)
        if entry.flags_extended & (1 << 14) or entry.mode == FileMode.COMMIT:
            continue
        path = os.fsdecode(pygit2.ffi.string(entry.path))
        try:
            size = Path(root + path).lstat().st_size
        except OSError:
            return f"{path} is missing"
        if size & 0xFFFFFFFF != entry.file_size:
            return f"{path} is not whole"
    return None


def _assert_same(worktree: Path) -> None:
    for untracked, ignored in MODES:
        repo = pygit2.Repository(str(worktree))
        expected = _reference(repo, untracked, ignored)
        found = worktree_status(
            pygit2.Repository(str(worktree)), untracked_files=untracked, ignored=ignored
        )
        assert found == expected, (untracked, ignored)
        assert {path: type(flags) for path, flags in found.items()} == {
            path: type(flags) for path, flags in expected.items()
        }
    repo = pygit2.Repository(str(worktree))
    assert skipped_paths(repo) == _reference_skipped(repo)
    assert checkout_problem(repo) == _reference_checkout_problem(pygit2.Repository(str(worktree)))


def _seawall_sparse(repo: Path) -> Path:
    base = git(repo, "rev-parse", "HEAD")

    async def main() -> Path:
        made = await prepare_workspaces(
            repo, session_id="s1", wave=1, base=base, task_ids=["t"],
            isolation=Isolation.WORKTREE, sparse={"t": CONE},
        )  # fmt: skip
        return Path(made[0].path)

    return anyio.run(main)


def _git_sparse(repo: Path) -> Path:
    worktree = repo.parent / "cone"
    git(repo, "worktree", "add", "-q", "--no-checkout", "-b", "cone", str(worktree))
    git(worktree, "sparse-checkout", "set", "--cone", *CONE)
    git(worktree, "checkout", "-q")
    return worktree


def _whole(repo: Path) -> Path:
    worktree = repo.parent / "whole"
    git(repo, "worktree", "add", "-q", "-b", "whole", str(worktree))
    return worktree


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "seawall": _seawall_sparse, "git-cone": _git_sparse, "whole": _whole,
}  # fmt: skip


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _relink(path: Path, target: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.symlink_to(target)


def _change(w: Path, name: str) -> None:
    """Apply the change called ``name`` to the worktree ``w``."""
    if name == "edit in cone":
        _write(w / "src/a/x.py", "x = 2\n")
    elif name == "delete in cone":
        (w / "src/a/x.py").unlink()
    elif name == "delete the cone's top folder":
        shutil.rmtree(w / "src")
    elif name == "delete top-level":
        (w / "README.md").unlink()
    elif name == "add in cone":
        _write(w / "src/a/new.py", "new\n")
    elif name == "untracked folder":
        _write(w / "src/a/fresh/one/two.py", "2\n")
    elif name == "out-of-cone new file":
        _write(w / "lib/q/new.py", "q\n")
    elif name == "out-of-cone new folder":
        _write(w / "other/n.py", "n\n")
    elif name == "skipped file written, same":
        _write(w / "pkg/m3.py", "n = 3\n")
    elif name == "skipped file written, differs":
        _write(w / "pkg/m3.py", "n = 33\n")
    elif name == "skipped folder partly written":
        _write(w / "lib/q/r1.py", "r = 1\n")
        _write(w / "lib/q/r2.py", "changed\n")
    elif name == "skipped file made executable":
        _write(w / "src/b/y.py", "y = 1\n")
        (w / "src/b/y.py").chmod(0o755)
    elif name == "skipped file as symlink":
        _relink(w / "src/top.py", "a/x.py")
    elif name == "chmod in cone":
        (w / "run.sh").chmod(0o755)
    elif name == "symlink in cone":
        _relink(w / "src/a/link", "x.py")
    elif name == "type change in cone":
        _relink(w / "src/a/x.py", "deep/z.py")
    elif name == "ignored files":
        for path in ("src/a/debug.log", "build/out.o", "pkg/trace.log"):
            _write(w / path, "l\n")
    elif name == "staged in cone":
        _write(w / "src/a/x.py", "staged\n")
        git(w, "add", "src/a/x.py")
        _write(w / "src/a/x.py", "staged, then edited\n")
    elif name == "staged new file":
        _write(w / "src/a/s.py", "s\n")
        git(w, "add", "src/a/s.py")
    elif name == "staged out of cone":
        _write(w / "lib/q/r0.py", "staged\n")
        git(w, "add", "--sparse", "-f", "lib/q/r0.py")
    elif name == "rm --cached out of cone":
        git(w, "rm", "-q", "--cached", "--sparse", "pkg/m1.py")
    elif name == "rm --cached in cone":
        git(w, "rm", "-q", "--cached", "src/a/x.py")
    elif name == "a top-level name like a pattern":
        _write(w / "!we[i]rd*" / "f.py", "f\n")
        _write(w / "pkg/m5.py", "changed\n")
    elif name == "top-level files skipped by hand":
        git(w, "update-index", "--skip-worktree", "src.md", "README.md", ".gitignore")
        (w / "src.md").unlink()
        _write(w / "README.md", "changed\n")
    elif name == "skip-worktree by hand":
        git(w, "update-index", "--skip-worktree", "src/a/x.py")
        (w / "src/a/x.py").unlink()
        git(w, "update-index", "--skip-worktree", "src/a/deep/z.py")
        _write(w / "src/a/deep/z.py", "changed\n")
    else:
        assert name == "nothing", name


CHANGES = [
    "nothing", "edit in cone", "delete in cone", "delete the cone's top folder",
    "delete top-level", "add in cone",
    "untracked folder", "out-of-cone new file", "out-of-cone new folder",
    "skipped file written, same", "skipped file written, differs",
    "skipped folder partly written", "skipped file made executable",
    "skipped file as symlink", "chmod in cone", "symlink in cone", "type change in cone",
    "ignored files", "staged in cone", "staged new file", "staged out of cone",
    "rm --cached out of cone", "rm --cached in cone", "skip-worktree by hand",
    "top-level files skipped by hand", "a top-level name like a pattern",
]  # fmt: skip


@pytest.mark.parametrize("builder", sorted(BUILDERS))
@pytest.mark.parametrize("change", CHANGES)
def test_each_kind_of_change_reads_as_before(tmp_path: Path, builder: str, change: str) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    (repo / "run.sh").chmod(0o644)
    worktree = BUILDERS[builder](repo)
    _change(worktree, change)
    _assert_same(worktree)


def _random_edits(worktree: Path, rng: random.Random, count: int) -> None:
    tracked = sorted(FILES)
    kinds = ("edit", "delete", "add", "stage", "chmod", "symlink", "skip", "unstage")
    for step in range(count):
        path = rng.choice(tracked)
        full = worktree / path
        kind = rng.choice(kinds)
        if kind == "edit":
            _write(full, f"edit {step}\n" if rng.random() < 0.7 else FILES[path])
        elif kind == "delete" and os.path.lexists(full):
            full.unlink()
        elif kind == "add":
            folder = rng.choice(["", "src/a/", "src/b/", "pkg/", "lib/q/", "new/"])
            _write(worktree / f"{folder}added{step}.{rng.choice(['py', 'log'])}", "a\n")
        elif kind == "stage" and full.is_file() and not full.is_symlink():
            git(worktree, "add", "--sparse", "-f", path)
        elif kind == "chmod" and full.is_file() and not full.is_symlink():
            full.chmod(full.stat().st_mode ^ stat.S_IXUSR)
        elif kind == "symlink" and not os.path.lexists(full):
            full.parent.mkdir(parents=True, exist_ok=True)
            full.symlink_to("README.md")
        elif kind == "skip":
            git(worktree, "update-index", "--skip-worktree", path)
        elif kind == "unstage" and rng.random() < 0.3:
            git(worktree, "rm", "-q", "--cached", "--sparse", "--ignore-unmatch", path)


@pytest.mark.slow
@pytest.mark.parametrize("builder", sorted(BUILDERS))
@pytest.mark.parametrize("seed", range(6))
def test_random_mixes_read_as_before(tmp_path: Path, builder: str, seed: int) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    worktree = BUILDERS[builder](repo)
    rng = random.Random(seed)
    for _ in range(3):
        _random_edits(worktree, rng, 8)
        _assert_same(worktree)


def test_indexes_the_reader_does_not_take_read_as_before(tmp_path: Path) -> None:
    """Format 4 goes through libgit2 (the same answer); a split index fails as
    libgit2 fails on it."""
    repo = make_repo(tmp_path / "repo", FILES)
    worktree = _git_sparse(repo)
    _write(worktree / "pkg/m2.py", "changed\n")
    index = Path(pygit2.Repository(str(worktree)).path) / "index"
    assert read_skipped(index) is not None
    git(worktree, "update-index", "--index-version", "4")
    assert read_skipped(index) is None
    _assert_same(worktree)
    git(worktree, "update-index", "--index-version", "3")
    git(worktree, "update-index", "--split-index")
    assert read_skipped(index) is None
    with pytest.raises(pygit2.GitError, match="link"):  # libgit2 does not read it either
        worktree_status(pygit2.Repository(str(worktree)))
    git(worktree, "update-index", "--no-split-index")
    assert read_skipped(index) is not None
    _assert_same(worktree)


def test_a_long_skipped_path_and_a_changed_index_are_read_anew(tmp_path: Path) -> None:
    """A path of 4,095 bytes or more (its length no longer fits the flags word) is read
    to its NUL; after the index changes, the remembered answer is not used."""
    repo = make_repo(tmp_path / "repo", FILES)
    worktree = _git_sparse(repo)
    blob = git(worktree, "hash-object", "-w", "--stdin")
    long_path = "/".join(["d" * 200] * 21) + "/f.py"
    git(worktree, "update-index", "--add", "--cacheinfo", f"100644,{blob},{long_path}")
    git(worktree, "update-index", "--skip-worktree", long_path)
    opened = pygit2.Repository(str(worktree))
    assert long_path in skipped_paths(opened)
    assert skipped_paths(opened) == _reference_skipped(opened)
    git(worktree, "rm", "-q", "--cached", "--sparse", long_path)  # too long to be on disk
    _assert_same(worktree)
    git(worktree, "update-index", "--no-skip-worktree", "pkg/m4.py")
    assert "pkg/m4.py" not in skipped_paths(pygit2.Repository(str(worktree)))
    _assert_same(worktree)
