"""The line-wise union of two versions of a file that two agents both added.

With nothing in common to start from, the two versions are merged as git merges a file
(``git merge-file`` on an empty base, libgit2's own file merge): the lines both have
line up, and each region between them is one agent's lines, the other's, or both. A
region only one agent wrote is taken as it is; where both wrote lines at the same place,
which lines should come first is a decision, so the versions conflict. The test: the
union with the earlier agent's lines first equals the union with the later agent's first.
"""

from __future__ import annotations

import pygit2
from pygit2.enums import FileMode, MergeFavor

__all__ = ["line_union"]

_NAME = "file"  # the path both versions take in the throwaway trees merged


def line_union(
    repo: pygit2.Repository, earlier: pygit2.Oid, later: pygit2.Oid
) -> pygit2.Oid | None:
    """The blob of both versions merged line by line, or None when they conflict.

    One version extending the other, or each adding lines in different places around
    lines they share, merges; two different lines (or sections) at the same place do
    not. Callers pass text blobs; a binary blob is the caller's to refuse.
    """
    if earlier == later:
        return earlier
    empty = repo.TreeBuilder().write()
    first = _union(repo, empty, earlier, later)
    second = _union(repo, empty, later, earlier)
    return first if first == second else None


def _union(
    repo: pygit2.Repository, empty: pygit2.Oid, ours: pygit2.Oid, theirs: pygit2.Oid
) -> pygit2.Oid:
    """Merge ``ours`` and ``theirs`` as added on both sides, keeping both sides of every
    conflicting region, ``ours`` first."""
    index = repo.merge_trees(empty, _tree(repo, ours), _tree(repo, theirs), favor=MergeFavor.UNION)
    return index[_NAME].id


def _tree(repo: pygit2.Repository, blob: pygit2.Oid) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    builder.insert(_NAME, blob, FileMode.BLOB)
    return builder.write()
