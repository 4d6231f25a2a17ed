"""The skip-worktree entries of a git index file, read from its bytes in one pass.

libgit2 reads the index too, but reaching each entry's flags through pygit2's binding
costs a call per entry; a sparse worktree's index holds every file of the repository.
This reader walks the file's entries (formats 2 and 3: a fixed 62-byte header whose
flags word sits at offset 60, the extended-flags word that follows it when bit 0x4000
is set, then the NUL-terminated path padded to a multiple of 8 bytes) and keeps the
paths whose extended flags carry skip-worktree. The answer is kept per index file while
the file's inode, size and modification time are unchanged (git replaces an index by
renaming a new file over it, so any write changes the inode).

Anything it does not take (format 4's prefix-compressed paths, a split index, a sparse
index's folder entries, a file cut short or with an unknown shape) returns None, and
the caller reads the index through libgit2 instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["IndexPaths", "read_skipped"]

_HEADER = 62  # stat data (40), object id (20), flags (2)
_NAME_MASK = 0x0FFF  # flags: the path's length, when shorter
_UNTAKEN = (b"link", b"sdir")  # split index, sparse index
_KEEP = 64  # index files remembered


@dataclass(frozen=True, slots=True)
class IndexPaths:
    """What one index file holds, as :func:`worktree_status` needs it."""

    skipped: tuple[str, ...]
    """the skip-worktree paths, in index order (sorted)"""
    kept: tuple[str, ...] = ()
    """the other paths, each once, in index order"""
    sizes: tuple[int, ...] = ()
    """the size each of ``kept`` had when written (its low 32 bits); -1 for a submodule"""
    conflicted: bool = False
    """whether some entry is a conflict stage (1, 2 or 3)"""


_EMPTY = IndexPaths(())
_memo: dict[str, tuple[tuple[int, int, int], IndexPaths]] = {}


def read_skipped(index: Path) -> IndexPaths | None:
    """The paths of the index file ``index``; empty when the file is missing; None when
    this reader does not take the file."""
    key = str(index)
    try:
        stamp = _stamp(index.stat())
    except FileNotFoundError:
        return _EMPTY
    except OSError:
        return None
    known = _memo.get(key)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        with index.open("rb") as handle:
            stamp = _stamp(os.fstat(handle.fileno()))  # the file read, even if replaced since
            data = handle.read()
    except FileNotFoundError:
        return _EMPTY
    except OSError:
        return None
    groups = _parse(data)
    if groups is not None:
        if len(_memo) >= _KEEP:
            _memo.pop(next(iter(_memo)))
        _memo[key] = (stamp, groups)
    return groups


def _stamp(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_ino, info.st_size, info.st_mtime_ns


def _parse(data: bytes) -> IndexPaths | None:
    if len(data) < 12 + 20 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    if version not in (2, 3):
        return None
    count = int.from_bytes(data[8:12], "big")
    end = len(data) - 20  # the trailing SHA-1 checksum
    skipped_paths: list[str] = []
    kept: list[str] = []
    sizes: list[int] = []
    conflicted = False
    offset = 12
    from_bytes = int.from_bytes
    try:
        for _ in range(count):
            high = data[offset + 60]
            start = offset + _HEADER
            length = (high & 0x0F) << 8 | data[offset + 61]
            if high & 0x40:  # extended flags: skip-worktree is bit 0x4000 of the word
                if version < 3:
                    return None
                skipped = data[start] & 0x40
                start += 2
            else:
                skipped = 0
            stop = start + length if length < _NAME_MASK else data.index(0, start)
            if skipped:
                if data[offset + 26] & 0xF0 == 0x40:  # a folder entry (mode 040000)
                    return None
                skipped_paths.append(data[start:stop].decode())
            elif high & 0x30:  # a conflict stage
                conflicted = True
            else:
                kept.append(data[start:stop].decode())
                gitlink = data[offset + 26] & 0xF0 == 0xE0  # mode 160000
                sizes.append(-1 if gitlink else from_bytes(data[offset + 36 : offset + 40], "big"))
            offset = (stop - offset + 8 & ~7) + offset
    except (IndexError, ValueError):  # cut short, or a path that is not UTF-8
        return None
    if offset > end or data[offset - 1] != 0:
        return None
    if not _extensions_taken(data, offset, end):
        return None
    return IndexPaths(tuple(skipped_paths), tuple(kept), tuple(sizes), conflicted)


def _extensions_taken(data: bytes, offset: int, end: int) -> bool:
    """Whether the extensions from ``offset`` to ``end`` fit and none changes what the
    entries mean (a split index keeps entries elsewhere; a sparse index folds them)."""
    while offset < end:
        if offset + 8 > end:
            return False
        name = data[offset : offset + 4]
        size = int.from_bytes(data[offset + 4 : offset + 8], "big")
        if name in _UNTAKEN:
            return False
        offset += 8 + size
    return offset == end
