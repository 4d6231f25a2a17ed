"""A re-dispatch of a task on an unchanged base starts a new checkpoint chain; the
earlier dispatch's chain stays reachable."""

from __future__ import annotations

from pathlib import Path

from seawall.git.checkpoints import Checkpointer, CheckpointMode
from seawall.git.history import agent_history
from tests.integration.sessionkit import git, make_repo


def test_dispatches_on_one_base_have_separate_histories(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "0\n"})
    base = git(repo, "rev-parse", "HEAD")
    first = Checkpointer(
        repo, session_id="s", task_id="t", base=base, mode=CheckpointMode.PATHS, dispatch="w1"
    )
    for n in (1, 2, 3):
        (repo / "a.txt").write_text(f"{n}\n")
        assert first.checkpoint(["a.txt"]) is not None
    old_tip = first.tip
    second = Checkpointer(
        repo, session_id="s", task_id="t", base=base, mode=CheckpointMode.PATHS, dispatch="w2"
    )
    assert second.tip is None  # not a continuation of w1
    (repo / "a.txt").write_text("9\n")
    assert second.checkpoint(["a.txt"]) is not None
    h1 = agent_history(repo, session_id="s", task_id="t", base=base, dispatch="w1")
    h2 = agent_history(repo, session_id="s", task_id="t", base=base, dispatch="w2")
    assert len(h2.checkpoints) == 1
    assert h2.changed_paths == frozenset({"a.txt"})
    # the earlier chain is still reachable from the ref (a second parent)
    assert git(repo, "merge-base", "--is-ancestor", str(old_tip), "refs/seawall/s/t") == ""
    assert len(h1.checkpoints) == 0  # the ref's tip is w2's; w1's chain is history now
    # a restart of the same dispatch continues its chain
    again = Checkpointer(
        repo, session_id="s", task_id="t", base=base, mode=CheckpointMode.PATHS, dispatch="w2"
    )
    assert again.tip == second.tip
