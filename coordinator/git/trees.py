"""Changing a few paths of a tree without rebuilding the whole tree.

Only the trees on the way to a changed path are rewritten, so the cost follows the
depth of the changed paths and the size of their folders, not the size of the
repository. Used by in-place checkpoints and by merges of agents whose paths do not
overlap with what is already merged.
"""

from __future__ import annotations

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
    for name, entry in direct.items():
        if entry is None:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            builder.insert(name, entry[0], entry[1])
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
            builder.insert(name, new_id, FileMode.TREE)
    return builder.write()


def ancestors(paths: Iterable[str]) -> set[str]:
    """Every folder above each path (``a/b/c`` gives ``a`` and ``a/b``)."""
    folders: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for end in range(1, len(parts) + 1):
            folders.add("/".join(parts[:end]))
    return folders
