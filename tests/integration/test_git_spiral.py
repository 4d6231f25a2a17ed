"""Spiral detection on real agent histories: checkpoints and the agent's own commits."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from seawall.git import (
    Checkpointer,
    CheckpointMode,
    SignalKind,
    agent_history,
    detect_spiral,
    prepare_workspaces,
)
from seawall.model import Isolation, SpiralConfig
from tests.integration.test_git_support import git, head, make_repo

CONFIG = SpiralConfig()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"src/auth.py": "v0\n", "src/db.py": "db0\n"})


def _in_place(repo: Path, task: str) -> Checkpointer:
    return Checkpointer(
        repo, session_id="s1", task_id=task, base=head(repo), mode=CheckpointMode.PATHS
    )


def _edit(checkpointer: Checkpointer, path: str, text: str) -> str | None:
    (checkpointer.root / path).write_text(text)
    return checkpointer.checkpoint([path])


def test_a_file_changed_in_three_checkpoints_is_a_spiral(repo: Path) -> None:
    base = head(repo)
    agent = _in_place(repo, "t1")
    commits = [_edit(agent, "src/auth.py", f"v{n}\n") for n in range(1, 5)]
    _edit(agent, "src/db.py", "db1\n")
    verdict = detect_spiral(agent_history(repo, session_id="s1", task_id="t1", base=base), CONFIG)
    assert verdict.is_spiral
    (signal,) = verdict.signals
    assert signal.kind is SignalKind.REPEAT_EDITS
    assert (signal.path, signal.count) == ("src/auth.py", 4)
    assert signal.commits == tuple(commits)
    assert verdict.summary() == "src/auth.py changed 4×"
    assert verdict.files == ("src/auth.py",)


def test_two_changes_are_not_a_spiral_and_the_threshold_is_configurable(repo: Path) -> None:
    base = head(repo)
    agent = _in_place(repo, "t1")
    _edit(agent, "src/auth.py", "v1\n")
    _edit(agent, "src/auth.py", "v2\n")
    history = agent_history(repo, session_id="s1", task_id="t1", base=base)
    assert not detect_spiral(history, CONFIG).is_spiral
    assert detect_spiral(history, SpiralConfig(file_changes=2)).is_spiral


def test_content_returning_to_an_earlier_version_is_a_spiral(repo: Path) -> None:
    base = head(repo)
    agent = _in_place(repo, "t1")
    _edit(agent, "src/auth.py", "attempt A\n")
    back = _edit(agent, "src/auth.py", "v0\n")  # back to the base content
    _edit(agent, "src/db.py", "db1\n")
    verdict = detect_spiral(agent_history(repo, session_id="s1", task_id="t1", base=base), CONFIG)
    kinds = {signal.kind for signal in verdict.signals}
    assert kinds == {SignalKind.CONTENT_REVERT}
    assert verdict.signals[0].path == "src/auth.py"
    assert verdict.signals[0].commits[-1] == back
    assert not detect_spiral(
        agent_history(repo, session_id="s1", task_id="t1", base=base),
        SpiralConfig(detect_reverts=False),
    ).is_spiral


def test_a_net_empty_change_after_changes_is_a_spiral(repo: Path) -> None:
    base = head(repo)
    agent = _in_place(repo, "t1")
    _edit(agent, "scratch.txt", "trying\n")
    (repo / "scratch.txt").unlink()
    agent.checkpoint()
    verdict = detect_spiral(agent_history(repo, session_id="s1", task_id="t1", base=base), CONFIG)
    assert [signal.kind for signal in verdict.signals] == [SignalKind.NET_EMPTY]
    assert "net change empty" in verdict.summary()


def test_two_agents_changing_one_file_is_not_a_spiral(repo: Path) -> None:
    base = head(repo)
    first, second = _in_place(repo, "a"), _in_place(repo, "b")
    _edit(first, "src/auth.py", "a1\n")
    _edit(second, "src/auth.py", "b1\n")
    _edit(first, "src/auth.py", "a2\n")
    _edit(second, "src/auth.py", "b2\n")
    for task in ("a", "b"):
        history = agent_history(repo, session_id="s1", task_id=task, base=base)
        assert not detect_spiral(history, CONFIG).is_spiral, task


def test_an_agents_own_commits_count_without_double_counting_checkpoints(repo: Path) -> None:
    base = head(repo)
    (workspace,) = anyio.run(
        lambda: prepare_workspaces(
            repo, session_id="s1", wave=1, base=base, task_ids=["t1"], isolation=Isolation.WORKTREE
        )
    )
    root = Path(workspace.path)
    agent = Checkpointer(root, session_id="s1", task_id="t1", base=base, mode=CheckpointMode.TREE)
    for n in (1, 2):
        (root / "src" / "auth.py").write_text(f"w{n}\n")
        agent.checkpoint()
        git(root, "commit", "-q", "-am", f"edit {n}")
    history = agent_history(repo, session_id="s1", task_id="t1", base=base, branch=workspace.branch)
    assert len(history.commits) == 2 and len(history.checkpoints) == 2
    assert not detect_spiral(history, CONFIG).is_spiral  # 2 edits, seen twice each
    (root / "src" / "auth.py").write_text("w3\n")
    git(root, "commit", "-q", "-am", "edit 3")  # no checkpoint: only the branch knows
    history = agent_history(repo, session_id="s1", task_id="t1", base=base, branch=workspace.branch)
    verdict = detect_spiral(history, CONFIG)
    assert verdict.summary() == "src/auth.py changed 3×"
    assert verdict.commits == tuple(sorted(entry.commit for entry in history.commits))


def test_history_follows_renames(repo: Path) -> None:
    base = head(repo)
    agent = _in_place(repo, "t1")
    git(repo, "mv", "src/db.py", "src/store.py")
    commit = agent.checkpoint(["src/db.py", "src/store.py"])
    git(repo, "reset", "-q", "--hard")
    history = agent_history(repo, session_id="s1", task_id="t1", base=base)
    (entry,) = history.checkpoints
    assert entry.commit == commit
    (change,) = entry.changes
    assert (change.kind.value, change.old_path, change.path) == (
        "renamed",
        "src/db.py",
        "src/store.py",
    )
    assert change.old_blob == change.new_blob
