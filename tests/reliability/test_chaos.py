"""Chaos: a multi-wave session SIGKILLed at random moments, resumed, and checked.

Each run copies a repository of a few thousand files, starts a session whose plan has
worktree and in-place waves, editing, failing, spiralling and partial agents and a
check, kills the coordinator at a random moment (or while a worktree is being checked
out), resumes it (sometimes killing the resume too) until it is done, then checks that
nothing was lost. Runs with an odd seed are rolling sessions (``schedule = "rolling"``).
A second test kills the coordinator inside the git commands that move the target
branch (``read-tree``, ``update-ref``), through a ``git`` placed first on its PATH
(``chaos_git.sh``), often together with that git, which then leaves its lock behind.
The seed is printed; ``SEAWALL_CHAOS_SEED`` replays a whole test,
``SEAWALL_CHAOS_RUNS`` and ``SEAWALL_CHAOS_GIT_RUNS`` set the number of runs.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from seawall.git.workspaces import default_worktree_root
from seawall.runtime.processes import process_alive
from seawall.state.store import load_state
from tests.integration.sessionkit import git
from tests.reliability.kit import issue_markers

AGENT = Path(__file__).with_name("chaos_agent.py")
GIT = Path(__file__).with_name("chaos_git.sh")
RUNS = int(os.environ.get("SEAWALL_CHAOS_RUNS", "40"))
GIT_RUNS = int(os.environ.get("SEAWALL_CHAOS_GIT_RUNS", "12"))
GIT_KILLS = ("lock", "lock", "delay", "parent", "after")  # how chaos_git.sh kills
_OURS = "seawall-worktrees.lock"  # seawall's own lock file beside git's (an flock)
JOBS = int(os.environ.get("SEAWALL_CHAOS_JOBS", "2"))  # runs at once
FILES = 2000
NOTES = "the user's own notes, never committed\n"
CHECK = (
    "import pathlib, sys\n"
    f"sys.exit(0 if len(list(pathlib.Path('pkg').rglob('*.py'))) == {FILES} else 1)\n"
)
AGENTS: dict[str, list[dict[str, Any]]] = {
    "edit": [{"writes": {"src/a.py": "a = {n}\n"}, "sleep": 0.2, "final": "STATUS: done — a"}],
    "fail": [
        {"writes": {"src/b.py": "broken {n}\n"}, "final": "STATUS: failed — ValueError: no b"},
        {"writes": {"src/b.py": "b = {n}\n"}, "final": "STATUS: done — b"},
    ],
    "spiral": [
        {
            "commits": [{"src/c.py": "c = 1\n"}, {"src/c.py": "c = 2\n"}, {"src/c.py": "c = 1\n"}],
            "final": "STATUS: done — c",
        },
        {"writes": {"src/c.py": "c = {n} once\n"}, "final": "STATUS: done — c"},
    ],
    "partial": [
        {
            "writes": {"src/d.py": "d = {n}\n"},
            "sleep": 0.2,
            "final": "STATUS: partial — half\nREMAINING: the other half",
        },
        {"writes": {"src/d.py": "d = {n} whole\n"}, "final": "STATUS: done — d"},
    ],
    "stray": [
        {
            "writes": {"docs/e.md": "e {n}\n", "scratch/e.txt": "outside every scope {n}\n"},
            "final": "STATUS: done — e",
        }
    ],
}


def _schedule(seed: int) -> str:
    """Half the runs are rolling sessions (each task dispatched as its dependencies land)."""
    return "rolling" if seed % 2 else "waves"


def _plan(check: Path, log: Path, schedule: str = "waves") -> str:
    tasks = [
        ("edit", "src/a.py", "high", []),
        ("fail", "src/b.py", "high", []),
        ("spiral", "src/c.py", "high", []),
        ("partial", "src/d.py", "low", ["edit"]),
        ("stray", "docs/e.md", "low", ["edit"]),
    ]
    lines = [
        "[session]",
        'name = "chaos"',
        'type = "housekeeping"',
        "max_agents_per_wave = 3",
        f'schedule = "{schedule}"',
        f"checks = [{json.dumps(f'{sys.executable} {check}')}]",
        'agent = "chaos"',
        f"sandbox_writable = [{json.dumps(str(log))}]",  # where the agents log their writes
        "accept_hooks_only = true",  # the invariants hold on any kernel
        "",
        "[runners.chaos]",
        'kind = "command"',
        f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(AGENT))}]",
    ]
    for task, scope, risk, deps in tasks:
        lines += [
            "",
            "[[task]]",
            f'id = "{task}"',
            f'prompt = "Do {task}."',
            f'scope = ["{scope}"]',
            f'collision_risk = "{risk}"',
            f"depends_on = {json.dumps(deps)}",
        ]
    return "\n".join(lines) + "\n"


def _template(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "seawall test")
    git(path, "config", "user.email", "test@seawall.invalid")
    git(path, "config", "commit.gpgsign", "false")
    for number in range(FILES):
        target = path / "pkg" / f"d{number % 40:02}" / f"m{number:04}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"value = {number}\n")
    (path / "README.md").write_text("# chaos\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


@dataclass
class Run:
    folder: Path
    seed: int
    repo: Path = field(init=False)
    log: Path = field(init=False)
    env: dict[str, str] = field(init=False)
    history: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.repo = self.folder / "repo"
        self.log = self.folder / "log"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SEAWALL_")},
            "CHAOS_SPEC": str(self.folder / "agents.json"),
            "CHAOS_LOG": str(self.log),
        }

    def kill_inside_git(self, rng: random.Random) -> None:
        """Put ``chaos_git.sh`` first on the PATH: the coordinator is killed inside the
        n-th ``read-tree`` or ``update-ref`` it runs (one of the ways the script names)."""
        folder = self.folder / "bin"
        folder.mkdir()
        (folder / "git").symlink_to(GIT)
        how = rng.choice(GIT_KILLS)
        self.env.update(
            {
                "PATH": f"{folder}{os.pathsep}{self.env.get('PATH', '')}",
                "CHAOS_REAL_GIT": shutil.which("git") or "git",
                "CHAOS_GIT_KILL_AT": rng.choice(["read-tree", "update-ref"]),
                "CHAOS_GIT_KILL_NTH": str(rng.randint(1, 3)),
                "CHAOS_GIT_KILL_HOW": how,
                "CHAOS_GIT_KILL_DELAY": f"{rng.uniform(0.0, 0.02):.3f}",
            }
        )
        process = self.start("run", str(self.folder / "plan.toml"))
        out, err = process.communicate(timeout=300)
        fired = self.log / "git-kill.fired"
        what = fired.read_text().strip() if fired.exists() else "never reached"
        git_dir = self.repo / ".git"
        left = [str(p.relative_to(git_dir)) for p in git_dir.rglob("*.lock") if p.name != _OURS]
        self.history.append(
            f"git {self.env['CHAOS_GIT_KILL_AT']}: {what}: exit {process.returncode}, "
            f"locks when it died: {', '.join(left) or 'none'}"
        )
        print(f"{self.folder.name}: {self.history[-1]}")
        if process.returncode not in (-signal.SIGKILL, 0, 3, 4, 5):
            raise AssertionError(f"exit {process.returncode} before the kill\n{out}\n{err}")

    def start(self, *args: str) -> subprocess.Popen[str]:
        argv = [sys.executable, "-m", "seawall", *args, "--repo", str(self.repo)]
        return subprocess.Popen(
            argv,
            cwd=self.repo,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def kill_later(self, process: subprocess.Popen[str], rng: random.Random, span: float) -> None:
        """SIGKILL the coordinator at a random moment, or while a worktree (an agent's or
        the checks') is being made."""
        how = rng.choice(["time", "time", "worktree-add"])
        deadline = time.monotonic() + (rng.uniform(0.05, span) if how == "time" else 60)
        admin = self.repo / ".git" / "worktrees"
        while process.poll() is None and time.monotonic() < deadline:
            if how == "worktree-add" and _checking_out(admin):
                break
            time.sleep(0.002 if how == "worktree-add" else 0.01)
        killed = process.poll() is None
        if killed:
            process.send_signal(signal.SIGKILL)
        out, err = process.communicate(timeout=60)
        self.history.append(f"{how}: {'killed' if killed else f'exit {process.returncode}'}")
        if not killed and process.returncode not in (0, 3, 4, 5):
            raise AssertionError(f"exit {process.returncode} before the kill\n{out}\n{err}")

    def finish(self, rng: random.Random, span: float) -> None:
        """Resume (killing it again now and then) until the session is done."""
        for attempt in range(8):
            if self.done():  # a run the timer meant to kill may have finished first
                return
            command = ("resume",) if self.state_file() else ("run", str(self.folder / "plan.toml"))
            process = self.start(*command)
            if span and attempt < 2 and rng.random() < 0.3:
                self.kill_later(process, rng, span)
                continue
            out, err = process.communicate(timeout=300)
            self.history.append(f"{command[0]}: exit {process.returncode}")
            if process.returncode not in (0, 3, 4, 5):
                raise AssertionError(f"{command[0]} exited {process.returncode}\n{out}\n{err}")
            if self.done():
                return
        raise AssertionError("the session never finished")

    def done(self) -> bool:
        state = self.state_file()
        return state is not None and str(load_state(state).phase) == "done"

    def state_file(self) -> Path | None:
        found = list((self.repo / ".seawall").glob("chaos-*/state.json"))
        return found[0] if found else None


def _check(run: Run, template: Path) -> None:
    repo = run.repo
    state_file = run.state_file()
    assert state_file is not None
    state = load_state(state_file)
    # status works
    shown = subprocess.run(
        [sys.executable, "-m", "seawall", "status", "--json", "--repo", str(repo)],
        cwd=repo, env=run.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    # nothing any agent wrote is unreachable; a write outside every scope that no call
    # showed (the stray agent's) is no one's seawall may move: it stays on disk
    reachable = set(git(repo, "rev-list", "--objects", "--all").split())
    for record in sorted(run.log.glob("writes-*.jsonl")):
        for line in record.read_text().splitlines():
            wrote = json.loads(line)
            if wrote["blob"] not in reachable and wrote["path"].startswith("scratch/"):
                assert (repo / wrote["path"]).is_file(), f"moved or lost: {wrote}"
                continue
            assert wrote["blob"] in reachable, f"lost: {wrote}"
    # no file of the target branch deleted (no agent deletes any), none changed
    original = git(template, "ls-tree", "-r", "HEAD")
    now = {line.split("\t")[1]: line for line in git(repo, "ls-tree", "-r", "main").splitlines()}
    for line in original.splitlines():
        assert now.get(line.split("\t")[1]) == line, f"changed or deleted: {line}"
    # the target branch holds only whole waves: each step of main is a wave's advance
    # (in the order they landed: a rolling session's dispatches land as they finish)
    steps = git(repo, "rev-list", "--first-parent", f"{state.start_commit}..main").split()
    landed = sorted(state.waves, key=lambda w: (w.merged_at, w.number))
    advances = [w.target_after for w in landed if w.target_after not in (None, w.base)]
    tip = git(repo, "rev-parse", "main")
    assert tip == (advances[-1] if advances else state.start_commit), (tip, advances)
    assert set(advances) <= set(steps), (steps, advances)
    # no duplicate issue
    markers = issue_markers(repo)
    assert len(markers) == len(set(markers)), markers
    # git fsck is clean, no merge in progress, the tree is the user's
    git(repo, "fsck", "--no-dangling", "--no-progress")
    for leftover in ("MERGE_HEAD", "REBASE_HEAD", "index.lock", "HEAD.lock", "packed-refs.lock"):
        assert not (repo / ".git" / leftover).exists(), leftover
    assert not list((repo / ".git" / "refs").rglob("*.lock"))
    assert (repo / "NOTES.txt").read_text() == NOTES
    # besides the user's notes, only the stray agent's unseen writes outside every scope
    # (left where they are, see docs/git.md) may differ from the branch
    changed = git(repo, "status", "--porcelain").splitlines()
    assert "?? NOTES.txt" in changed, changed
    assert all(line == "?? NOTES.txt" or line[3:].startswith("scratch/") for line in changed)
    # no stray worktrees or processes
    listed = git(repo, "worktree", "list", "--porcelain").split("\n\n")[1:]
    events = (state_file.parent / "events.jsonl").read_text().splitlines()
    kept = {e["path"] for e in map(_event, events) if e.get("event") == "worktree_kept"}
    for entry in listed:  # only those kept on purpose, with their reason in the events
        assert entry.split("\n")[0].removeprefix("worktree ") in kept, entry
    assert not list((repo / ".seawall" / "checks").glob("*"))
    for pid in (run.log / "pids").iterdir() if (run.log / "pids").exists() else ():
        assert not process_alive(int(pid.name)), (
            f"agent {pid.read_text()} (pid {pid.name}) still runs"
        )


def _checking_out(admin: Path) -> bool:
    """Whether a worktree is being made: git's record of it exists, not yet verified."""
    try:
        return any(not (entry / "seawall-ready").exists() for entry in admin.iterdir())
    except OSError:
        return False


def _event(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:  # a line a kill cut short
        return {}
    return value if isinstance(value, dict) else {}


def _one(
    folder: Path, template: Path, seed: int, span: float | None, *, inside_git: bool = False
) -> float:
    """One run: killed once at random (unless ``span`` is None; inside git with
    ``inside_git``), then finished."""
    rng = random.Random(seed)
    run = Run(folder, seed)
    shutil.copytree(template, run.repo, symlinks=True)
    (run.repo / "NOTES.txt").write_text(NOTES)
    (folder / "agents.json").write_text(json.dumps(AGENTS))
    (folder / "check.py").write_text(CHECK)
    run.log.mkdir(parents=True, exist_ok=True)  # the agents' sandbox grants what exists
    (folder / "plan.toml").write_text(_plan(folder / "check.py", run.log, _schedule(seed)))
    started = time.monotonic()
    try:
        if inside_git:
            run.kill_inside_git(rng)
            run.finish(rng, 0.0)
        elif span is None:
            run.finish(rng, 0.0)
        else:
            run.kill_later(run.start("run", str(folder / "plan.toml")), rng, span)
            run.finish(rng, span)
        _check(run, template)
    except AssertionError as exc:
        raise AssertionError(
            f"seed {seed}, {_schedule(seed)} ({'; '.join(run.history)}): {exc}"
        ) from None
    finally:
        shutil.rmtree(default_worktree_root(run.repo.resolve()), ignore_errors=True)
    elapsed = time.monotonic() - started
    shutil.rmtree(folder, ignore_errors=True)
    return elapsed


def _scratch(tmp_path: Path) -> Path:
    """A memory-backed temp folder when there is room (checkouts of thousands of files are
    then bound by git, not the disk), else pytest's."""
    shm = Path("/dev/shm")
    try:
        if shm.is_dir() and shutil.disk_usage(shm).free > 2 * 1024**3:
            return Path(tempfile.mkdtemp(prefix="seawall-chaos-", dir=shm))
    except OSError:
        pass
    return tmp_path


@pytest.mark.slow
def test_sessions_killed_at_random_lose_nothing(tmp_path: Path) -> None:
    seed = int(os.environ.get("SEAWALL_CHAOS_SEED") or random.randrange(2**32))
    print(f"chaos seed {seed} (SEAWALL_CHAOS_SEED={seed} replays it)")
    rng = random.Random(seed)
    scratch = _scratch(tmp_path)
    try:
        template = _template(scratch / "template")
        span = _one(scratch / "calm", template, rng.randrange(2**32), None)
        print(f"an uninterrupted run takes {span:.1f} s")
        seeds = [rng.randrange(2**32) for _ in range(RUNS)]

        def one(number: int) -> str | None:
            try:
                _one(scratch / f"run-{number}", template, seeds[number], span)
            except AssertionError as exc:
                return f"run {number}: {exc}"
            return None

        with ThreadPoolExecutor(max_workers=JOBS) as pool:
            broken = [line for line in pool.map(one, range(RUNS)) if line is not None]
    finally:
        if scratch != tmp_path:
            shutil.rmtree(scratch, ignore_errors=True)
    assert not broken, f"chaos seed {seed}: {len(broken)} broken\n" + "\n\n".join(broken)


@pytest.mark.slow
def test_sessions_killed_inside_git_lose_nothing(tmp_path: Path) -> None:
    """Kills inside ``git read-tree`` / ``git update-ref``: the locks they leave are
    removed on resume, the interrupted step is redone, every run finishes."""
    seed = int(os.environ.get("SEAWALL_CHAOS_SEED") or random.randrange(2**32))
    print(f"chaos seed {seed} (SEAWALL_CHAOS_SEED={seed} replays it)")
    rng = random.Random(seed)
    scratch = _scratch(tmp_path)
    try:
        template = _template(scratch / "template")
        seeds = [rng.randrange(2**32) for _ in range(GIT_RUNS)]

        def one(number: int) -> str | None:
            try:
                _one(scratch / f"run-{number}", template, seeds[number], 0.0, inside_git=True)
            except AssertionError as exc:
                return f"run {number}: {exc}"
            return None

        with ThreadPoolExecutor(max_workers=JOBS) as pool:
            broken = [line for line in pool.map(one, range(GIT_RUNS)) if line is not None]
    finally:
        if scratch != tmp_path:
            shutil.rmtree(scratch, ignore_errors=True)
    assert not broken, f"chaos seed {seed}: {len(broken)} broken\n" + "\n\n".join(broken)
