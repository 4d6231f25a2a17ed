"""Worktree bookkeeping: ready markers, and removal that is safe under concurrency.

A worktree counts as ready only once its checkout completed and was verified against
the commit it was made at: then a marker (``seawall-ready``, holding the branch and the
commit) is written into its administrative folder in the repository's git directory,
where agents cannot write. A worktree without the marker (a checkout a kill
interrupted, locked "initializing" by a dead process) is never used: it is removed and
made again.

Git reads every administrative folder when it adds a worktree, and two ``git worktree
add`` or ``remove`` at once race on them ("failed to read .git/worktrees/x/commondir").
So whatever changes those folders runs under one lock shared by every seawall process
and thread, and only the fast part does: a worktree is added without a checkout under
the lock, then checked out (the slow, I/O bound part) outside it; removal deletes the
folders concurrently, then their administrative folders under the lock, which is what
``git worktree remove --force --force`` does, without running git. Before a folder is
deleted its administrative folder is marked (``seawall-removing``), so a reader that
finds the folder without its ``.git`` can tell a removal under way from a worktree
whose link alone was deleted.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from seawall.git.repo import GitOutput, open_repository, run_git
from seawall.git.sparse import sparse_args, write_sparse_set
from seawall.runtime.files import file_lock

__all__ = [
    "READY_FILE",
    "REMOVING_FILE",
    "add_worktree",
    "admin_dir",
    "admin_dirs",
    "admin_lock",
    "delete_branches",
    "is_ready",
    "mark_ready",
    "remove_worktrees",
    "restore_link",
]

READY_FILE = "seawall-ready"
REMOVING_FILE = "seawall-removing"
_LOCK_FILE = "seawall-worktrees.lock"
_thread_lock = threading.Lock()


def _common_dir(repo_root: Path) -> Path:
    return Path(open_repository(repo_root).path)


@contextlib.contextmanager
def admin_lock(repo_root: Path) -> Iterator[None]:
    """Hold the lock under which worktrees' administrative folders change."""
    with _thread_lock, file_lock(_common_dir(repo_root) / _LOCK_FILE, what="worktree changes"):
        yield


def add_worktree(
    repo_root: Path, path: Path, args: Sequence[str], *, sparse: Sequence[str] | None = None
) -> GitOutput:
    """``git worktree add [args] path ...`` (``args`` end with the path and the commit or
    branch), checked out after the lock is released; with ``sparse``, only those folders
    (and every top-level file: see :mod:`seawall.git.sparse`). The output of the
    step that failed, or of the checkout."""
    with admin_lock(repo_root):
        added = run_git(
            ["worktree", "add", "--quiet", "--no-checkout", *args], cwd=repo_root, check=False
        )
    if not added.ok:
        return added
    options: list[str] = []
    if sparse is not None:
        admin = admin_dir(repo_root, path)
        if admin is None:
            return GitOutput(
                args=tuple(args), returncode=1, stdout="", stderr=f"git has no record of {path}"
            )
        write_sparse_set(admin, sparse)
        options = sparse_args()
    # a checkout of what is checked out: fills the tree and runs the post-checkout hook,
    # whose exit status becomes the result, as with a plain `git worktree add`
    return run_git([*options, "checkout", "--force", "--quiet"], cwd=path, check=False)


def admin_dirs(repo_root: Path) -> dict[Path, Path]:
    """Every linked worktree's folder (resolved) and its administrative folder."""
    found: dict[Path, Path] = {}
    folder = _common_dir(repo_root) / "worktrees"
    if not folder.is_dir():
        return found
    for admin in sorted(folder.iterdir()):
        try:
            gitfile = (admin / "gitdir").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        # the folder resolved, not the ``.git`` in it: that one its agent can replace
        found[Path(os.path.realpath(Path(gitfile).parent))] = admin
    return found


def admin_dir(repo_root: Path, path: Path) -> Path | None:
    """The administrative folder of the worktree at ``path``, or None."""
    return admin_dirs(repo_root).get(Path(os.path.realpath(path)))


def _marker(branch: str, commit: str) -> str:
    return f"{branch} {commit}\n"


def mark_ready(admin: Path, branch: str, commit: str) -> None:
    """Record that the worktree of ``admin`` is checked out whole at ``commit``."""
    (admin / READY_FILE).write_text(_marker(branch, commit), encoding="utf-8")


def is_ready(repo_root: Path, path: Path, branch: str) -> bool:
    """Whether the worktree at ``path`` is ready: its checkout of ``branch`` was verified
    (and its folder is still there)."""
    admin = admin_dir(repo_root, path)
    if admin is None or not (path / ".git").is_file() or (admin / "locked").exists():
        return False
    try:
        recorded = (admin / READY_FILE).read_text(encoding="utf-8").split()
    except OSError:
        return False
    return len(recorded) == 2 and recorded[0] == branch


def remove_worktrees(repo_root: Path, paths: Iterable[str | os.PathLike[str]]) -> None:
    """Remove the worktrees at ``paths`` (folders and git's records of them), whatever
    state they are in: locked, half checked out, or already deleted."""
    wanted = [Path(os.path.realpath(p)) for p in paths]
    if not wanted:
        return
    known = admin_dirs(repo_root)
    with admin_lock(repo_root):
        for path in wanted:
            admin = known.get(path)
            if admin is not None:
                with contextlib.suppress(OSError):  # already removed by another cleanup
                    (admin / REMOVING_FILE).write_text("", encoding="utf-8")
    workers = max(1, min(len(wanted), 2 * (os.cpu_count() or 1)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda p: shutil.rmtree(p, ignore_errors=True), wanted))
    with admin_lock(repo_root):
        for path in wanted:
            admin = known.get(path)
            if admin is not None:
                shutil.rmtree(admin, ignore_errors=True)


def restore_link(repo_root: Path, path: Path, admin: Path) -> bool:
    """Write again the ``.git`` link of the worktree at ``path`` from git's record
    ``admin``, if its folder still holds files and no removal of it is under way.
    Whether the link was written."""
    with admin_lock(repo_root):
        if (admin / REMOVING_FILE).exists() or not (admin / "gitdir").is_file():
            return False
        try:
            if not any(path.iterdir()):
                return False
            if (path / ".git").is_symlink():  # a dangling link in its place
                (path / ".git").unlink()
            (path / ".git").write_text(f"gitdir: {admin}\n", encoding="utf-8")
        except OSError:  # the folder is gone
            return False
    return True


def delete_branches(repo_root: Path, branches: Sequence[str]) -> None:
    """``git branch -D`` (it reads every worktree's record), under the lock."""
    if branches:
        with admin_lock(repo_root):
            run_git(["branch", "-D", *branches], cwd=repo_root, check=False)
