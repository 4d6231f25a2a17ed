"""What the working tree held before a wave: the user's untracked and ignored files.

Recorded cheaply at the start of a session and of each wave: each path git reports as
untracked or ignored, with its stat data (an ignored folder git does not descend into
is one entry, ``name/``). Later, a path whose stat data is unchanged is the user's and
untouched; only a path whose stat data differs is hashed, against the copy taken before
dispatch when there is one. Attribution and set-aside consider only what changed.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from seawall.git.repo import open_repository, workdir
from seawall.git.tree_state import worktree_status

__all__ = ["Baseline", "record_baseline"]

Stamp = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


def _stamp(full: Path) -> Stamp | None:
    try:
        info = full.lstat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


@dataclass(frozen=True, slots=True, kw_only=True)
class Baseline:
    """The untracked and ignored paths of a working tree at one moment, with stat data.

    ``copy`` is the commit holding copies of the user files an in-place agent's scope
    covers (taken before dispatch), or None. A record: the session keeps it in the
    wave's folder through the codec.
    """

    stamps: Mapping[str, Stamp] = field(default_factory=dict)
    copy: str | None = None
    ignored: tuple[str, ...] = ()  # the recorded paths git ignores (sorted)

    def predates(self, path: str) -> bool:
        """Whether ``path`` (or an ignored folder holding it) was there before."""
        if path in self.stamps:
            return True
        parts = path.split("/")
        return any("/".join(parts[:end]) + "/" in self.stamps for end in range(1, len(parts)))

    def unchanged(self, repo: pygit2.Repository, path: str) -> bool:
        """Whether ``path`` predates the baseline and still holds what it held then."""
        if not self.predates(path):
            return False
        if path not in self.stamps:
            return True  # inside an ignored folder: the folder, not its files, was recorded
        full = workdir(repo) / path
        if _stamp(full) == self.stamps[path]:
            return True
        blob = self._copied_blob(repo, path)
        if blob is None or not full.is_file():
            return False
        return bool(pygit2.hashfile(str(full)) == blob)

    def files(self) -> tuple[str, ...]:
        """The recorded files (not the ignored folders), sorted."""
        return tuple(sorted(path for path in self.stamps if not path.endswith("/")))

    def copied(self, repo: pygit2.Repository) -> pygit2.Tree | None:
        if self.copy is None:
            return None
        return repo.revparse_single(self.copy).peel(pygit2.Tree)

    def _copied_blob(self, repo: pygit2.Repository, path: str) -> pygit2.Oid | None:
        tree = self.copied(repo)
        if tree is None:
            return None
        try:
            return tree[path].id
        except KeyError:
            return None

    def with_copy(self, commit: str | None) -> Baseline:
        return Baseline(stamps=self.stamps, copy=commit, ignored=self.ignored)


def record_baseline(
    repo_path: str | os.PathLike[str], *, skip: Collection[str] = (".seawall/",)
) -> Baseline:
    """The untracked and ignored paths of the working tree now, with their stat data."""
    repo = open_repository(repo_path)
    root = workdir(repo)
    stamps: dict[str, Stamp] = {}
    ignored: list[str] = []
    for path, flags in worktree_status(repo, ignored=True).items():
        if not flags & (pygit2.enums.FileStatus.WT_NEW | pygit2.enums.FileStatus.IGNORED):
            continue
        if any(path == s or path.startswith(s) for s in skip):
            continue
        stamp = _stamp(root / path.rstrip("/"))
        if stamp is not None:
            stamps[path] = stamp
            if flags & pygit2.enums.FileStatus.IGNORED:
                ignored.append(path)
    return Baseline(stamps=stamps, ignored=tuple(sorted(ignored)))


def under(path: str, prefixes: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``prefixes`` or inside one ending with ``/``."""
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in prefixes)
