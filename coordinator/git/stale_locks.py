"""Git's lock files that a killed seawall left behind, found and removed on resume.

git locks a file by creating ``<file>.lock`` (``O_EXCL``) and lets go by renaming the
lock over the file or deleting it. A git process killed in between (SIGKILL, the OOM
killer, a reboot) leaves the lock behind, and every later git command that needs the
file fails with "Unable to create '.../index.lock': File exists". A coordinator killed
while it advances the target branch can take its ``git read-tree`` or ``git update-ref``
with it.

``recover_git_locks`` runs when ``seawall resume`` starts, with the repository's session
lock held (see ``seawall.state.repolock``): no other seawall runs in this repository
then. It looks at ``index.lock`` and ``HEAD.lock`` of the repository's git directory and
of each worktree seawall made (an agent's, a check's), at ``packed-refs.lock`` and at
every ``refs/**.lock``. A lock is removed only when all of this holds:

- the kernel's process table can be read (``/proc``); elsewhere nothing is removed;
- no live git process belongs to the repository: none whose working directory, ``-C``,
  ``--git-dir`` or ``--work-tree`` argument, or ``GIT_DIR``, ``GIT_WORK_TREE``,
  ``GIT_INDEX_FILE`` or ``GIT_COMMON_DIR`` is inside the working tree, the git
  directory or a linked worktree (seawall's own ancestors excepted: a git alias that
  runs ``seawall resume`` holds no lock; so are the long-lived commands that take no
  lock, such as ``git log`` waiting on its pager). A live git of the repository could
  own any of its locks, so while one runs, no lock is removed;
- no process at all has the lock file open (a program using libgit2 keeps it open);
- the lock is at least ``LOCK_GRACE`` seconds old. git holds a lock for milliseconds:
  a younger one may belong to a git that is starting right now, so resume waits until
  it is that old (a lock its owner lets go of meanwhile simply disappears);
- it is still the same file when it is removed (device, inode, size and time).

A lock a live process holds is never touched: the message names the process (pid and
command line) and says what to do. A process of another user is seen by its command
line only (its working directory and environment are not readable).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from seawall.errors import GitError
from seawall.git.repo import SEAWALL_DIR, common_dir, open_repository, workdir
from seawall.git.worktree_admin import admin_dirs
from seawall.runtime.processes import process_alive
from seawall.shell.gitargv import read_git

__all__ = [
    "LOCK_GRACE",
    "GitProcess",
    "HeldLock",
    "LockSweep",
    "RemovedLock",
    "clear_stale_locks",
    "git_lock_files",
    "recover_git_locks",
]

LOCK_GRACE = 5.0
"""Seconds a lock must have existed, with no owner found, before seawall removes it."""

_POLL = 0.25  # seconds between looks while a lock is young or held
_PROC = Path("/proc")
_GIT_VARIABLES = (b"GIT_DIR", b"GIT_WORK_TREE", b"GIT_INDEX_FILE", b"GIT_COMMON_DIR")
_OWN_LOCKS = ("index.lock", "HEAD.lock")
# long-lived git commands that never take the index, HEAD or a ref (a pager open on
# `git log`, the file-system monitor): they own no lock
_LOCK_FREE = frozenset(
    {
        "log",
        "show",
        "blame",
        "shortlog",
        "cat-file",
        "fsmonitor--daemon",
        "credential-cache--daemon",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class GitProcess:
    """A live process that may hold a lock: its pid and its command line."""

    pid: int
    command: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RemovedLock:
    path: Path
    age_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class HeldLock:
    """A lock left alone, and why: live processes may own it (``holders``), it is too
    young to judge, or there is no ``/proc`` to judge by."""

    path: Path
    age_s: float
    why: Literal["held", "young", "no-proc"]
    holders: tuple[GitProcess, ...] = ()
    shared: bool = True  # in the repository's git directory, not in a seawall worktree


@dataclass(frozen=True, slots=True, kw_only=True)
class LockSweep:
    removed: tuple[RemovedLock, ...]
    held: tuple[HeldLock, ...]


def recover_git_locks(
    repo: str | os.PathLike[str],
    *,
    log: Callable[[str], None],
    record: Callable[[Path, float], object] | None = None,
    grace: float = LOCK_GRACE,
) -> LockSweep:
    """Remove the git locks a killed seawall left (see the module's rules), saying so
    on ``log`` and to ``record`` (the path and its age in seconds; the session writes it as
    a ``git_lock_removed`` event).

    Raises ``GitError`` naming the holder when a live process holds a lock of the
    repository's git directory: resuming would fail on it. A held lock in one of
    seawall's worktrees is only reported (resume remakes a worktree it cannot use).
    """
    sweep = clear_stale_locks(repo, grace=grace)
    root = workdir(open_repository(repo))
    for gone in sweep.removed:
        log(
            f"removed {_shown(root, gone.path)}, a lock left by a git process that no longer "
            f"runs ({gone.age_s:.0f} s old, no git process of this repository is running)"
        )
        if record is not None:
            record(gone.path, round(gone.age_s, 1))
    for lock in sweep.held:
        if not lock.shared:
            log(f"{_held_line(root, lock)}; it was left alone")
    blocking = [lock for lock in sweep.held if lock.shared]
    if blocking:
        raise GitError(
            "; ".join(_held_line(root, lock) for lock in blocking)
            + ". Then run `seawall resume` again"
        )
    return sweep


def clear_stale_locks(
    repo: str | os.PathLike[str],
    *,
    grace: float = LOCK_GRACE,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    proc: Path = _PROC,
) -> LockSweep:
    """Remove every lock of the repository no live process may own, waiting (at most
    ``grace`` seconds) for young or held ones to be let go of; return what was removed
    and what was left. ``clock`` is the wall clock lock times are compared with."""
    root = workdir(open_repository(repo))
    removed: list[RemovedLock] = []
    held: list[HeldLock] = []
    deadline = clock() + grace + _POLL
    for _ in range(int((grace + _POLL) / _POLL) + 2):  # bounded: the deadline ends it first
        locks = git_lock_files(root)
        if not locks:
            return LockSweep(removed=tuple(removed), held=())
        if not proc.is_dir():
            held = [_unjudged(path, clock(), shared) for path, shared in locks.items()]
            break
        gits = repository_gits(_places(root), proc=proc)
        openers = _openers(locks, proc)
        now = clock()
        held = []
        for path, shared in locks.items():
            taken = _lstat(path)
            if taken is None:
                continue  # let go of meanwhile
            holders = (*gits, *openers.get(path, ()))
            age = now - taken.st_mtime
            if holders or age < grace:
                why: Literal["held", "young"] = "held" if holders else "young"
                held.append(HeldLock(path=path, age_s=age, why=why, holders=holders, shared=shared))
            elif _remove_if_same(path, taken):
                removed.append(RemovedLock(path=path, age_s=age))
        if not held or now >= deadline:
            break
        sleep(min(_POLL, max(deadline - now, 0.0)))
    return LockSweep(removed=tuple(removed), held=tuple(held))


def git_lock_files(root: Path) -> dict[Path, bool]:
    """The lock files present that seawall's git commands take, each with whether it is
    in the repository's own git directory (True) or in a worktree seawall made."""
    repo = open_repository(root)
    git_dir = Path(repo.path).resolve()
    common = common_dir(repo)
    found: dict[Path, bool] = {}
    for folder, shared in ((git_dir, True), *((admin, False) for admin in _our_admins(root))):
        for name in _OWN_LOCKS:
            found.update({path: shared for path in _present(folder / name)})
        if folder != common:
            found.update({path: shared for path in _ref_locks(folder)})
    found.update({path: True for path in _present(common / "packed-refs.lock")})
    found.update({path: True for path in _ref_locks(common)})
    return found


def repository_gits(places: tuple[Path, ...], *, proc: Path = _PROC) -> tuple[GitProcess, ...]:
    """The live git processes working in ``places`` (see the module's rules)."""
    ours = _ancestors(proc)
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) in ours:
            continue
        argv = _git_argv(entry)
        if argv is None or read_git(argv).subcommand in _LOCK_FREE:
            continue
        if not process_alive(int(entry.name)):
            continue
        if any(_inside(path, places) for path in _paths_of(entry, argv)):
            found.append(GitProcess(pid=int(entry.name), command=_command(argv)))
    return tuple(found)


# -- where the locks are ---------------------------------------------------------------


def _our_admins(root: Path) -> list[Path]:
    """The administrative folders of the worktrees seawall made: an agent's (on a
    ``seawall/`` branch) or a check's (under ``.seawall/``)."""
    found = []
    ours = (root / SEAWALL_DIR).resolve()
    for path, admin in admin_dirs(root).items():
        try:
            head = (admin / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            head = ""
        if head.startswith("ref: refs/heads/seawall/") or path.is_relative_to(ours):
            found.append(admin)
    return found


def _present(path: Path) -> list[Path]:
    return [path] if _lstat(path) is not None else []


def _ref_locks(git_dir: Path) -> list[Path]:
    refs = git_dir / "refs"
    if not refs.is_dir():
        return []
    return sorted(path for path in refs.rglob("*.lock") if _lstat(path) is not None)


def _places(root: Path) -> tuple[Path, ...]:
    """The folders a git working on this repository has in its paths."""
    repo = open_repository(root)
    places = {root.resolve(), Path(repo.path).resolve(), common_dir(repo)}
    places.update(admin_dirs(root))
    return tuple(places)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        taken = path.lstat()
    except OSError:
        return None
    return taken if stat.S_ISREG(taken.st_mode) else None


def _remove_if_same(path: Path, judged: os.stat_result) -> bool:
    """Delete the lock ``path`` if it is still the file that was judged stale."""
    now = _lstat(path)
    same = now is not None and (
        (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns)
        == (judged.st_dev, judged.st_ino, judged.st_size, judged.st_mtime_ns)
    )
    if not same:
        return False
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


# -- who may hold them ---------------------------------------------------------------


def _argv(entry: Path) -> list[str] | None:
    try:
        raw = (entry / "cmdline").read_bytes()
    except OSError:
        return None
    return [os.fsdecode(part) for part in raw.split(b"\0")[:-1]] or None


def _git_argv(entry: Path) -> list[str] | None:
    """The command line of a git process from its ``git``, or None for another program.

    A process is git (or one of its ``git-*`` programs) by its kernel name or its
    argv[0]; a script named ``git`` shows its interpreter first, which is skipped."""
    argv = _argv(entry)
    if argv is None:
        return None
    try:
        comm = (entry / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        comm = ""
    if _git_name(Path(argv[0]).name):
        return argv
    if not _git_name(comm):
        return None
    return argv[1:] if len(argv) > 1 and _git_name(Path(argv[1]).name) else argv


def _git_name(name: str) -> bool:
    return name == "git" or name.startswith("git-")


def _paths_of(entry: Path, argv: list[str]) -> Iterator[Path]:
    """The working directory, the directory arguments and the git variables of a git."""
    cwd: Path | None = None
    with contextlib.suppress(OSError):
        cwd = (entry / "cwd").readlink()
        yield cwd
    parsed = read_git(argv)
    for given in (parsed.directory, parsed.git_dir, parsed.work_tree):
        if given:
            yield _absolute(given, cwd)
    try:
        environ = (entry / "environ").read_bytes().split(b"\0")
    except OSError:
        return
    for item in environ:
        name, _, value = item.partition(b"=")
        if name in _GIT_VARIABLES and value:
            yield _absolute(os.fsdecode(value), cwd)


def _absolute(path: str, cwd: Path | None) -> Path:
    given = Path(path)
    if given.is_absolute():
        return Path(os.path.normpath(given))
    return Path(os.path.normpath((cwd or Path("/")) / given))


def _inside(path: Path, places: tuple[Path, ...]) -> bool:
    try:
        real = Path(os.path.realpath(path))
    except OSError:
        real = path
    return any(real.is_relative_to(place) or path.is_relative_to(place) for place in places)


def _openers(locks: Collection[Path], proc: Path) -> dict[Path, list[GitProcess]]:
    """The processes that have one of ``locks`` open (those whose descriptors can be
    read), by lock."""
    wanted = {str(lock.resolve()): lock for lock in locks}
    found: dict[Path, list[GitProcess]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            descriptors = list((entry / "fd").iterdir())
        except OSError:
            continue
        for descriptor in descriptors:
            try:
                lock = wanted.get(str(descriptor.readlink()))
            except OSError:
                continue
            if lock is not None:
                process = GitProcess(pid=int(entry.name), command=_command(_argv(entry) or ["?"]))
                found.setdefault(lock, []).append(process)
    return found


def _ancestors(proc: Path) -> set[int]:
    """This process and its ancestors."""
    found = {os.getpid()}
    pid = os.getppid()
    for _ in range(64):
        if pid <= 1 or pid in found:
            break
        found.add(pid)
        try:
            stat_line = (proc / str(pid) / "stat").read_text(errors="replace")
        except OSError:
            break
        fields = stat_line[stat_line.rfind(")") + 2 :].split()
        pid = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0
    return found


def _command(argv: list[str]) -> str:
    shown = " ".join(argv)
    return shown if len(shown) <= 200 else shown[:199] + "…"


# -- messages --------------------------------------------------------------------------


def _unjudged(path: Path, now: float, shared: bool) -> HeldLock:
    taken = _lstat(path)
    age = now - taken.st_mtime if taken is not None else 0.0
    return HeldLock(path=path, age_s=age, why="no-proc", shared=shared)


def _shown(root: Path, path: Path) -> str:
    resolved = root.resolve()
    return str(path.relative_to(resolved)) if path.is_relative_to(resolved) else str(path)


def _held_line(root: Path, lock: HeldLock) -> str:
    where = _shown(root, lock.path)
    if lock.why == "held":
        who = ", ".join(f"pid {p.pid} (`{p.command}`)" for p in lock.holders)
        pids = " ".join(str(p.pid) for p in lock.holders)
        return (
            f"{where} may be held by a running git process, {who}: let it finish, "
            f"or stop it (`kill {pids}`)"
        )
    if lock.why == "no-proc":
        return (
            f"{where} exists and seawall cannot tell whether a git process holds it "
            "(no /proc): if no git command runs in this repository, remove it"
        )
    return (
        f"{where} is only {lock.age_s:.0f} s old and a git command may have just taken "
        "it: if none runs in this repository, remove it"
    )
