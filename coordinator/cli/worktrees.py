"""``seawall worktrees list|prune``: the agent worktrees seawall created, and their cleanup."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seawall.git.cleanup import WorktreeInfo


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``worktrees list`` and ``worktrees prune``."""
    group = subparsers.add_parser(
        "worktrees",
        help="list or prune seawall's agent worktrees",
        description="The agent worktrees seawall made (outside the working tree): who owns "
        "each, how old it is, and whether it holds work that is not merged yet.",
    )
    commands = group.add_subparsers(dest="worktrees_command", metavar="ACTION", required=True)
    listing = commands.add_parser(
        "list",
        help="list agent worktrees with owner, age and state",
        description="List each agent worktree with its session, wave and task, its age, and "
        "whether it is merged, unchanged, unmerged or dirty.",
    )
    listing.add_argument("--repo", default=".", help="the repository (default: current folder)")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(handler=_list)
    prune = commands.add_parser(
        "prune",
        help="remove merged or unchanged worktrees; keep unmerged or dirty ones",
        description="Remove the worktrees whose work is merged or that never changed; keep "
        "the ones with unmerged or uncommitted work and say why (--force removes them too, "
        "after saving their work on its ref).",
    )
    prune.add_argument("--repo", default=".", help="the repository (default: current folder)")
    prune.add_argument(
        "--force",
        action="store_true",
        help="also remove worktrees with unmerged or uncommitted work (saved on its ref first)",
    )
    prune.add_argument("--json", action="store_true", help="print JSON")
    prune.set_defaults(handler=_prune)


def _owner(info: WorktreeInfo) -> str:
    wave = f"w{info.wave}" if info.wave is not None else "w?"
    return f"{info.session}/{wave}/{info.task}"


def _age(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes}m"
    hours = minutes // 60
    return f"{hours}h" if hours < 48 else f"{hours // 24}d"


def _state(info: WorktreeInfo) -> str:
    if info.missing:
        return "missing"
    if info.merged:
        return "merged"
    return "dirty" if info.dirty else "unmerged"


def _shown_path(info: WorktreeInfo, repo: Path) -> str:
    path = Path(info.path)
    return str(path.relative_to(repo)) if path.is_relative_to(repo) else str(path)


def _list(args: argparse.Namespace) -> int:
    from seawall.git.cleanup import list_worktrees
    from seawall.git.repo import open_repository, workdir

    root = workdir(open_repository(args.repo)).resolve()
    infos = list_worktrees(root)
    if args.json:
        from seawall.cli.documents import WorktreeRow
        from seawall.codec import encode_text

        rows = [
            WorktreeRow(
                path=info.path,
                branch=info.branch,
                session=info.session,
                wave=info.wave,
                task=info.task,
                age_seconds=round(info.age_seconds, 1),
                state=_state(info),
                reason=info.reason,
            )
            for info in infos
        ]
        from seawall.cli.documents import WorktreeList

        print(encode_text(WorktreeList(worktrees=tuple(rows))))
        return 0
    if not infos:
        print("no seawall worktrees")
        return 0
    for info in infos:
        print(
            f"{_shown_path(info, root)}  owner {_owner(info)}  age {_age(info.age_seconds)}  "
            f"{_state(info)}: {info.reason}"
        )
    return 0


def _prune(args: argparse.Namespace) -> int:
    from seawall.git.cleanup import prune_worktrees
    from seawall.git.repo import open_repository, workdir

    root = workdir(open_repository(args.repo)).resolve()
    report = prune_worktrees(root, force=args.force)
    if args.json:
        from seawall.cli.documents import WorktreePruned, WorktreesPruned
        from seawall.codec import encode_text

        def row(info: WorktreeInfo) -> WorktreePruned:
            return WorktreePruned(path=info.path, owner=_owner(info), reason=info.reason)

        document = WorktreesPruned(
            removed=tuple(map(row, report.removed)),
            kept=tuple(map(row, report.kept)),
            salvaged=tuple(report.salvaged),
        )
        print(encode_text(document))
        return 0
    for info in report.removed:
        print(f"removed {_shown_path(info, root)} ({_owner(info)}): {info.reason}")
    for commit in report.salvaged:
        print(f"saved unmerged work as checkpoint {commit[:12]} before removing it")
    for info in report.kept:
        print(
            f"kept {_shown_path(info, root)} ({_owner(info)}, age {_age(info.age_seconds)}): "
            f"{info.reason}; use --force to remove it (its files are saved on its "
            "checkpoint ref first)"
        )
    if not report.removed and not report.kept:
        print("no seawall worktrees")
    return 0
