"""The state of a working tree, with sparse checkouts taken into account.

In a sparse checkout git marks the files it leaves out with the index's
*skip-worktree* bit. libgit2 (and so pygit2's ``Repository.status``) does not read
that bit: every file outside the sparse set looks deleted. Whoever reads a working
tree's state (checkpoints, the user-file check, worktree verification, cleanup) asks
:func:`worktree_status` instead, which drops those false deletions: a file git left
out on purpose is unchanged, never deleted, set aside or merged as a deletion.

A skip-worktree file that is on disk after all (an agent wrote it) is read from disk:
its content there is what counts, as for any other file.

A sparse worktree costs what it holds, not what the repository holds: the index file
is read once from its bytes (and remembered while unchanged), and the working tree is
compared with the index only under the top-level names on disk. An index entry under
any other name is not on disk: a deletion, unless git left it out on purpose. HEAD's
tree against the index is compared whole, as libgit2 does it. An index with conflicts,
one the byte reader does not take, an unborn HEAD or a top-level name that reads as a
pattern get libgit2's whole status, filtered the same way.
"""

from __future__ import annotations

import os
import re
import stat
from bisect import bisect_left
from collections.abc import Iterator
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, FileStatus
from pygit2.ffi import C

from seawall.git.index_file import IndexPaths, read_skipped
from seawall.git.status_scan import scoped_status

__all__ = ["checkout_problem", "disk_blob", "skipped_paths", "worktree_status"]

# git's on-disk flag (index format v3+); libgit2 keeps it in ``flags_extended``
_SKIP_WORKTREE = 1 << 14
_WT_DELETED = int(FileStatus.WT_DELETED)
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.+,=@%-]+")  # no glob, negation, escape or space


def skipped_paths(repo: pygit2.Repository) -> frozenset[str]:
    """Paths the index marks skip-worktree (left out of a sparse checkout): read from
    the index file's bytes (:mod:`seawall.git.index_file`), or through libgit2 for
    an index that reader does not take (format 4, a split or sparse index)."""
    found = read_skipped(Path(repo.path) / "index")
    return frozenset(_libgit2_skipped(repo) if found is None else found.skipped)


def _libgit2_skipped(repo: pygit2.Repository) -> list[str]:
    """The skip-worktree paths, read from libgit2's own entries through the binding
    pygit2 ships (pygit2's ``IndexEntry`` does not carry the entry's flags)."""
    index = repo.index
    index.read(False)
    handle = index._index
    skipped: list[str] = []
    for position in range(C.git_index_entrycount(handle)):
        entry = C.git_index_get_byindex(handle, position)
        if entry.flags_extended & _SKIP_WORKTREE:
            skipped.append(os.fsdecode(pygit2.ffi.string(entry.path)))
    return skipped


def _group(paths: list[str]) -> dict[str, tuple[str, ...]]:
    grouped: dict[str, list[str]] = {}
    for path in paths:
        grouped.setdefault(path.rpartition("/")[0], []).append(path)
    return {folder: tuple(group) for folder, group in grouped.items()}


def checkout_problem(repo: pygit2.Repository) -> str | None:
    """Why the working tree of a fresh checkout is not whole, or None when it is.

    Whole means: the index holds HEAD's tree, and every file it does not mark
    skip-worktree is on disk with the size the checkout recorded (a checkout a kill
    interrupted leaves files missing or cut short). It reads the index once and stats
    each file it should have written, so a sparse checkout costs what it holds."""
    if repo.workdir is None or repo.head_is_unborn:
        return "it has no working tree or no HEAD"
    index = repo.index
    index.read(False)
    if len(index.diff_to_tree(repo.head.peel(pygit2.Commit).tree)):
        return "its index is not HEAD's tree"
    root = repo.workdir.rstrip("/") + "/"
    found = read_skipped(Path(repo.path) / "index")
    written = (
        zip(found.kept, found.sizes, strict=True)
        if found is not None and not found.conflicted
        else _written_entries(index)
    )
    for path, size in written:
        if size < 0:  # a submodule: nothing of it is checked out here
            continue
        try:
            on_disk = Path(root + path).lstat().st_size
        except OSError:
            return f"{path} is missing"
        if on_disk & 0xFFFFFFFF != size:
            return f"{path} is not whole"
    return None


def _written_entries(index: pygit2.Index) -> Iterator[tuple[str, int]]:
    """Each path a checkout writes (not skip-worktree) and its recorded size (its low
    32 bits; -1 for a submodule), from libgit2's entries."""
    handle = index._index
    for position in range(C.git_index_entrycount(handle)):
        entry = C.git_index_get_byindex(handle, position)
        if not entry.flags_extended & _SKIP_WORKTREE:
            path = os.fsdecode(pygit2.ffi.string(entry.path))
            yield path, -1 if entry.mode == FileMode.COMMIT else entry.file_size


def worktree_status(
    repo: pygit2.Repository, *, untracked_files: str = "all", ignored: bool = False
) -> dict[str, int]:
    """``repo.status(...)`` with the index's skip-worktree bit taken into account.

    A skip-worktree path absent from disk loses its "deleted in the working tree" flag
    (and is dropped when nothing else is left). One present on disk (written by an
    agent), which libgit2 and git both pass over, is reported modified when its content
    or executable bit differs from the index. Anything else is as libgit2 reports it."""
    if repo.workdir is None or not _has_extended_flags(Path(repo.path) / "index"):
        return repo.status(untracked_files=untracked_files, ignored=ignored)
    found = read_skipped(Path(repo.path) / "index")
    names = _top_names(repo.workdir)
    if found is None or found.conflicted or repo.head_is_unborn or names is None:
        status = repo.status(untracked_files=untracked_files, ignored=ignored)
        skipped = _libgit2_skipped(repo) if found is None else list(found.skipped)
    else:
        status, skipped = _scoped(repo, found, names, untracked_files, ignored)
    if not skipped:
        return status
    root = repo.workdir.rstrip("/") + "/"
    for folder, paths in _group(skipped).items():
        if folder and not Path(root + folder).is_dir():
            on_disk: tuple[str, ...] = ()
            gone = paths
        else:
            present = [os.path.lexists(root + path) for path in paths]
            on_disk = tuple(path for path, here in zip(paths, present, strict=True) if here)
            gone = tuple(path for path, here in zip(paths, present, strict=True) if not here)
        for path in on_disk:
            if path not in status and _differs(repo, Path(root + path), path):
                status[path] = FileStatus.WT_MODIFIED
        for path in gone:
            flags = status.get(path)
            if flags is None:
                continue
            if flags == _WT_DELETED:
                del status[path]
            elif int(flags) & _WT_DELETED:
                status[path] = FileStatus(int(flags) & ~_WT_DELETED)
    return status


def _top_names(workdir: str) -> list[str] | None:
    """The names at the top of the working tree (``.git`` aside), sorted; None when
    one holds a character git's pathspec patterns would read as more than itself."""
    with os.scandir(workdir) as entries:
        names = sorted(entry.name for entry in entries if entry.name != ".git")
    if all(_PLAIN_NAME.fullmatch(name) for name in names):
        return names
    return None


def _scoped(
    repo: pygit2.Repository,
    found: IndexPaths,
    names: list[str],
    untracked_files: str,
    ignored: bool,
) -> tuple[dict[str, int], list[str]]:
    """``repo.status(...)`` of a worktree whose index holds skip-worktree entries, with
    the working tree read only under the top-level names on disk, and the skip-worktree
    paths under those names. An index entry under any other name is absent from disk:
    deleted unless it is skip-worktree (whose deletion would be dropped anyway)."""
    tree = repo.head.peel(pygit2.Commit).tree
    status = scoped_status(repo, tree, names, untracked_files=untracked_files, ignored=ignored)
    present = set(names)
    for path in found.kept:
        if path.partition("/")[0] not in present:
            status[path] = FileStatus(int(status.get(path, 0)) | _WT_DELETED)
    return status, [path for name in names for path in _under(found.skipped, name)]


def _under(paths: tuple[str, ...], name: str) -> tuple[str, ...]:
    """The paths of the sorted ``paths`` that are ``name`` or lie under it."""
    exact = bisect_left(paths, name)
    start = bisect_left(paths, name + "/", exact)
    stop = bisect_left(paths, name + "0", start)  # "0" follows "/"
    if exact < len(paths) and paths[exact] == name:
        return (name, *paths[start:stop])
    return paths[start:stop]


def _has_extended_flags(index: Path) -> bool:
    """Whether the index file can hold skip-worktree bits: git writes format 2 unless
    some entry has an extended flag (or the repository asks for format 3 or 4)."""
    try:
        with index.open("rb") as handle:
            header = handle.read(8)
    except OSError:
        return False
    return len(header) == 8 and header[:4] == b"DIRC" and int.from_bytes(header[4:], "big") > 2


def disk_blob(full: Path) -> tuple[bytes, FileMode] | None:
    """What git would store for the file or symlink at ``full``: its bytes and mode;
    None when it is gone or is something git cannot hold (a fifo, a folder)."""
    try:
        info = full.lstat()
        if stat.S_ISLNK(info.st_mode):
            return os.fsencode(str(full.readlink())), FileMode.LINK
        if stat.S_ISREG(info.st_mode):
            mode = FileMode.BLOB_EXECUTABLE if info.st_mode & stat.S_IXUSR else FileMode.BLOB
            return full.read_bytes(), mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    return None


def _differs(repo: pygit2.Repository, full: Path, path: str) -> bool:
    """Whether the file at ``full`` differs from its index entry ``path``."""
    entry = repo.index[path]
    try:
        found = disk_blob(full)
    except OSError:
        return True
    return found is None or found[1] != entry.mode or pygit2.hash(found[0]) != entry.id
