"""Moving the target branch to a checked integration commit, safely.

Order of work, so that a crash at any point leaves the branch where it was or fully
advanced and never a merge in progress:

1. refuse (``DirtyWorkingTreeError``) before touching anything when the user has
   uncommitted changes in files the advance would change;
2. put back the base content of files in-place agents wrote (their work is already in the
   integration commits and checkpoint refs);
3. update the index and working tree from the old to the new tree (``git read-tree -m -u``,
   the two-tree fast-forward git itself uses; it keeps unrelated local changes). git
   writes the files first and the index last, so a ``read-tree`` killed midway leaves
   some files as in the new tree while the index still says old: before the update is
   redone, such files are put back as in the old tree (``read-tree`` writes them again).
   The advance is written down first (``.git/seawall-advance``: old and new), so the
   redo also knows the file git was writing when it died: one that is a prefix of its
   new content (git writes a file from its start), or not there yet (git removes the
   old one first), is git's, not the user's;
4. move the branch with a compare-and-swap (``git update-ref <ref> <new> <old>``); if the
   branch moved meanwhile, the working tree is put back and ``GitError`` is raised.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import pygit2

from seawall.errors import DirtyWorkingTreeError, GitError
from seawall.git.repo import (
    dirty_paths,
    open_repository,
    ref_target,
    repo_relative,
    require_no_operation,
    resolve_commit,
    run_git,
    workdir,
)
from seawall.runtime.fault_injection import kill_point
from seawall.runtime.files import atomic_write_bytes

__all__ = [
    "AdvanceResult",
    "advance_target",
    "check_user_changes",
    "expand_paths",
    "restore_agent_files",
    "restore_path",
    "user_changes_in",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class AdvanceResult:
    branch: str
    old: str
    new: str
    working_tree_updated: bool
    changed_paths: tuple[str, ...]


def user_changes_in(
    repo_path: str | os.PathLike[str],
    paths: Collection[str],
    *,
    ignore: Collection[str] = (),
) -> tuple[str, ...]:
    """Which of ``paths`` have uncommitted changes (or untracked files) in the main tree."""
    repo = open_repository(repo_path)
    wanted = set(paths) - set(ignore)
    return tuple(sorted(dirty_paths(repo) & wanted))


def check_user_changes(
    repo_path: str | os.PathLike[str],
    *,
    old: str,
    new: str,
    agent_paths: Collection[str] = (),
) -> tuple[str, ...]:
    """Return the paths the advance changes; raise if the user has changes in any of them.

    ``agent_paths`` are files in-place agents wrote: their changes are the wave's, not the
    user's, so they do not count.
    """
    repo = open_repository(repo_path)
    changed = _changed(repo, old, new)
    conflicting = user_changes_in(repo_path, changed, ignore=agent_paths)
    if conflicting:
        shown = ", ".join(conflicting[:10]) + (" ..." if len(conflicting) > 10 else "")
        raise DirtyWorkingTreeError(
            f"you have uncommitted changes in {len(conflicting)} file(s) the merged wave "
            f"changes: {shown}. Commit or stash them; nothing was changed.",
            paths=conflicting,
        )
    return tuple(sorted(changed))


def advance_target(
    repo_path: str | os.PathLike[str],
    *,
    branch: str,
    expected_old: str,
    new: str,
    agent_paths: Collection[str] = (),
) -> AdvanceResult:
    """Fast-forward ``branch`` from ``expected_old`` to ``new`` and update the main tree.

    The working tree is only updated when ``branch`` is checked out there. Raises
    ``GitError`` when the branch is not at ``expected_old`` or ``new`` does not descend
    from it, ``DirtyWorkingTreeError`` when user changes are in the way.
    """
    repo = open_repository(repo_path)
    require_no_operation(repo)
    root = workdir(repo)
    ref_name = f"refs/heads/{branch}"
    old = _expect_branch(repo, ref_name, expected_old)
    new_id = _descendant(repo, old, new)
    checked_out = (
        not repo.head_is_detached and not repo.head_is_unborn and repo.head.name == ref_name
    )
    changed: tuple[str, ...] = tuple(sorted(_changed(repo, str(old), str(new_id))))
    intent = Path(repo.path) / _INTENT
    if checked_out:
        redo = _intended(intent) == (str(old), str(new_id))
        agent_files = expand_paths(repo, root, repo[old].peel(pygit2.Tree), agent_paths)
        agent_files |= _written_by_interrupted_update(repo, root, old, new_id, changed, redo=redo)
        changed = check_user_changes(root, old=str(old), new=str(new_id), agent_paths=agent_files)
        _restore(repo, root, old, agent_files)
        atomic_write_bytes(intent, f"{old} {new_id}\n".encode())
        run_git(["read-tree", "-m", "-u", str(old), str(new_id)], cwd=root)
        kill_point("mid-advance")
    swapped = run_git(
        ["update-ref", "-m", "seawall: advance after merged wave", ref_name, str(new_id), str(old)],
        cwd=root,
        check=False,
    )
    if not swapped.ok:
        if checked_out:
            run_git(["read-tree", "-m", "-u", str(new_id), str(old)], cwd=root, check=False)
        intent.unlink(missing_ok=True)
        raise GitError(f"{branch} moved while the wave was merged; nothing was advanced")
    intent.unlink(missing_ok=True)
    return AdvanceResult(
        branch=branch,
        old=str(old),
        new=str(new_id),
        working_tree_updated=checked_out,
        changed_paths=changed,
    )


_INTENT = "seawall-advance"
"""In the git directory while an advance updates the main tree: ``<old> <new>``."""


def _intended(intent: Path) -> tuple[str, ...]:
    """The old and new commits of the advance a crash interrupted (none: empty)."""
    try:
        return tuple(intent.read_text(encoding="ascii").split())
    except (OSError, UnicodeDecodeError):
        return ()


def _written_by_interrupted_update(
    repo: pygit2.Repository,
    root: Path,
    old: pygit2.Oid,
    new: pygit2.Oid,
    changed: Collection[str],
    *,
    redo: bool = False,
) -> set[str]:
    """The changed files a killed ``git read-tree -m -u`` already wrote: on disk as in
    ``new`` (or gone, where ``new`` has none) while the index has them as in ``old``.
    Redoing that very advance (``redo``), also the one it was writing: not there yet, or
    a prefix of its content in ``new``."""
    old_tree = repo[old].peel(pygit2.Tree)
    new_tree = repo[new].peel(pygit2.Tree)
    repo.index.read()
    found = set()
    for path in set(changed) & dirty_paths(repo):
        if _index_entry(repo.index, path) != _tree_entry(old_tree, path):
            continue
        entry = _tree_entry(new_tree, path)
        if _on_disk_as(root, entry, path) or (redo and _being_written(repo, root, entry, path)):
            found.add(path)
    return found


def _being_written(
    repo: pygit2.Repository, root: Path, entry: tuple[pygit2.Oid, int] | None, path: str
) -> bool:
    """Whether ``path`` is as git leaves a file it was writing when it died: not there
    yet, or a regular file holding the start of the blob ``entry``."""
    if entry is None:
        return False
    full = root / path
    if not full.exists() and not full.is_symlink():
        return True
    if full.is_symlink() or not full.is_file() or entry[1] == pygit2.enums.FileMode.LINK:
        return False
    blob = repo[entry[0]].peel(pygit2.Blob).data
    with full.open("rb") as handle:
        written = handle.read(len(blob) + 1)
    return len(written) < len(blob) and blob.startswith(written)


def _tree_entry(tree: pygit2.Tree, path: str) -> tuple[pygit2.Oid, int] | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    return (entry.id, int(entry.filemode)) if entry.type_str == "blob" else None


def _index_entry(index: pygit2.Index, path: str) -> tuple[pygit2.Oid, int] | None:
    try:
        entry = index[path]
    except KeyError:
        return None
    return entry.id, int(entry.mode)


def _on_disk_as(root: Path, entry: tuple[pygit2.Oid, int] | None, path: str) -> bool:
    """Whether the file at ``path`` is the blob ``entry`` (absent, when it is None)."""
    full = root / path
    if entry is None:
        return not full.is_symlink() and not full.exists()
    blob, mode = entry
    if mode == pygit2.enums.FileMode.LINK:
        if not full.is_symlink():
            return False
        return pygit2.hash(os.fsencode(full.readlink())) == blob
    if full.is_symlink() or not full.is_file():
        return False
    executable = bool(full.stat().st_mode & 0o100)
    if executable != (mode == pygit2.enums.FileMode.BLOB_EXECUTABLE):
        return False
    return pygit2.hashfile(str(full)) == blob


def _expect_branch(repo: pygit2.Repository, ref_name: str, expected: str) -> pygit2.Oid:
    reference = repo.references.get(ref_name)
    if reference is None:
        raise GitError(f"the target branch {ref_name} does not exist")
    current = ref_target(reference)
    if str(current) != expected:
        raise GitError(
            f"{ref_name} is at {str(current)[:12]}, not at the wave base {expected[:12]}; "
            "it moved during the wave, so seawall will not advance it"
        )
    return current


def _descendant(repo: pygit2.Repository, old: pygit2.Oid, new: str) -> pygit2.Oid:
    new_id = resolve_commit(repo, new).id
    if new_id != old and not repo.descendant_of(new_id, old):
        raise GitError(f"{new[:12]} does not descend from {str(old)[:12]}; not a fast-forward")
    return new_id


def _changed(repo: pygit2.Repository, old: str, new: str) -> set[str]:
    old_tree = resolve_commit(repo, old).tree
    new_tree = resolve_commit(repo, new).tree
    paths: set[str] = set()
    for delta in old_tree.diff_to_tree(new_tree).deltas:
        paths.add(delta.old_file.path)
        paths.add(delta.new_file.path)
    return paths


def _restore(
    repo: pygit2.Repository, root: Path, commit: pygit2.Oid, agent_files: Collection[str]
) -> None:
    """Give in-place agents' files their content at ``commit`` on disk and in the index."""
    if not agent_files:
        return
    tree = repo[commit].peel(pygit2.Tree)
    for path in sorted(agent_files):
        restore_path(repo, root, tree, path)
    run_git(
        ["reset", "-q", str(commit), "--pathspec-from-file=-", "--pathspec-file-nul"],
        cwd=root,
        check=False,
        input_text="\0".join(sorted(agent_files)),
    )


def restore_agent_files(
    repo_path: str | os.PathLike[str], commit: str, paths: Collection[str]
) -> None:
    """Give in-place agents' files their content at ``commit`` on disk *and in the index*
    (an agent's own ``git add`` must not stay staged after its work is set aside).
    Paths that are absolute or climb out of the repository are never touched."""
    inside = [p for p in paths if not (Path(p).is_absolute() or ".." in Path(p).parts)]
    if not inside:
        return
    repo = open_repository(repo_path)
    _restore(repo, workdir(repo), resolve_commit(repo, commit).id, inside)


def expand_paths(
    repo: pygit2.Repository, root: Path, tree: pygit2.Tree, paths: Collection[str]
) -> set[str]:
    """The files behind ``paths``: a folder stands for every file in it, on disk and in
    ``tree``. Paths outside the working tree, in ``.git`` or ``.seawall`` are dropped."""
    files: set[str] = set()
    for path in paths:
        relative = repo_relative(root, path)
        if relative is None:
            continue
        full = root / relative
        if full.is_dir() and not full.is_symlink():
            files.update(
                inner
                for child in full.rglob("*")
                if not child.is_dir() and (inner := repo_relative(root, str(child))) is not None
            )
        try:
            entry = tree[relative]
        except KeyError:
            entry = None
        if entry is not None and entry.type_str == "tree":
            files.update(f"{relative}/{name}" for name in _blob_paths(repo, entry.id))
        elif not full.is_dir():
            files.add(relative)
    return files


def _blob_paths(repo: pygit2.Repository, tree_id: pygit2.Oid) -> list[str]:
    names: list[str] = []
    for entry in repo[tree_id].peel(pygit2.Tree):
        if entry.type_str == "tree":
            names.extend(f"{entry.name}/{inner}" for inner in _blob_paths(repo, entry.id))
        else:
            names.append(str(entry.name))
    return names


def restore_path(repo: pygit2.Repository, root: Path, tree: pygit2.Tree, path: str) -> None:
    """Write ``path`` as it is in ``tree`` (or remove it when the tree does not have it)."""
    full = root / path
    try:
        entry = tree[path]
    except KeyError:
        entry = None
    if full.is_symlink() or full.is_file():
        full.unlink()
    if entry is None or entry.type_str != "blob":
        _remove_empty_folders(root, full.parent)
        return
    full.parent.mkdir(parents=True, exist_ok=True)
    data = repo[entry.id].peel(pygit2.Blob).data
    if entry.filemode == pygit2.enums.FileMode.LINK:
        full.symlink_to(os.fsdecode(data))
        return
    full.write_bytes(data)
    if entry.filemode == pygit2.enums.FileMode.BLOB_EXECUTABLE:
        full.chmod(0o755)


def _remove_empty_folders(root: Path, folder: Path) -> None:
    """Remove ``folder`` and its parents while they are empty, up to ``root``."""
    while folder != root and folder.is_relative_to(root) and folder.is_dir():
        if any(folder.iterdir()):
            return
        folder.rmdir()
        folder = folder.parent
