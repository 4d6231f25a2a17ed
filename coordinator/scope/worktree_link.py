"""A linked worktree's ``.git`` file, which its agent can write, is not trusted.

``<worktree>/.git`` is a file inside the agent's own work tree ("gitdir: <path>"): an
agent could rewrite it to name another repository (or remove it, so that git searches
the folders above), and every later reader that opens the worktree (a checkpoint, a
revert, the clean-up) would read or write that repository instead. What the link must
say comes from the repository's own record of its worktrees
(``<git dir>/worktrees/<name>/gitdir`` names the worktree's ``.git``), which agents
cannot write; ``restore_links`` compares each agent's link with it and, where they
differ, keeps what the agent left and writes the link git made.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from seawall.git.worktree_admin import admin_dirs
from seawall.scope.repostate import ChangeKind, StateChange

__all__ = ["link_points_at", "restore_links"]

_PREFIX = "gitdir:"


def link_points_at(link: Path, admin: Path) -> bool:
    """Whether ``link`` is a regular file that names the git directory ``admin``."""
    if link.is_symlink() or not link.is_file():
        return False
    try:
        text = link.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return False
    if not text.startswith(_PREFIX) or "\n" in text:
        return False
    named = Path(text.removeprefix(_PREFIX).strip())
    target = named if named.is_absolute() else link.parent / named
    return os.path.realpath(target) == os.path.realpath(admin)


def restore_links(
    repo: Path, agents: Sequence[tuple[str, Path]], *, save_dir: Path
) -> list[StateChange]:
    """Put back the ``.git`` link of each ``(task, worktree)`` that no longer names its
    git directory; what was there is kept under ``save_dir``. Workspaces git has no
    worktree record of (in place, or removed) are left alone."""
    changes: list[StateChange] = []
    recorded = admin_dirs(repo)
    for task, worktree in agents:
        admin = recorded.get(Path(os.path.realpath(worktree)))
        link = worktree / ".git"
        if admin is None or not worktree.is_dir() or link_points_at(link, admin):
            continue
        saved = _keep(link, save_dir / "worktrees" / task / ".git")
        link.write_text(f"{_PREFIX} {admin}\n", encoding="utf-8")
        changes.append(
            StateChange(
                area="worktree",
                name=str(link),
                kind=ChangeKind.CHANGED if saved is not None else ChangeKind.REMOVED,
                agents=(task,),
                restored=True,
                saved=saved,
            )
        )
    return changes


def _keep(link: Path, keep: Path) -> str | None:
    """Move what is at ``link`` (a file, a link, a folder) to ``keep``; None if nothing."""
    if not (link.exists() or link.is_symlink()):
        return None
    keep.parent.mkdir(parents=True, exist_ok=True)
    target, number = keep, 1
    while target.exists() or target.is_symlink():  # an earlier one is kept too
        target, number = keep.with_name(f"{keep.name}.{number}"), number + 1
    shutil.move(str(link), str(target))
    return str(target)
