"""Git lock files a killed seawall left: removed only when no live process may own them.

Real repositories, real lock files, real processes (a ``git commit`` waiting on its
editor holds ``index.lock``, the case git's own message names); the clock and the sleep
between looks are injected, so the waits are measured instead of slept.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from seawall.errors import GitError
from seawall.git.stale_locks import (
    LOCK_GRACE,
    clear_stale_locks,
    git_lock_files,
    recover_git_locks,
    repository_gits,
)
from tests.integration.sessionkit import git, make_repo
from tests.waiting import wait_until

TAKEN = "git to take index.lock"


class Clock:
    """Wall-clock time that moves only when the sweep sleeps."""

    def __init__(self) -> None:
        self.now = time.time()
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _lock(path: Path, *, age: float = 60.0, content: bytes = b"") -> Path:
    """A lock file as a killed git leaves it, written ``age`` seconds ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def _end(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/a.py": "a = 0\n"})


@contextlib.contextmanager
def user_commit(repo: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A user's ``git commit -a`` in ``repo``, waiting on its editor: it holds
    ``.git/index.lock`` (taken before this yields) until the editor returns."""
    (repo / "README.md").write_text("# p, edited by the user\n")
    process = subprocess.Popen(
        ["git", "commit", "-a"],
        cwd=repo,
        env={**os.environ, "GIT_EDITOR": "sleep 120 #"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        lock = repo / ".git" / "index.lock"
        wait_until(
            lambda: index_written(lock), timeout=30, interval=0.02, what=TAKEN, process=process
        )
        yield process
    finally:
        _end(process)


def index_written(lock: Path) -> bool:
    """Whether git holds ``lock`` with the new index written into it (it takes the lock
    empty, writes the index, then starts the editor: only then is the lock still)."""
    try:
        return lock.stat().st_size > 0
    except FileNotFoundError:
        return False


@pytest.fixture
def committing(repo: Path) -> Iterator[subprocess.Popen[bytes]]:
    with user_commit(repo) as process:
        yield process


# ----- which locks, where -------------------------------------------------------------


def test_stale_locks_of_the_repository_and_of_seawall_worktrees_are_removed(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "worktree", "add", "-q", "-b", "seawall/s1/w1/a", str(tmp_path / "agent-a"))
    git(repo, "worktree", "add", "-q", "-b", "mine", str(tmp_path / "users-own"))
    git(repo, "pack-refs", "--all")
    git_dir = repo / ".git"
    stale = [
        _lock(git_dir / "index.lock"),
        _lock(git_dir / "HEAD.lock", content=b"ref: refs/heads/main\n"),
        _lock(git_dir / "refs" / "heads" / "main.lock"),
        _lock(git_dir / "refs" / "seawall" / "s1" / "a.lock"),
        _lock(git_dir / "packed-refs.lock"),
        _lock(git_dir / "worktrees" / "agent-a" / "index.lock"),
    ]
    users = _lock(git_dir / "worktrees" / "users-own" / "index.lock")
    other = _lock(git_dir / "config.lock")  # not a lock seawall's commands take
    assert set(git_lock_files(repo)) == set(stale)

    clock = Clock()
    sweep = clear_stale_locks(repo, clock=clock, sleep=clock.sleep)

    assert {lock.path for lock in sweep.removed} == set(stale)
    assert sweep.held == () and clock.slept == []  # old enough: no wait
    assert not any(path.exists() for path in stale)
    assert users.exists() and other.exists()  # the user's worktree, git's config: theirs
    assert git(repo, "rev-parse", "main")  # the refs read again


def test_a_young_lock_is_removed_only_once_it_is_old_enough(repo: Path) -> None:
    lock = _lock(repo / ".git" / "index.lock", age=1.0)
    clock = Clock()

    sweep = clear_stale_locks(repo, clock=clock, sleep=clock.sleep)

    assert [removed.path for removed in sweep.removed] == [lock]
    assert sweep.removed[0].age_s >= LOCK_GRACE
    assert LOCK_GRACE - 1.0 <= sum(clock.slept) <= LOCK_GRACE  # it waited, no longer
    assert not lock.exists()


def test_a_young_lock_its_owner_lets_go_of_is_not_touched(repo: Path) -> None:
    lock = _lock(repo / ".git" / "index.lock", age=0.0)
    clock = Clock()

    def owner_finishes(seconds: float) -> None:
        clock.sleep(seconds)
        lock.unlink(missing_ok=True)  # git renamed its lock over the index

    sweep = clear_stale_locks(repo, clock=clock, sleep=owner_finishes)

    assert sweep.removed == () and sweep.held == ()
    assert len(clock.slept) == 1


def test_nothing_is_removed_without_proc(repo: Path, tmp_path: Path) -> None:
    lock = _lock(repo / ".git" / "index.lock")
    sweep = clear_stale_locks(repo, proc=tmp_path / "no-proc")
    assert sweep.removed == ()
    assert [(held.path, held.why) for held in sweep.held] == [(lock, "no-proc")]
    assert lock.exists()


# ----- a live owner -------------------------------------------------------------------


def test_a_lock_a_live_git_holds_is_never_removed_and_its_holder_is_named(
    repo: Path, committing: subprocess.Popen[bytes]
) -> None:
    lock = repo / ".git" / "index.lock"
    content = lock.read_bytes()
    old = time.time() - 60
    os.utime(lock, (old, old))  # old enough: only the live owner keeps it
    clock = Clock()

    sweep = clear_stale_locks(repo, clock=clock, sleep=clock.sleep)

    assert sweep.removed == ()
    (held,) = sweep.held
    assert held.path == lock and held.why == "held" and held.shared
    assert [(p.pid, p.command) for p in held.holders] == [(committing.pid, "git commit -a")]
    assert LOCK_GRACE <= sum(clock.slept) <= LOCK_GRACE + 1  # it waited for it to finish
    assert lock.read_bytes() == content

    lines: list[str] = []
    with pytest.raises(GitError) as refused:
        recover_git_locks(repo, log=lines.append, grace=0.0)
    message = str(refused.value)
    assert f"pid {committing.pid} (`git commit -a`)" in message
    assert ".git/index.lock" in message and f"kill {committing.pid}" in message
    assert "seawall resume" in message
    assert lines == [] and lock.read_bytes() == content


def test_once_the_holder_is_gone_its_lock_is_stale(
    repo: Path, committing: subprocess.Popen[bytes]
) -> None:
    lock = repo / ".git" / "index.lock"
    _end(committing)  # SIGKILLed: git's lock stays behind
    assert lock.exists()
    old = time.time() - 60
    os.utime(lock, (old, old))
    lines: list[str] = []
    removed: list[tuple[Path, float]] = []

    def record(path: Path, age: float) -> None:
        removed.append((path, age))

    sweep = recover_git_locks(repo, log=lines.append, record=record)

    assert [removed.path for removed in sweep.removed] == [lock] and not lock.exists()
    assert len(lines) == 1 and lines[0].startswith("removed .git/index.lock, a lock left by")
    assert [path for path, _ in removed] == [lock]
    assert all(55 <= age <= 65 for _, age in removed)
    assert git(repo, "status", "--porcelain") == "M README.md"  # the user's edit is kept


def test_a_process_with_the_lock_open_holds_it(repo: Path) -> None:
    lock = _lock(repo / ".git" / "index.lock")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; f = open(sys.argv[1]); time.sleep(120)", lock],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: str(lock) in map(os.path.realpath, _descriptors(holder.pid)),
            timeout=30,
            interval=0.02,
            what="the holder to open the lock",
            process=holder,
        )
        clock = Clock()
        sweep = clear_stale_locks(repo, clock=clock, sleep=clock.sleep)
        assert sweep.removed == () and lock.exists()
        assert [p.pid for p in sweep.held[0].holders] == [holder.pid]
    finally:
        _end(holder)


def _git_pids(repo: Path) -> set[int]:
    return {process.pid for process in repository_gits((repo.resolve(),))}


def _descriptors(pid: int) -> list[str]:
    folder = Path(f"/proc/{pid}/fd")
    try:
        return [str(entry.readlink()) for entry in folder.iterdir()]
    except OSError:
        return []


def test_a_git_of_another_repository_does_not_count(repo: Path, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other", {"README.md": "# other\n"})
    with user_commit(other) as process:
        lock = _lock(repo / ".git" / "index.lock")
        assert repository_gits((repo.resolve(),)) == ()
        assert [p.pid for p in repository_gits((other.resolve(),))] == [process.pid]
        sweep = clear_stale_locks(repo)
        assert [removed.path for removed in sweep.removed] == [lock]
        assert (other / ".git" / "index.lock").exists()


def test_a_git_naming_the_repository_by_argument_or_variable_counts(
    repo: Path, tmp_path: Path
) -> None:
    """A git working elsewhere on this repository (``git -C``, ``GIT_DIR``) counts."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "bin").mkdir(parents=True)
    program = elsewhere / "bin" / "git"  # a script named git: its kernel name is git
    program.write_text("#!/bin/sh\nsleep 120\n")
    program.chmod(0o755)
    by_argument = subprocess.Popen(
        [program, "-C", str(repo), "status"], cwd=elsewhere, start_new_session=True
    )
    by_variable = subprocess.Popen(
        [program, "status"],
        cwd=elsewhere,
        env={**os.environ, "GIT_DIR": str(repo / ".git")},
        start_new_session=True,
    )
    unrelated = subprocess.Popen([program, "status"], cwd=elsewhere, start_new_session=True)
    try:
        wanted = {by_argument.pid, by_variable.pid}
        wait_until(
            lambda: _git_pids(repo) == wanted,
            timeout=30,
            interval=0.02,
            what=f"the repository's gits to be {sorted(wanted)}",
        )
        commands = {p.command for p in repository_gits((repo.resolve(),))}
        assert f"{program} -C {repo} status" in commands
    finally:
        for process in (by_argument, by_variable, unrelated):
            _end(process)


def test_a_git_that_takes_no_lock_does_not_count(repo: Path, tmp_path: Path) -> None:
    """`git log` left open on its pager, the file-system monitor: they hold no lock."""
    program = tmp_path / "bin" / "git"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nsleep 120\n")
    program.chmod(0o755)
    reading = subprocess.Popen([program, "log"], cwd=repo, start_new_session=True)
    writing = subprocess.Popen([program, "status"], cwd=repo, start_new_session=True)
    try:
        wait_until(
            lambda: b"log" in _cmdline(reading.pid) and _git_pids(repo) == {writing.pid},
            timeout=30,
            interval=0.02,
            what=f"git log to run and {writing.pid} to be the repository's only git",
        )
        _end(writing)
        lock = _lock(repo / ".git" / "index.lock")
        sweep = clear_stale_locks(repo)
        assert [removed.path for removed in sweep.removed] == [lock]
        assert reading.poll() is None
    finally:
        _end(reading)
        _end(writing)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
