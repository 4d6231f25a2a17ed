"""Faults injected into real sessions: each gives a clear result or error, nothing is lost.

Real repositories, real agent subprocesses (``fault_agent.py`` through the command
runner), the real local tracker and the in-memory / HTTP-fake trackers. A full disk is
injected in process at the OS-call boundary (``os.write`` / ``os.fdopen`` for the
ledger and telemetry files; the object writes of libgit2 for checkpoints).
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest

from seawall.adapters.trackers.github import GitHubTracker
from seawall.adapters.trackers.memory import MemoryTracker
from seawall.errors import GitError, StateError
from seawall.runtime.processes import process_alive
from seawall.state.ledger import SessionPhase
from seawall.telemetry import CarryoverFiled, read_events
from seawall.testing.http import Fault
from tests.fakes.github_server import GitHubService, github_server
from tests.integration.sessionkit import git, make_repo, show, write_plan
from tests.reliability.kit import (
    assert_no_git_leftovers,
    fault_plan,
    issue_markers,
    ledger,
    no_sleep_retry,
    reachable_content,
    resume,
    run,
    session_for,
)

pytestmark = pytest.mark.slow


def _spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: dict[str, Any]) -> None:
    path = tmp_path / "faults.json"
    path.write_text(json.dumps(spec))
    monkeypatch.setenv("FAULT_SPEC", str(path))


def _then_done(task: str, first: dict[str, Any]) -> list[dict[str, Any]]:
    """A first attempt that misbehaves, then one that does the task."""
    again = {"writes": {f"src/{task}.py": f"{task} = 2\n"}, "final": f"STATUS: done — {task}"}
    return [first, again]


# ----- agents that crash, hang, print garbage or binary, or exit at once -----------------


def test_misbehaving_agents_give_clear_results_and_lose_no_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    pidfile = tmp_path / "hang.pid"
    spec = {
        "crash": _then_done("crash", {"writes": {"src/crash.py": "crash = 1\n"}, "mode": "crash"}),
        "hang": _then_done(
            "hang",
            {"writes": {"src/hang.py": "hang = 1\n"}, "mode": "hang", "pidfile": str(pidfile)},
        ),
        "garbage": _then_done("garbage", {"writes": {"src/garbage.py": "g\n"}, "mode": "garbage"}),
        "binary": _then_done("binary", {"writes": {"src/binary.py": "b\n"}, "mode": "binary"}),
    }
    _spec(tmp_path, monkeypatch, spec)
    plan = fault_plan(
        "faults",
        {task: f"src/{task}.py" for task in spec},
        extra='isolation = "worktree"\n[session.budgets]\nagent_minutes = 0.02',
    )
    started = time.monotonic()
    result = run(session_for(repo, plan))
    elapsed = time.monotonic() - started
    assert result.phase is SessionPhase.DONE
    assert result.abandoned == ()
    state = ledger(repo)
    first = {agent.task: agent for agent in state.waves[0].agents}
    # a crash after writing is a failure with the signal as exit code
    assert (first["crash"].status, first["crash"].exit_code) == ("failed", -signal.SIGSEGV)
    # the wall clock stopped the hanging agent: partial, with a wip snapshot, and dead
    assert first["hang"].status == "partial" and first["hang"].wip
    assert "h" in git(repo, "show", f"{first['hang'].wip}:src/hang.py")
    assert not process_alive(int(pidfile.read_text()))
    assert elapsed < 60
    # garbage and binary on stdout are read without error; the result is inferred
    for task in ("garbage", "binary"):
        assert first[task].status == "done" and "no STATUS line" in first[task].reason
    # every first attempt's work is reachable from the agent's ref; the retries merged
    for task, content in (("crash", "crash = 1\n"), ("hang", "hang = 1\n")):
        assert content in reachable_content(repo, state.session, task, f"src/{task}.py")
    for task in ("crash", "hang"):
        assert show(repo, "main", f"src/{task}.py") == f"{task} = 2\n"
    assert show(repo, "main", "src/garbage.py") == "g\n"
    assert show(repo, "main", "src/binary.py") == "b\n"
    markers = issue_markers(repo)
    assert len(markers) == len(set(markers)) == 1  # crash: one issue
    assert_no_git_leftovers(repo)


# ----- a held index.lock ---------------------------------------------------------------


def test_held_index_lock_checkpoints_work_and_advance_fails_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = {
        "a": [{"writes": {"src/a.py": "a = 1\n"}, "final": "STATUS: done — a"}],
        "b": [{"writes": {"src/b.py": "b = 1\n"}, "final": "STATUS: done — b"}],
    }
    _spec(tmp_path, monkeypatch, spec)
    plan = fault_plan("locked", {"a": "src/a.py", "b": "src/b.py"}, extra='isolation = "none"')
    lock = repo / ".git" / "index.lock"
    lock.write_text("held by another git process\n")
    base = git(repo, "rev-parse", "main")
    with pytest.raises(GitError, match=r"index\.lock"):
        run(session_for(repo, plan))
    # nothing moved, nothing half-done; the checkpoints were written despite the lock
    assert git(repo, "rev-parse", "main") == base
    state = ledger(repo)
    assert state.phase is SessionPhase.RUNNING
    for task in ("a", "b"):
        assert f"{task} = 1\n" in reachable_content(repo, state.session, task, f"src/{task}.py")
    assert lock.read_text() == "held by another git process\n"  # seawall never took it
    assert_no_git_leftovers(repo, allow_index_lock=True)
    lock.unlink()
    done = resume(repo)
    assert done.phase is SessionPhase.DONE and done.done == ("a", "b")
    assert show(repo, "main", "src/a.py") == "a = 1\n"
    assert show(repo, "main", "src/b.py") == "b = 1\n"
    assert git(repo, "status", "--porcelain") == ""
    assert_no_git_leftovers(repo)


def test_index_lock_held_in_a_worktree_session_is_no_obstacle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worktree agents never touch the main index; the advance of a checked-out
    branch does, so it must either succeed or stop with a clear error."""
    repo = make_repo(tmp_path / "repo")
    _spec(tmp_path, monkeypatch, {"a": [{"writes": {"src/a.py": "a\n"}, "final": "STATUS: done"}]})
    plan = fault_plan("wtlock", {"a": "src/a.py"}, extra='isolation = "worktree"')
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    base = git(repo, "rev-parse", "main")
    try:
        result = run(session_for(repo, plan))
    except GitError as exc:
        assert "index.lock" in str(exc)
        assert git(repo, "rev-parse", "main") == base
        lock.unlink()
        result = resume(repo)
    assert result.phase is SessionPhase.DONE
    assert show(repo, "main", "src/a.py") == "a\n"
    ledger(repo)


# ----- a full disk -----------------------------------------------------------------------


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


class _FullDisk:
    """Make writes to matching files fail with ENOSPC, at the OS-call boundary."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, matches: Callable[[str], bool]) -> None:
        self.matches = matches
        self.hits = 0
        self.full = True
        real_write, real_fdopen = os.write, os.fdopen

        def write(fd: int, data: Any) -> int:
            if self.full and self.matches(_fd_path(fd)):
                self.hits += 1
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_write(fd, data)

        def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
            handle = real_fdopen(fd, *args, **kwargs)
            if self.full and self.matches(_fd_path(fd)):
                return _FailingFile(handle, self)
            return handle

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fdopen", fdopen)


class _FailingFile:
    def __init__(self, handle: Any, disk: _FullDisk) -> None:
        self._handle = handle
        self._disk = disk

    def __enter__(self) -> _FailingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def write(self, data: Any) -> int:
        if self._disk.full:
            self._disk.hits += 1
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written: int = self._handle.write(data)
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def test_full_disk_for_telemetry_drops_records_and_the_session_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    _spec(tmp_path, monkeypatch, {"a": [{"writes": {"src/a.py": "a\n"}, "final": "STATUS: done"}]})
    disk = _FullDisk(monkeypatch, lambda path: path.endswith("events.jsonl"))
    result = run(session_for(repo, fault_plan("nolog", {"a": "src/a.py"})))
    assert result.phase is SessionPhase.DONE
    assert disk.hits >= 3
    assert capfd.readouterr().err.count("cannot write telemetry") == 1  # warned once
    state = ledger(repo)
    assert state.waves[0].agents[0].merged
    assert show(repo, "main", "src/a.py") == "a\n"
    assert list(read_events(repo / ".seawall" / state.session / "events.jsonl")) == []


@pytest.mark.parametrize("nth", [2, 5, 9])
def test_full_disk_for_the_ledger_stops_clearly_keeps_the_old_state_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nth: int
) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = {
        "a": [{"writes": {"src/a.py": "a\n"}, "final": "STATUS: done — a"}],
        "b": [{"writes": {"src/b.py": "b\n"}, "final": "STATUS: done — b"}],
    }
    _spec(tmp_path, monkeypatch, spec)
    seen: list[str] = []

    def ledger_write(path: str) -> bool:
        name = path.rsplit("/", 1)[-1]  # the journal, or a new snapshot's temporary file
        if name != "state.jsonl" and not name.startswith(".state.json"):
            return False
        seen.append(path)
        return len(seen) >= nth  # the disk fills up at the nth write of the ledger

    disk = _FullDisk(monkeypatch, ledger_write)
    plan = fault_plan("full", {"a": "src/a.py", "b": "src/b.py"}, extra='isolation = "worktree"')
    with pytest.raises(StateError, match="disk is full"):
        run(session_for(repo, plan))
    assert disk.hits == 1
    before = ledger(repo)  # the previous ledger is intact and valid
    assert not list((repo / ".seawall" / before.session).glob(".state.json.*"))  # no temp left
    disk.full = False  # space was freed
    done = resume(repo)
    assert done.phase is SessionPhase.DONE and done.done == ("a", "b")
    assert show(repo, "main", "src/a.py") == "a\n" and show(repo, "main", "src/b.py") == "b\n"
    ledger(repo)
    assert_no_git_leftovers(repo)


@pytest.fixture
def full_object_store(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """libgit2 cannot write objects (a full disk); pygit2 reports it as an OSError."""
    control: dict[str, Any] = {"full": False, "hits": 0}

    def failing(name: str) -> Any:
        real = getattr(pygit2.Repository, name)

        def method(self: pygit2.Repository, *args: Any, **kwargs: Any) -> Any:
            if control["full"]:
                control["hits"] += 1
                raise OSError(errno.ENOSPC, "failed to write object: No space left on device")
            return real(self, *args, **kwargs)

        return method

    for name in ("create_commit", "create_blob_fromdisk", "create_blob"):
        monkeypatch.setattr(pygit2.Repository, name, failing(name))
    monkeypatch.setattr(pygit2.Index, "write_tree", _failing_write_tree(control))
    yield control


def _failing_write_tree(control: dict[str, Any]) -> Any:
    real = pygit2.Index.write_tree

    def write_tree(self: pygit2.Index, *args: Any) -> Any:
        if control["full"]:
            control["hits"] += 1
            raise OSError(errno.ENOSPC, "failed to write tree: No space left on device")
        return real(self, *args)

    return write_tree


def test_full_disk_for_a_checkpoint_is_a_git_error_and_the_next_one_records_all(
    tmp_path: Path, full_object_store: dict[str, Any]
) -> None:
    from seawall.git.checkpoints import Checkpointer, CheckpointMode

    repo = make_repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD")
    keeper = Checkpointer(repo, session_id="s", task_id="t", base=base, mode=CheckpointMode.PATHS)
    (repo / "a.py").write_text("a = 1\n")
    full_object_store["full"] = True
    with pytest.raises(GitError, match="cannot record a checkpoint of t: the disk is full"):
        keeper.checkpoint(["a.py"])
    assert keeper.tip is None
    full_object_store["full"] = False
    tip = keeper.checkpoint(["a.py"])
    assert tip is not None and git(repo, "show", f"{tip}:a.py") == "a = 1"


def test_full_disk_for_checkpoints_is_a_clear_error_and_resume_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_object_store: dict[str, Any]
) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = {"a": [{"writes": {"src/a.py": "a\n"}, "final": "STATUS: done — a"}]}
    _spec(tmp_path, monkeypatch, spec)
    session = session_for(repo, fault_plan("objfull", {"a": "src/a.py"}))
    real_prepare = session.runner_for

    def runner_for(task: Any) -> Any:
        full_object_store["full"] = True  # the disk fills up as the agents start
        return real_prepare(task)

    monkeypatch.setattr(session, "runner_for", runner_for)
    with pytest.raises((StateError, GitError), match=r"(?i)no space|disk is full"):
        run(session)
    assert full_object_store["hits"] >= 1
    full_object_store["full"] = False
    done = resume(repo)
    assert done.phase is SessionPhase.DONE
    assert show(repo, "main", "src/a.py") == "a\n"


# ----- tracker faults --------------------------------------------------------------------


def _failing_then_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    spec = {
        "flaky": [{"final": "STATUS: failed — ValueError: no config"}],
        "fine": [{"writes": {"src/fine.py": "ok\n"}, "final": "STATUS: done — fine"}],
    }
    _spec(tmp_path, monkeypatch, spec)
    return fault_plan(
        "trk",
        {"flaky": "src/flaky.py", "fine": "src/fine.py"},
        extra="[session.wave_breaker]\nenabled = false",
    )


@pytest.mark.parametrize(
    ("operation", "apply", "times"),
    [("create_issue", True, 1), ("create_issue", False, 3), ("list_issues", False, 2)],
    ids=["create-applied-then-502", "create-502-x3", "list-502-x2"],
)
def test_memory_tracker_faults_file_each_issue_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    operation: Any,
    apply: bool,
    times: int,
) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = _failing_then_done(tmp_path, monkeypatch)
    tracker = MemoryTracker()
    tracker.fail(operation, apply=apply, times=times)
    retry, waits = no_sleep_retry()
    result = run(session_for(repo, plan, tracker=tracker, retry=retry))
    assert result.phase is SessionPhase.DONE
    assert waits, "the faults were met by the session's retry policy, which waited"
    assert "flaky" in result.abandoned and "fine" in result.done
    titles = [issue.title for issue in tracker.issues]
    assert len(titles) == len(set(titles)), titles  # never filed twice
    assert sum("flaky" in title for title in titles) == 1  # and filed, despite the faults
    state = ledger(repo)
    filed = state.task("flaky").issue
    assert filed is not None
    assert filed.number == tracker.issues[0].number
    assert show(repo, "main", "src/fine.py") == "ok\n"


def test_tracker_down_for_the_whole_session_is_reported_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = _failing_then_done(tmp_path, monkeypatch)
    tracker = MemoryTracker()
    for operation in ("list_issues", "create_issue", "ensure_labels"):
        tracker.fail(operation, times=1000)
    retry, waits = no_sleep_retry()
    result = run(session_for(repo, plan, tracker=tracker, retry=retry))
    assert result.phase is SessionPhase.DONE
    # every operation gave up after its bounded retries: the waits are the policy's
    assert waits and max(waits) <= retry.max_delay
    assert tracker.issues == ()
    state = ledger(repo)
    assert state.task("flaky").issue is None  # not filed, and the ledger says so
    errors = [
        e.error
        for e in read_events(repo / ".seawall" / state.session / "events.jsonl", CarryoverFiled)
        if e.error
    ]
    assert errors and "502" in errors[0]
    # the tracker is back: resuming a done session is refused, but nothing was lost:
    assert show(repo, "main", "src/fine.py") == "ok\n"


@pytest.mark.parametrize(
    "fault",
    [Fault(status=502, apply=True), Fault(drop=True, apply=True), Fault(status=502)],
    ids=["apply-then-502", "apply-then-drop", "502"],
)
def test_github_fake_faults_during_a_session_make_no_duplicate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: Fault
) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = _failing_then_done(tmp_path, monkeypatch)
    with github_server(token="t0k") as server:
        service = server.service
        assert isinstance(service, GitHubService)
        service.inject("POST", "issues", fault)
        tracker = GitHubTracker(
            "octo/demo",
            token="t0k",
            base_url=server.origin + "/api/v3",
            request_interval=0,
            write_interval=0,
            timeout=1,
        )
        retry, waits = no_sleep_retry()
        result = run(session_for(repo, plan, tracker=tracker, retry=retry))
        issues = service.open_issues()
    assert result.phase is SessionPhase.DONE
    flaky = [issue for issue in issues if "flaky" in issue["title"]]
    assert len(flaky) == 1, [i["title"] for i in issues]
    assert ledger(repo).task("flaky").issue is not None
    assert waits, "the lost create was looked for again over the policy's settle window"


# ----- failing git hooks ------------------------------------------------------------------


def _hook(repo: Path, name: str) -> None:
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    path = hooks / name
    path.write_text(f"#!/bin/sh\necho 'hook {name} refuses' >&2\nexit 1\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.mark.parametrize(
    ("isolation", "hooks"),
    [
        ("worktree", ("pre-commit", "commit-msg", "pre-merge-commit", "post-merge")),
        # a failing post-checkout makes `git worktree add` fail: the wave runs in place
        ("worktree", ("pre-commit", "post-checkout")),
        ("none", ("pre-commit", "post-checkout")),
    ],
    ids=["worktree", "worktree-post-checkout", "in-place"],
)
def test_failing_git_hooks_do_not_stop_the_merge(
    tmp_path: Path, isolation: str, hooks: tuple[str, ...]
) -> None:
    repo = make_repo(tmp_path / "repo")
    for name in hooks:
        _hook(repo, name)
    spec = {
        "writer": [{"writes": {"src/w.py": "w = 1\n"}, "final": "STATUS: done — w"}],
        "committer": [
            {
                "commits": [{"writes": {"src/c.py": "c = 1\n"}, "message": "c"}],
                "final": "STATUS: done — c",
            }
        ],
    }
    (tmp_path / "agents.json").write_text(json.dumps(spec))
    plan = write_plan(
        tmp_path / "plan.toml",
        session=f'name = "hooks"\nisolation = "{isolation}"',
        extra="[session.wave_breaker]\nenabled = false",
        tasks=[
            {"id": "writer", "prompt": "Write w.", "scope": ["src/w.py"]},
            {"id": "committer", "prompt": "Commit c.", "scope": ["src/c.py"]},
        ],
    )
    os.environ["AGENT_SPEC"] = str(tmp_path / "agents.json")
    try:
        result = run(session_for(repo, plan.read_text()))
    finally:
        del os.environ["AGENT_SPEC"]
    assert result.phase is SessionPhase.DONE
    assert result.done == ("writer",) and result.abandoned == ("committer",)
    state = ledger(repo)
    if "post-checkout" in hooks and isolation == "worktree":
        assert "post-checkout refuses" in (state.waves[0].fallback or "")
    first = {agent.task: agent for agent in state.waves[0].agents}
    # seawall commits through pygit2: the writer merges although every hook refuses
    assert first["writer"].merged and show(repo, "main", "src/w.py") == "w = 1\n"
    # the agent's own `git commit` ran the pre-commit hook and failed: its outcome
    assert first["committer"].status == "failed" and first["committer"].exit_code == 1
    assert "c = 1\n" in reachable_content(repo, state.session, "committer", "src/c.py")
    assert_no_git_leftovers(repo)


def test_restoring_an_agents_files_also_unstages_its_git_add(tmp_path: Path) -> None:
    """The git-layer half of the fix for the staged-file bug above."""
    from seawall.git.target import restore_agent_files

    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/keep.py": "k = 0\n"})
    (repo / "src" / "c.py").write_text("c = 1\n")
    (repo / "src" / "keep.py").write_text("k = 1\n")
    git(repo, "add", "src/c.py", "src/keep.py")
    restore_agent_files(repo, git(repo, "rev-parse", "HEAD"), ["src/c.py", "src/keep.py"])
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "src" / "keep.py").read_text() == "k = 0\n"
    assert not (repo / "src" / "c.py").exists()
