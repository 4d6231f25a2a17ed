"""libgit2's status of a repository, with the working-tree half limited to given folders.

``Repository.status`` compares every index entry with the working tree; in a sparse
worktree nearly all of them are absent, and each absent one costs a reported deletion
(a Python object per entry). :func:`scoped_status` computes the same two comparisons
libgit2's status makes, with the same options: HEAD's tree against the index, over the
whole index, and the index against the working tree limited to the top-level names
given (pathspec patterns without wildcards: each name with everything under it).
Entries outside those names are not looked at in the working tree; the caller
accounts for them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, FileStatus
from pygit2.errors import check_error
from pygit2.ffi import C, ffi

__all__ = ["scoped_status"]

# how libgit2's status maps each comparison's deltas (renames are not looked for)
_HEAD_TO_INDEX = {
    DeltaStatus.ADDED: FileStatus.INDEX_NEW,
    DeltaStatus.COPIED: FileStatus.INDEX_NEW,
    DeltaStatus.DELETED: FileStatus.INDEX_DELETED,
    DeltaStatus.MODIFIED: FileStatus.INDEX_MODIFIED,
    DeltaStatus.TYPECHANGE: FileStatus.INDEX_TYPECHANGE,
    DeltaStatus.CONFLICTED: FileStatus.CONFLICTED,
}
_INDEX_TO_WORKDIR = {
    DeltaStatus.ADDED: FileStatus.WT_NEW,
    DeltaStatus.COPIED: FileStatus.WT_NEW,
    DeltaStatus.UNTRACKED: FileStatus.WT_NEW,
    DeltaStatus.UNREADABLE: FileStatus.WT_UNREADABLE,
    DeltaStatus.DELETED: FileStatus.WT_DELETED,
    DeltaStatus.MODIFIED: FileStatus.WT_MODIFIED,
    DeltaStatus.IGNORED: FileStatus.IGNORED,
    DeltaStatus.TYPECHANGE: FileStatus.WT_TYPECHANGE,
    DeltaStatus.CONFLICTED: FileStatus.CONFLICTED,
}


def status_flags(untracked_files: str, ignored: bool) -> DiffOption:
    """The diff options libgit2's status passes for pygit2's ``status`` arguments."""
    flags = DiffOption.INCLUDE_TYPECHANGE
    if untracked_files != "no":
        flags |= DiffOption.INCLUDE_UNTRACKED
        if untracked_files == "all":
            flags |= DiffOption.RECURSE_UNTRACKED_DIRS
    if ignored:
        flags |= DiffOption.INCLUDE_IGNORED
    return flags


def scoped_status(
    repo: pygit2.Repository,
    tree: pygit2.Tree,
    names: Sequence[str],
    *,
    untracked_files: str,
    ignored: bool,
) -> dict[str, int]:
    """The status of every path whose index-against-HEAD state differs, plus the
    working-tree state of the paths under ``names`` (top-level names; none: no
    working-tree half). Flags combine per path as in ``repo.status``."""
    if untracked_files not in ("all", "normal", "no"):
        raise ValueError(f"untracked_files: unknown value {untracked_files!r}")
    flags = status_flags(untracked_files, ignored)
    index = repo.index
    index.read(False)
    found: dict[str, int] = {}
    for delta in index.diff_to_tree(tree, flags=flags).deltas:
        bit = _HEAD_TO_INDEX.get(delta.status)
        if bit is not None:
            found[delta.old_file.path] = bit
    if names:
        for delta in _workdir_diff(repo, index, flags, names).deltas:
            bit = _INDEX_TO_WORKDIR.get(delta.status)
            if bit is not None:
                path = delta.old_file.path
                found[path] = found.get(path, 0) | bit
    return {path: FileStatus(bits) for path, bits in sorted(found.items())}


def _workdir_diff(
    repo: pygit2.Repository, index: pygit2.Index, flags: DiffOption, names: Sequence[str]
) -> pygit2.Diff:
    """``index.diff_to_workdir`` limited to ``names`` as pathspec patterns. (Passed as
    literal paths instead, libgit2 1.9 reports tracked files under ``src`` as new when
    ``src-b`` and ``src.md`` sit beside it.)"""
    options = ffi.new("git_diff_options *")
    check_error(C.git_diff_options_init(options, 1))
    options.flags = int(flags)
    keep = [ffi.new("char[]", name.encode("utf-8", "surrogateescape")) for name in names]
    strings = ffi.new("char *[]", keep)
    options.pathspec.strings = strings
    options.pathspec.count = len(keep)
    out = ffi.new("git_diff **")
    check_error(C.git_diff_index_to_workdir(out, repo._repo, index._index, options))
    return pygit2.Diff.from_c(bytes(ffi.buffer(out)[:]), repo)
