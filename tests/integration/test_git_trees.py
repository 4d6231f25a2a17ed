"""Path-level tree updates, checked against trees git builds itself."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygit2.enums import FileMode

from seawall.git import AgentChange, MergeRule, merge_wave
from seawall.git.trees import ancestors, update_tree
from tests.integration.test_git_support import (
    agent_commit,
    git,
    head,
    make_repo,
    merge_agents,
    tree_paths,
)


def _blob(repo: pygit2.Repository, text: str) -> tuple[pygit2.Oid, int]:
    return repo.create_blob(text.encode()), FileMode.BLOB


def test_update_tree_matches_the_tree_git_writes(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path, {"a/b/c.txt": "c\n", "a/d.txt": "d\n", "gone/only.txt": "x\n", "f": "f\n"}
    )
    repo = pygit2.Repository(str(root))
    tree = repo.revparse_single("HEAD").peel(pygit2.Tree)
    new = update_tree(
        repo,
        tree,
        {
            "a/b/c.txt": _blob(repo, "c2\n"),
            "a/new/deep/e.txt": _blob(repo, "e\n"),
            "gone/only.txt": None,
            "f": None,
            "f/inside.txt": _blob(repo, "file became a folder\n"),
            "missing.txt": None,
        },
    )
    (root / "a/b/c.txt").write_text("c2\n")
    (root / "a/new/deep").mkdir(parents=True)
    (root / "a/new/deep/e.txt").write_text("e\n")
    (root / "gone/only.txt").unlink()
    (root / "f").unlink()
    (root / "f").mkdir()
    (root / "f/inside.txt").write_text("file became a folder\n")
    git(root, "add", "-A")
    assert str(new) == git(root, "write-tree").strip()


def test_ancestors_lists_every_folder_above() -> None:
    assert ancestors(["a/b/c", "d"]) == {"a", "a/b"}


def test_a_file_and_a_folder_of_the_same_name_keep_the_earlier(tmp_path: Path) -> None:
    root = make_repo(tmp_path, {"app.py": "v0\n"})
    base = head(root)
    first = agent_commit(root, base, {"tool": "a file\n"})
    second = agent_commit(root, base, {"tool/run.py": "a folder\n"})
    result = merge_agents(root, base, first, second)
    assert "tool" in tree_paths(root, result.integration)
    assert "tool/run.py" not in tree_paths(root, result.integration)
    (resolution,) = result.resolutions
    assert resolution.rule is MergeRule.FILE_FOLDER
    assert (resolution.path, resolution.kept_task, resolution.other_task) == (
        "tool/run.py",
        "a",
        "b",
    )
    assert result.fix_tasks[0].files == ("tool/run.py",)


def test_a_later_file_where_a_folder_was_added_is_set_aside(tmp_path: Path) -> None:
    root = make_repo(tmp_path, {"app.py": "v0\n"})
    base = head(root)
    first = agent_commit(root, base, {"tool/run.py": "a folder\n"})
    second = agent_commit(root, base, {"tool": "a file\n"})
    result = merge_agents(root, base, first, second)
    assert tree_paths(root, result.integration) == {"app.py", "tool/run.py"}
    assert [r.rule for r in result.resolutions] == [MergeRule.FILE_FOLDER]
    assert result.fix_tasks[0].files == ("tool",)


PATHS = ["a.txt", "src/m.py", "src/pkg/n.py", "src/pkg/deep/o.py", "docs/x.md", "new/p.txt"]


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    plan=st.lists(
        st.dictionaries(
            st.sampled_from(PATHS), st.one_of(st.none(), st.text("xyz", min_size=1, max_size=3))
        ),
        min_size=1,
        max_size=4,
    )
)
def test_disjoint_agents_merge_like_libgit2_would(
    tmp_path_factory: pytest.TempPathFactory, plan: list[dict[str, str | None]]
) -> None:
    root = make_repo(
        tmp_path_factory.mktemp("prop"),
        {"a.txt": "a\n", "src/m.py": "m\n", "src/pkg/n.py": "n\n", "docs/x.md": "x\n"},
    )
    base = head(root)
    repo = pygit2.Repository(str(root))
    seen: set[str] = set()
    changes = []
    for n, files in enumerate(plan):
        own = {p: c for p, c in files.items() if p not in seen}
        seen.update(own)
        existing = tree_paths(root, base)
        own = {p: c for p, c in own.items() if c is not None or p in existing}
        changes.append(AgentChange(task_id=f"t{n}", commit=agent_commit(root, base, own)))
    result = merge_wave(root, base=base, changes=changes, session_id="s1", wave=1)
    base_tree = repo.revparse_single(base).peel(pygit2.Tree)
    expected = base_tree
    for change in changes:
        theirs = repo.revparse_single(change.commit).peel(pygit2.Tree)
        index = repo.merge_trees(base_tree, expected, theirs)
        assert index.conflicts is None
        expected = repo[index.write_tree(repo)].peel(pygit2.Tree)
    assert repo.revparse_single(result.integration).peel(pygit2.Tree).id == expected.id
    assert result.resolutions == ()
