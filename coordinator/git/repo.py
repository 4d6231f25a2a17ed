"""Opening the repository, pinning a wave's base, naming seawall's refs, running git.

seawall reads and writes objects with pygit2 and calls the git CLI only where git must
do the work itself (worktrees, updating a checked-out working tree). Every name seawall
derives from a session or task id passes through :func:`safe_component`, so no id can
reach outside seawall's ref namespace or its worktree folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import anyio
import pygit2

from seawall.errors import GitError
from seawall.git.tree_state import worktree_status

__all__ = [
    "SEAWALL_DIR",
    "BasePin",
    "GitOutput",
    "agent_branch",
    "checkpoint_ref",
    "common_dir",
    "dirty_paths",
    "ensure_excluded",
    "open_repository",
    "parse_trailers",
    "pin_base",
    "ref_target",
    "repo_relative",
    "resolve_commit",
    "run_git",
    "run_git_async",
    "safe_component",
    "seawall_signature",
    "workdir",
]

SEAWALL_DIR = ".seawall"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_MAX_COMPONENT = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class BasePin:
    """The branch checked out when a wave starts and the commit it points at."""

    branch: str
    commit: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GitOutput:
    """The result of one git CLI call."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def open_repository(path: str | os.PathLike[str]) -> pygit2.Repository:
    """Open the repository containing ``path``; raise ``GitError`` if there is none."""
    if not Path(path).exists():
        raise GitError(f"{path} does not exist: give --repo the repository's folder")
    found = pygit2.discover_repository(str(path))
    if found is None:
        raise GitError(
            f"{path} is not inside a git repository: run seawall in the repository (or give "
            "--repo), or make this folder one with `git init` and a first commit"
        )
    try:
        return pygit2.Repository(found)
    except pygit2.GitError as exc:
        raise GitError(f"cannot open the git repository at {found}: {exc}") from exc


def resolve_commit(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    """The commit ``rev`` names (an id, branch or ref); ``GitError`` if there is none."""
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise GitError(f"{rev!r} does not name a commit in {repo.path}") from exc


def workdir(repo: pygit2.Repository) -> Path:
    """The repository's working tree; ``GitError`` for a bare repository."""
    if repo.is_bare or not repo.workdir:
        raise GitError(f"{repo.path} is a bare repository; seawall needs a working tree")
    return Path(repo.workdir)


def pin_base(repo_path: str | os.PathLike[str]) -> BasePin:
    """Return the checked-out branch and its commit, the base every agent of a wave starts at.

    Raises ``GitError`` on a detached HEAD or a repository without commits: seawall needs
    a branch to advance when the wave's work is merged.
    """
    repo = open_repository(repo_path)
    require_no_operation(repo)
    if repo.head_is_unborn:
        raise GitError(
            f"{workdir(repo)} has no commits yet; make an initial commit before a session"
        )
    if repo.head_is_detached:
        raise GitError(
            f"HEAD of {workdir(repo)} is detached; check out the branch the session should "
            "advance (for example `git switch main`)"
        )
    head = repo.head
    return BasePin(branch=head.shorthand, commit=str(head.target))


_OPERATIONS = {
    pygit2.enums.RepositoryState.MERGE: ("a merge", "git merge --continue` or `git merge --abort"),
    pygit2.enums.RepositoryState.REVERT: (
        "a revert",
        "git revert --continue` or `git revert --abort",
    ),
    pygit2.enums.RepositoryState.REVERT_SEQUENCE: (
        "a revert",
        "git revert --continue` or `git revert --abort",
    ),
    pygit2.enums.RepositoryState.CHERRYPICK: (
        "a cherry-pick",
        "git cherry-pick --continue` or `git cherry-pick --abort",
    ),
    pygit2.enums.RepositoryState.CHERRYPICK_SEQUENCE: (
        "a cherry-pick",
        "git cherry-pick --continue` or `git cherry-pick --abort",
    ),
    pygit2.enums.RepositoryState.BISECT: ("a bisect", "git bisect reset"),
}


def require_no_operation(repo: pygit2.Repository) -> None:
    """Raise ``GitError`` while a merge, rebase, cherry-pick, revert or bisect is in
    progress in ``repo``: seawall must not move a branch under an unfinished operation."""
    state = pygit2.enums.RepositoryState(repo.state())
    if state is pygit2.enums.RepositoryState.NONE:
        return
    what, finish = _OPERATIONS.get(
        state, ("a rebase", "git rebase --continue` or `git rebase --abort")
    )
    raise GitError(
        f"{what} is in progress in {workdir(repo)} ({state.name}); finish it first "
        f"(`{finish}`), then run seawall again"
    )


def safe_component(text: str) -> str:
    """Turn an id into one safe path and ref component.

    Only ASCII letters, digits, ``_`` and ``-`` survive; anything else (``/``, ``..``,
    spaces, ``.lock``) becomes ``-``. When the id had to change, a short hash of the
    original is appended, so two ids that sanitise alike still get different names.
    """
    if not text:
        raise GitError("an empty id cannot name a branch, ref or folder")
    cleaned = _UNSAFE.sub("-", text).strip("-")[:_MAX_COMPONENT] or "x"
    if cleaned == text:
        return text
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned}-{digest}"


def checkpoint_ref(session_id: str, task_id: str) -> str:
    """The private ref holding an agent's shadow checkpoints."""
    return f"refs/seawall/{safe_component(session_id)}/{safe_component(task_id)}"


def agent_branch(session_id: str, wave: int, task_id: str) -> str:
    """The branch of an agent's worktree: ``seawall/<session>/w<wave>/<task>``."""
    return f"seawall/{safe_component(session_id)}/w{int(wave)}/{safe_component(task_id)}"


def common_dir(repo: pygit2.Repository) -> Path:
    """The repository's common git directory: the same for the main tree and every
    linked worktree (a worktree's own git directory names it in ``commondir``)."""
    path = Path(repo.path)
    commondir = path / "commondir"
    if commondir.is_file():
        return (path / commondir.read_text().strip()).resolve()
    return path.resolve()


def ensure_excluded(repo: pygit2.Repository) -> None:
    """Make git ignore ``.seawall/`` through ``info/exclude`` (never the user's .gitignore)."""
    exclude = common_dir(repo) / "info" / "exclude"
    line = f"/{SEAWALL_DIR}/"
    existing = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
    if line in existing.splitlines():
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    with exclude.open("a", encoding="utf-8") as handle:
        handle.write(f"{prefix}{line}\n")


def ref_target(reference: pygit2.Reference) -> pygit2.Oid:
    """The commit id a direct reference points at (symbolic ones are resolved)."""
    target = reference.resolve().target
    if not isinstance(target, pygit2.Oid):
        raise GitError(f"reference {reference.name} does not point at an object")
    return target


def dirty_paths(repo: pygit2.Repository) -> set[str]:
    """Paths of the working tree with uncommitted changes, untracked files included."""
    quiet = (pygit2.enums.FileStatus.CURRENT, pygit2.enums.FileStatus.IGNORED)
    return {path for path, flags in worktree_status(repo).items() if flags not in quiet}


def repo_relative(root: Path, path: str) -> str | None:
    """``path`` as a normalised POSIX path inside ``root``, or ``None`` when it is not.

    Paths inside ``.git`` or ``.seawall`` are never an agent's files and give ``None``.
    """
    full = Path(os.path.normpath(root / path))
    try:
        parts = full.relative_to(root).parts
    except ValueError:
        return None
    if not parts or parts[0] in (".git", SEAWALL_DIR):
        return None
    return PurePosixPath(*parts).as_posix()


def seawall_signature() -> pygit2.Signature:
    """The author and committer of every commit seawall writes itself."""
    return pygit2.Signature("seawall", "seawall@localhost")


def parse_trailers(message: str) -> dict[str, str]:
    """The ``Key: value`` trailers of a commit message's last paragraph."""
    paragraphs = message.strip().split("\n\n")
    trailers: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            trailers[key] = value.strip()
    return trailers


def _git_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    if extra:
        env.update(extra)
    return env


def run_git(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    check: bool = True,
    input_text: str | None = None,
) -> GitOutput:
    """Run ``git <args>`` in ``cwd``. With ``check``, a non-zero exit raises ``GitError``.

    Paths are bytes to git: arguments, input and stdout carry file names that are not
    UTF-8 as ``surrogateescape`` strings (the way ``os.fsdecode`` and pygit2 give them).
    """
    argv = ("git", *args)
    try:
        done = subprocess.run(
            [os.fsencode(arg) for arg in argv],
            cwd=cwd,
            env=_git_env(env),
            input=None if input_text is None else input_text.encode("utf-8", "surrogateescape"),
            capture_output=True,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("the git executable was not found on PATH") from exc
    # surrogateescape: paths in the output survive a round trip back to git
    return _output(args, done.returncode, done.stdout, done.stderr, check, "surrogateescape")


async def run_git_async(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> GitOutput:
    """The async twin of :func:`run_git`, for event-loop callers (``anyio.run_process``)."""
    try:
        done = await anyio.run_process(["git", *args], cwd=cwd, env=_git_env(env), check=False)
    except FileNotFoundError as exc:
        raise GitError("the git executable was not found on PATH") from exc
    return _output(args, done.returncode, done.stdout, done.stderr, check, "replace")


def _output(
    args: Sequence[str],
    returncode: int,
    stdout: bytes,
    stderr: bytes,
    check: bool,
    stdout_errors: str,
) -> GitOutput:
    """A finished git call as a ``GitOutput``; a ``GitError`` when ``check`` and it failed."""
    output = GitOutput(
        args=tuple(args),
        returncode=returncode,
        stdout=stdout.decode("utf-8", stdout_errors),
        stderr=stderr.decode("utf-8", "replace"),
    )
    if check and not output.ok:
        raise GitError(f"`git {' '.join(args)}` failed: {output.stderr.strip()}")
    return output
