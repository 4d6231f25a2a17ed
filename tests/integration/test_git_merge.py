"""The sequential in-memory merge and every case of its conflict policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.git import MergeRule, MergeStatus
from tests.integration.test_git_support import (
    agent_commit,
    blob_text,
    git,
    head,
    make_repo,
    merge_agents,
    tree_paths,
)

LINES = "".join(f"line {n}\n" for n in range(1, 11))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path,
        {
            "shared.txt": LINES,
            "other.txt": "other\n",
            "doomed.txt": "doomed\n",
            "logo.bin": b"\x00\x01\x02base",
            "moved.txt": "moved content\nthat is long enough\nto be detected\n",
            "run.sh": "echo hi\n",
        },
    )


def test_disjoint_agents_become_one_commit_each_in_order(repo: Path) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {"other.txt": "a\n"})
    b = agent_commit(repo, base, {"new.txt": "b\n"})
    result = merge_agents(repo, base, a, b)
    assert [agent.status for agent in result.agents] == [MergeStatus.MERGED] * 2
    assert result.agents[0].reason == "fast-forward"
    assert result.agents[0].commit == a
    log = git(repo, "log", "--format=%s", f"{base}..{result.integration}").splitlines()
    assert log == ["b: agent changes", "agent work"]
    assert blob_text(repo, result.integration, "other.txt") == "a\n"
    assert blob_text(repo, result.integration, "new.txt") == "b\n"
    assert result.resolutions == ()
    assert head(repo) == base, "merging must not move any branch"


def test_non_overlapping_edits_of_one_file_merge_cleanly(repo: Path) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {"shared.txt": LINES.replace("line 1\n", "line one\n")})
    b = agent_commit(repo, base, {"shared.txt": LINES.replace("line 9\n", "line nine\n")})
    result = merge_agents(repo, base, a, b)
    text = blob_text(repo, result.integration, "shared.txt")
    assert "line one" in text and "line nine" in text
    assert result.fix_tasks == ()


def test_both_added_with_one_extending_the_other_merges_line_by_line(repo: Path) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {"added.txt": "title\n"})
    b = agent_commit(repo, base, {"added.txt": "title\nbody from b\n"})
    result = merge_agents(repo, base, a, b)
    assert blob_text(repo, result.integration, "added.txt") == "title\nbody from b\n"
    (resolution,) = result.resolutions
    assert resolution.rule is MergeRule.BOTH_ADDED_MERGED
    assert resolution.fix_task is None
    assert result.fix_tasks == ()
    assert [agent.status for agent in result.agents] == [MergeStatus.MERGED] * 2


def test_both_added_differently_keeps_the_earlier_version_and_sets_the_later_aside(
    repo: Path,
) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {"added.txt": "from a\n"})
    b = agent_commit(repo, base, {"added.txt": "from b\n"})
    result = merge_agents(repo, base, a, b)
    assert blob_text(repo, result.integration, "added.txt") == "from a\n"
    (resolution,) = result.resolutions
    assert resolution.rule is MergeRule.BOTH_ADDED
    assert (resolution.kept_task, resolution.other_task) == ("a", "b")
    assert resolution.fix_task == "b-fix-w1"
    (fix,) = result.fix_tasks
    assert (fix.source_task, fix.against_tasks, fix.files) == ("b", ("a",), ("added.txt",))
    assert fix.source_commit == b
    assert "from a" in fix.hunks and "from b" in fix.hunks
    assert blob_text(repo, fix.source_commit, "added.txt") == "from b\n"
    assert result.agent("b").status is MergeStatus.CONFLICTED


def test_both_modified_keeps_the_earlier_version_and_files_the_hunks(repo: Path) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {"shared.txt": LINES.replace("line 5\n", "line five (a)\n")})
    b = agent_commit(
        repo, base, {"shared.txt": LINES.replace("line 5\n", "line 5 by b\n"), "b.txt": "b\n"}
    )
    result = merge_agents(repo, base, a, b)
    assert "line five (a)" in blob_text(repo, result.integration, "shared.txt")
    assert blob_text(repo, result.integration, "b.txt") == "b\n"
    (resolution,) = result.resolutions
    assert resolution.rule is MergeRule.BOTH_MODIFIED
    assert (resolution.kept_task, resolution.other_task) == ("a", "b")
    (fix,) = result.fix_tasks
    assert fix.id == "b-fix-w1"
    assert fix.files == ("shared.txt",)
    assert fix.against_tasks == ("a",)
    assert fix.source_commit == b
    assert "line five (a)" in fix.hunks and "line 5 by b" in fix.hunks
    assert "<<<<<<< a (kept in the tree)" in fix.hunks
    assert "line 5 by b" in fix.prompt()
    assert result.agent("b").status is MergeStatus.MERGED


def test_delete_modify_keeps_the_earlier_side(repo: Path) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {"doomed.txt": None})
    b = agent_commit(repo, base, {"doomed.txt": "rescued\n"})
    result = merge_agents(repo, base, a, b)
    assert "doomed.txt" not in tree_paths(repo, result.integration)
    (resolution,) = result.resolutions
    assert resolution.rule is MergeRule.DELETE_MODIFY
    assert resolution.kept_task == "a"
    assert result.fix_tasks[0].files == ("doomed.txt",)
    assert result.agent("b").status is MergeStatus.CONFLICTED
    assert result.agent("b").commit is None


def test_binary_conflict_keeps_the_earlier_version(repo: Path) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {"logo.bin": b"\x00a-version"})
    b = agent_commit(repo, base, {"logo.bin": b"\x00b-version"})
    result = merge_agents(repo, base, a, b)
    assert result.resolutions[0].rule is MergeRule.BINARY
    assert result.fix_tasks[0].source_commit == b
    assert git(repo, "cat-file", "-p", f"{result.integration}:logo.bin") == "\x00a-version"


def test_rename_rename_keeps_the_earlier_name(repo: Path) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {}, renames={"moved.txt": "by-a.txt"})
    b = agent_commit(repo, base, {}, renames={"moved.txt": "by-b.txt"})
    result = merge_agents(repo, base, a, b)
    paths = tree_paths(repo, result.integration)
    assert "by-a.txt" in paths
    assert "by-b.txt" not in paths and "moved.txt" not in paths
    assert {r.rule for r in result.resolutions} == {MergeRule.RENAME_RENAME}
    (fix,) = result.fix_tasks
    assert "by-b.txt" in fix.files
    assert all(r.kept_task == "a" for r in result.resolutions if r.path == "by-b.txt")


def test_mode_conflict_keeps_the_earlier_version(repo: Path) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {"run.sh": "echo a\n"}, modes={"run.sh": 0o100755})
    b = agent_commit(repo, base, {"run.sh": "echo b\n"})
    result = merge_agents(repo, base, a, b)
    assert result.resolutions[0].rule is MergeRule.MODE
    assert blob_text(repo, result.integration, "run.sh") == "echo a\n"
    entry = git(repo, "ls-tree", result.integration, "run.sh")
    assert entry.startswith("100755")


def test_dropped_and_empty_agents_add_no_commit(repo: Path) -> None:
    base = head(repo)
    a = agent_commit(repo, base, {"other.txt": "a\n"})
    b = agent_commit(repo, base, {})
    seen: list[str] = []
    result = merge_agents(
        repo,
        base,
        a,
        b,
        drop={"a": "spiral"},
        on_merged=lambda merged: seen.append(merged.task_id),
    )
    assert [agent.status for agent in result.agents] == [MergeStatus.DROPPED, MergeStatus.EMPTY]
    assert result.agent("a").reason == "spiral"
    assert result.integration == base
    assert seen == ["a", "b"]
