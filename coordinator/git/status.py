"""The state of a working tree, with sparse checkouts taken into account.

In a sparse checkout git marks the files it leaves out with the index's
*skip-worktree* bit. libgit2 (and so pygit2's ``Repository.status``) does not read
that bit: every file outside the sparse set looks deleted. Whoever reads a working
tree's state (checkpoints, the user-file check, worktree verification, cleanup) asks
:func:`worktree_status` instead, which drops those false deletions: a file git left
out on purpose is unchanged, never deleted, set aside or merged as a deletion.

A skip-worktree file that is on disk after all (an agent wrote it) is reported as
libgit2 sees it: its content on disk is what counts.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
from pygit2.enums import FileStatus
from pygit2.ffi import C

__all__ = ["skipped_paths", "worktree_status"]

# git's on-disk flag (index format v3+); libgit2 keeps it in ``flags_extended``
_SKIP_WORKTREE = 1 << 14


def skipped_paths(repo: pygit2.Repository) -> frozenset[str]:
    """Paths the index marks skip-worktree (left out of a sparse checkout).

    pygit2's ``IndexEntry`` does not carry the entry's flags, so they are read from
    libgit2's own entries through the binding pygit2 ships."""
    index = repo.index
    index.read(False)
    handle = index._index
    skipped: set[str] = set()
    for position in range(C.git_index_entrycount(handle)):
        entry = C.git_index_get_byindex(handle, position)
        if entry.flags_extended & _SKIP_WORKTREE:
            skipped.add(os.fsdecode(pygit2.ffi.string(entry.path)))
    return frozenset(skipped)


def worktree_status(
    repo: pygit2.Repository, *, untracked_files: str = "all", ignored: bool = False
) -> dict[str, int]:
    """``repo.status(...)`` without the files a sparse checkout left out on purpose.

    A skip-worktree path that is absent from disk loses its "deleted in the working
    tree" flag (and is dropped when nothing else is left); anything else is reported
    as libgit2 reports it."""
    status = repo.status(untracked_files=untracked_files, ignored=ignored)
    deleted = [path for path, flags in status.items() if flags & FileStatus.WT_DELETED]
    if not deleted or repo.workdir is None:
        return status
    skipped = skipped_paths(repo)
    if not skipped:
        return status
    root = Path(repo.workdir)
    for path in deleted:
        if path not in skipped or os.path.lexists(root / path):
            continue
        rest = status[path] & ~FileStatus.WT_DELETED
        if rest:
            status[path] = rest
        else:
            del status[path]
    return status
