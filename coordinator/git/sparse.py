"""Sparse worktrees: an agent's checkout holds what it needs, not the whole tree.

What an agent needs is its scope, the paths its task declares it reads (``reads``), the
paths every agent's checks read (``[session] reads``) and, always, every file at the top
of the repository (``pyproject.toml``, ``conftest.py``, ``README.md``: what tools and
test runners look for first) and the ``.claude/`` folder.

git's *cone mode* is used: a sparse set is a list of folders, each checked out whole,
with the files directly inside each of their parents. It is what ``git sparse-checkout``
uses by default and matches patterns by folder, not file by file, so it stays fast on
large trees. A pattern maps to the folder before its first wildcard (``src/pkg/**/*.py``
needs ``src/pkg``; an exact file ``src/pkg/mod.py`` needs ``src/pkg``). A pattern that
can match anywhere (``**/*.py``) or a task with neither scope nor reads has no useful
sparse set: that task gets the whole tree (:func:`sparse_dirs` returns ``None``).

The sparse set is written into the worktree's own ``info/sparse-checkout`` and applied
by the checkout with ``core.sparseCheckout`` given on the command line, so the
repository's configuration is never changed. Files left out carry git's skip-worktree
bit; :mod:`seawall.git.tree_state` makes sure no reader takes them for deletions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from seawall.model import SessionConfig, Task
from seawall.runtime.files import atomic_write_text

__all__ = [
    "ALWAYS",
    "cone_patterns",
    "sparse_args",
    "sparse_dirs",
    "task_sparse_dirs",
    "write_sparse_set",
]

ALWAYS = (".claude",)
_GLOB_SPECIAL = set("*?[]\\")


def _needed_dir(pattern: str) -> str | None:
    """The folder ``pattern`` needs ("" for the top level), or None when it can match
    anywhere. Absolute grants name paths outside the repository: they need nothing."""
    if pattern.startswith("/"):
        return ""
    segments = [s for s in pattern.rstrip("/").split("/") if s]
    folder = pattern.endswith("/")
    literal: list[str] = []
    for segment in segments:
        if "*" in segment:
            if segment == "**" and not literal:
                return None  # any depth from the top: the whole tree
            return "/".join(literal)
        literal.append(segment)
    if folder:
        return "/".join(literal)
    return "/".join(literal[:-1])  # an exact path: the folder holding it


def sparse_dirs(
    scope: Iterable[str], reads: Iterable[str] = (), shared: Iterable[str] = ()
) -> tuple[str, ...] | None:
    """The folders of a task's sparse checkout (``scope`` and ``reads`` are the task's,
    ``shared`` the session's reads), or None when the task needs the whole tree."""
    own = [*scope, *reads]
    if not own:
        return None
    folders: set[str] = set(ALWAYS)
    for pattern in [*own, *shared]:
        needed = _needed_dir(pattern)
        if needed is None:
            return None
        if needed:
            folders.add(needed)
    return _outermost(folders)


def task_sparse_dirs(task: Task, session: SessionConfig) -> tuple[str, ...] | None:
    """The folders of ``task``'s sparse worktree, or None for the whole tree: when
    neither the task (``sparse``) nor else the session asks for sparse worktrees, or
    when the task's paths need the whole tree."""
    wanted = session.sparse if task.sparse is None else task.sparse
    if not wanted:
        return None
    return sparse_dirs(task.scope, task.reads, session.reads)


def _outermost(folders: Iterable[str]) -> tuple[str, ...]:
    """``folders`` without those inside another one (cone mode checks a folder out whole)."""
    kept: list[str] = []
    for folder in sorted(folders):
        if not any(folder.startswith(outer + "/") for outer in kept):
            kept.append(folder)
    return tuple(kept)


def _escape(name: str) -> str:
    return "".join("\\" + c if c in _GLOB_SPECIAL else c for c in name)


def cone_patterns(folders: Sequence[str]) -> str:
    """The ``info/sparse-checkout`` text of cone mode for ``folders``: every top-level
    file, each folder whole, and each of its parents' own files."""
    lines = ["/*", "!/*/"]
    parents: set[str] = set()
    for folder in folders:
        for parent in reversed(PurePosixPath(folder).parents[:-1]):
            parents.add(parent.as_posix())
    for entry in sorted(parents | set(folders)):
        lines.append(f"/{_escape(entry)}/")
        if entry in parents:
            lines.append(f"!/{_escape(entry)}/*/")
    return "\n".join(lines) + "\n"


def write_sparse_set(admin: Path, folders: Sequence[str]) -> None:
    """Write the sparse set of the worktree whose administrative folder is ``admin``."""
    info = admin / "info"
    info.mkdir(exist_ok=True)
    atomic_write_text(info / "sparse-checkout", cone_patterns(folders), durable=False)


def sparse_args() -> list[str]:
    """git options that make one command apply the worktree's sparse set in cone mode."""
    return ["-c", "core.sparseCheckout=true", "-c", "core.sparseCheckoutCone=true"]
