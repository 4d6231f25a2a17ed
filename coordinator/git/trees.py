"""Changing a few paths of a tree without rebuilding the whole tree.

Only the trees on the way to a changed path are rewritten, so the cost follows the
depth of the changed paths and the size of their folders, not the size of the
repository. Used by in-place checkpoints and by merges of agents whose paths do not
overlap with what is already merged.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import pygit2
from pygit2.enums import FileMode

__all__ = ["BlobEntry", "ancestors", "update_tree"]

BlobEntry = tuple[pygit2.Oid, int]  # blob id and file mode; None in a mapping deletes


def update_tree(
    repo: pygit2.Repository,
    tree: pygit2.Tree | None,
    changes: Mapping[str, BlobEntry | None],
) -> pygit2.Oid:
    """Write ``tree`` with ``changes`` applied (``None`` removes a path) and return its id.

    ``{"d": None, "d/f": blob}`` replaces the folder ``d`` by exactly what is listed
    below it; ``{"d": blob, "d/f": None}`` replaces the folder by a file. A folder left
    empty disappears.
    """
    direct: dict[str, BlobEntry | None] = {}
    nested: dict[str, dict[str, BlobEntry | None]] = {}
    for path, entry in changes.items():
        head, _, rest = path.partition("/")
        if rest:
            nested.setdefault(head, {})[rest] = entry
        else:
            direct[head] = entry
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    raw: dict[bytes, BlobEntry] = {}  # names that are not UTF-8, inserted as bytes
    for name, entry in direct.items():
        if entry is None:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            _insert(builder, raw, name, entry)
    for name, sub_changes in nested.items():
        if direct.get(name) is not None:
            continue  # the path is a file now; what was below it is gone with the folder
        current = builder.get(name)
        subtree = None
        if current is not None and current.filemode == FileMode.TREE:
            subtree = repo[current.id].peel(pygit2.Tree)
        elif current is not None:
            builder.remove(name)  # a file replaced by a folder
        if subtree is None and all(entry is None for entry in sub_changes.values()):
            continue
        new_id = update_tree(repo, subtree, sub_changes)
        if len(repo[new_id].peel(pygit2.Tree)) == 0:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            _insert(builder, raw, name, (new_id, FileMode.TREE))
    written = builder.write()
    return _with_raw_names(repo, written, raw) if raw else written


def _insert(
    builder: pygit2.TreeBuilder, raw: dict[bytes, BlobEntry], name: str, entry: BlobEntry
) -> None:
    """Insert ``name``; a name that is not UTF-8 (a file name git reported as bytes,
    decoded with ``surrogateescape``) is kept aside for :func:`_with_raw_names`."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        if builder.get(name) is not None:
            builder.remove(name)
        raw[os.fsencode(name)] = entry
        return
    builder.insert(name, entry[0], entry[1])


def _with_raw_names(
    repo: pygit2.Repository, tree_id: pygit2.Oid, extra: Mapping[bytes, BlobEntry]
) -> pygit2.Oid:
    """The tree ``tree_id`` plus ``extra`` entries whose names are bytes, written as a raw
    tree object (pygit2's tree builder only takes UTF-8 names)."""
    entries: dict[bytes, BlobEntry] = {
        item.raw_name or b"": (item.id, int(item.filemode))
        for item in repo[tree_id].peel(pygit2.Tree)
    }
    entries.update(extra)

    def order(name: bytes) -> bytes:  # git sorts a folder as if its name ended in "/"
        return name + b"/" if entries[name][1] == FileMode.TREE else name

    body = b"".join(
        b"%o %s\0%s" % (entries[name][1], name, entries[name][0].raw)
        for name in sorted(entries, key=order)
    )
    return repo.odb.write(pygit2.enums.ObjectType.TREE, body)


def ancestors(paths: Iterable[str]) -> set[str]:
    """Every folder above each path (``a/b/c`` gives ``a`` and ``a/b``)."""
    folders: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for end in range(1, len(parts) + 1):
            folders.add("/".join(parts[:end]))
    return folders
