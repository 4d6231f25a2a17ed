"""Helpers for the reliability tests: sessions through the public API, and the checks
that say nothing was lost."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio

from seawall.carryover import RetryPolicy
from seawall.plan import parse_plan
from seawall.session.engine import Session, SessionResult
from seawall.state.ledger import SessionState
from seawall.state.render import render_state_md
from seawall.state.store import load_state
from tests.integration.sessionkit import git

FAULT_AGENT = Path(__file__).with_name("fault_agent.py")
GIT_LEFTOVERS = ("MERGE_HEAD", "REBASE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD")


def fault_plan(name: str, tasks: dict[str, str], *, extra: str = "") -> str:
    """A plan whose agents run ``fault_agent.py``; ``tasks`` maps task ids to scopes.

    The fault agent keeps its dispatch counters beside ``$FAULT_SPEC`` (and tests their
    pid files there): the agents' sandbox lets them write that directory.
    """
    spec = os.environ.get("FAULT_SPEC")
    writable = f"sandbox_writable = [{json.dumps(str(Path(spec).parent))}]" if spec else ""
    lines = [
        "[session]",
        f'name = "{name}"',
        'agent = "faulty"',
        writable,
        "accept_hooks_only = true",  # these sessions test other things on any kernel
        extra,
        "",
        "[runners.faulty]",
        'kind = "command"',
        f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(FAULT_AGENT))}]",
    ]
    for task, scope in tasks.items():
        lines += [
            "",
            "[[task]]",
            f'id = "{task}"',
            f'prompt = "Do {task}."',
            f'scope = ["{scope}"]',
        ]
    return "\n".join(lines) + "\n"


class Waits(list[float]):
    """A retry policy's ``sleep`` that records each wait instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def no_sleep_retry() -> tuple[RetryPolicy, Waits]:
    """The default tracker retry policy, its waits recorded instead of slept."""
    waits = Waits()
    return RetryPolicy(sleep=waits), waits


def session_for(repo: Path, plan_text: str, **kwargs: Any) -> Session:
    return Session(parse_plan(plan_text), repo=repo, plan_text=plan_text, **kwargs)


def run(session: Session) -> SessionResult:
    return anyio.run(session.run)


def resume(repo: Path, **kwargs: Any) -> SessionResult:
    return anyio.run(Session.open(repo, **kwargs).resume)


def ledger(repo: Path) -> SessionState:
    """The only session's ledger, checked: valid, current schema, STATE.md matches it."""
    paths = list((repo / ".seawall").glob("*/state.json"))
    assert len(paths) == 1, paths
    state = load_state(paths[0])
    assert (paths[0].parent / "STATE.md").read_text() == render_state_md(state)
    return state


def assert_no_git_leftovers(repo: Path, *, allow_index_lock: bool = False) -> None:
    git_dir = repo / ".git"
    for leftover in GIT_LEFTOVERS:
        assert not (git_dir / leftover).exists(), leftover
    if not allow_index_lock:
        assert not (git_dir / "index.lock").exists()
    git(repo, "fsck", "--no-dangling", "--no-progress")  # every object reachable is sound


def ref_history(repo: Path, session: str, task: str) -> str:
    """Every commit message and file of an agent's checkpoint ref (all parents)."""
    return git(repo, "log", "--format=%s", "--name-only", f"refs/seawall/{session}/{task}")


def reachable_content(repo: Path, session: str, task: str, path: str) -> set[str]:
    """Every content ``path`` had in any commit reachable from the agent's ref."""
    revs = git(repo, "rev-list", f"refs/seawall/{session}/{task}").split()
    found = set()
    for rev in revs:
        done = git_maybe(repo, "show", f"{rev}:{path}")
        if done is not None:
            found.add(done)
    return found


def git_maybe(repo: Path, *args: str) -> str | None:
    import subprocess

    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def issue_markers(repo: Path) -> list[str]:
    """The carryover fingerprints of the local tracker's issues (one per issue)."""
    markers = []
    for path in sorted((repo / ".seawall" / "issues").glob("*.md")):
        markers.extend(re.findall(r"seawall:carryover [0-9a-f]+", path.read_text()))
    return markers
