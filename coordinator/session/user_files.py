"""The user's own files around an in-place wave.

Before dispatch, the untracked and ignored files of the shared tree are recorded (see
:mod:`coordinator.git.baseline`), and those an agent's scope covers are copied onto
``refs/seawall/<session>/user-files-w<n>``, so an agent that overwrites one cannot
lose it. After the merge, a copied file an unmerged agent's revert left missing is put
back. Some paths are never set aside at all: the agent CLI's ``.claude/`` folder, the
plan file and the unattended runner's directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pygit2

from coordinator.fsutil import atomic_write_text
from coordinator.git.baseline import Baseline, record_baseline
from coordinator.git.checkpoints import Checkpointer, CheckpointMode
from coordinator.git.repo import open_repository, repo_relative, workdir
from coordinator.git.target import restore_path

__all__ = [
    "baseline_path",
    "kept_paths",
    "put_back_user_files",
    "restore_command",
    "restore_set_aside",
    "take_baseline",
]

BASELINE_FILE = "baseline.json"


def baseline_path(wave_dir: Path) -> Path:
    return wave_dir / BASELINE_FILE


def take_baseline(
    repo: Path,
    *,
    session: str,
    wave: int,
    base: str,
    scopes: Sequence[Sequence[str]],
    save_to: Path,
) -> Baseline:
    """Record the tree's untracked and ignored files; copy those in a scope onto a ref."""
    from coordinator.scope.matcher import ScopeMatcher

    baseline = record_baseline(repo)
    matchers = [ScopeMatcher(tuple(scope), workspace=repo, session=session) for scope in scopes]
    covered = [p for p in baseline.files() if any(m.matches_relative(p) for m in matchers)]
    copy = None
    if covered:
        keeper = Checkpointer(
            repo,
            session_id=session,
            task_id=f"user-files-w{wave}",
            base=base,
            mode=CheckpointMode.PATHS,
            dispatch=f"w{wave}",
        )
        copy = keeper.wip("the user's files in an agent's scope, before dispatch", covered)
    baseline = baseline.with_copy(copy)
    save_to.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(save_to, baseline.to_json())
    return baseline


def put_back_user_files(repo: Path, baseline: Baseline, paths: Iterable[str]) -> list[str]:
    """Write back copied user files among ``paths`` that are missing now; never overwrite."""
    repository = open_repository(repo)
    tree = baseline.copied(repository)
    if tree is None:
        return []
    root = workdir(repository)
    restored = []
    for path in sorted(set(paths)):
        full = root / path
        if full.exists() or full.is_symlink() or not baseline.predates(path):
            continue
        try:
            tree[path]
        except KeyError:
            continue
        restore_path(repository, root, tree, path)
        restored.append(path)
    return restored


def kept_paths(repo: Path, *, plan_path: str, environ: os._Environ[str] | None = None) -> list[str]:
    """Paths never set aside: ``.claude/``, the plan file, the runner's directory."""
    env = os.environ if environ is None else environ
    kept = [".claude/"]
    for candidate, folder in ((plan_path, False), (env.get("SEAWALL_RUNNER_DIR", ""), True)):
        if not candidate:
            continue
        relative = repo_relative(repo.resolve(), str(Path(candidate).resolve()))
        if relative is not None:
            kept.append(relative + "/" if folder else relative)
    return kept


def restore_command(repo: Path, session: str, wave: int) -> str:
    """The exact command that puts a wave's set-aside files back."""
    return f"seawall restore --repo {repo} --session {session} --wave {wave}"


def restore_set_aside(repo: Path, aside: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Write a wave's set-aside files back from their ref: (restored, left because a
    file is present there now). Nothing present is ever overwritten."""
    repository = open_repository(repo)
    root = workdir(repository)
    tree = repository.revparse_single(str(aside["ref"])).peel(pygit2.Tree)
    restored: list[str] = []
    present: list[str] = []
    for path in aside.get("files", []):
        full = root / path
        if full.exists() or full.is_symlink():
            present.append(path)
            continue
        try:
            tree[path]
        except KeyError:
            continue
        restore_path(repository, root, tree, path)
        restored.append(path)
    return restored, present
