"""Two agents adding the same file: the versions merge line by line when their union does
not depend on whose lines come first; otherwise the earlier version stays in the tree and
the later one is set aside in a fix task naming both agents."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from seawall.git import AgentChange, MergeRule, MergeStatus, merge_wave

HEADER = "# API\n\nThe service's HTTP interface.\n"
ENDPOINTS = "\n## Endpoints\n\n- GET /items\n"
AUTH = "\n## Authentication\n\nSend `Authorization: Bearer <token>`.\n"


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "repo"), bare=True)


def _union(repo: pygit2.Repository, earlier: str, later: str) -> str | None:
    from seawall.git.line_union import line_union

    merged = line_union(repo, repo.create_blob(earlier.encode()), repo.create_blob(later.encode()))
    return None if merged is None else repo[merged].peel(pygit2.Blob).data.decode()


@pytest.mark.parametrize(
    ("earlier", "later", "union"),
    [
        (HEADER, HEADER + ENDPOINTS, HEADER + ENDPOINTS),  # the later one extends the earlier
        (HEADER + ENDPOINTS, HEADER, HEADER + ENDPOINTS),  # the earlier one extends the later
        (
            HEADER + AUTH,
            HEADER + ENDPOINTS + AUTH,
            HEADER + ENDPOINTS + AUTH,
        ),  # lines inserted between shared ones
        (
            "a\nb\n" + "same\n" * 5 + "c\n",
            "a\n" + "same\n" * 5 + "c\nd\n",
            "a\nb\n" + "same\n" * 5 + "c\nd\n",
        ),  # each adds lines in a different place
        ("", "only later\n", "only later\n"),  # an empty file is extended too
        (HEADER, HEADER, HEADER),
    ],
)
def test_versions_whose_union_is_unambiguous_merge(
    repo: pygit2.Repository, earlier: str, later: str, union: str
) -> None:
    assert _union(repo, earlier, later) == union


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        (HEADER + ENDPOINTS, HEADER + AUTH),  # two sections at the same place: which first?
        ("x = 1\n", "x = 2\n"),  # the same line, written differently
        (
            "a\nb\n" + "same\n" * 2 + "c\n",
            "a\n" + "same\n" * 2 + "c\nd\n",
        ),  # additions three shared lines apart: git's merge makes them one region
        ("last line", "last line\nand more\n"),  # "last line" is not "last line\n"
    ],
)
def test_versions_that_conflict_do_not_merge(
    repo: pygit2.Repository, earlier: str, later: str
) -> None:
    assert _union(repo, earlier, later) is None


def _commit(repo: pygit2.Repository, base: pygit2.Oid, files: dict[str, str]) -> str:
    parent = repo[base].peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    for path, text in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(text.encode()), FileMode.BLOB))
    tree = index.write_tree(repo)
    signature = pygit2.Signature("agent", "agent@example.invalid")
    return str(repo.create_commit(None, signature, signature, "agent work", tree, [base]))


def _base(repo: pygit2.Repository) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    builder.insert("README.md", repo.create_blob(b"# project\n"), FileMode.BLOB)
    signature = pygit2.Signature("user", "user@example.invalid")
    return repo.create_commit(None, signature, signature, "base", builder.write(), [])


def test_an_unambiguous_union_merges_both_agents(repo: pygit2.Repository) -> None:
    base = _base(repo)
    earlier = _commit(repo, base, {"docs/api.md": HEADER})
    later = _commit(repo, base, {"docs/api.md": HEADER + ENDPOINTS})
    changes = [
        AgentChange(task_id="docs-intro", commit=earlier),
        AgentChange(task_id="docs-api", commit=later),
    ]
    result = merge_wave(repo.path, base=str(base), changes=changes, session_id="s", wave=2)
    tree = repo[result.integration].peel(pygit2.Commit).tree
    assert tree["docs/api.md"].peel(pygit2.Blob).data.decode() == HEADER + ENDPOINTS
    assert [a.status for a in result.agents] == [MergeStatus.MERGED, MergeStatus.MERGED]
    assert result.fix_tasks == ()
    (resolution,) = result.resolutions
    assert resolution.rule is MergeRule.BOTH_ADDED_MERGED
    assert resolution.fix_task is None
    assert {resolution.kept_task, resolution.other_task} == {"docs-intro", "docs-api"}


def test_a_true_conflict_keeps_the_earlier_version_and_sets_the_later_aside(
    repo: pygit2.Repository,
) -> None:
    base = _base(repo)
    earlier = _commit(repo, base, {"docs/api.md": HEADER + ENDPOINTS})
    later = _commit(repo, base, {"docs/api.md": HEADER + AUTH, "docs/auth.md": "auth\n"})
    changes = [
        AgentChange(task_id="docs-api", commit=earlier),
        AgentChange(task_id="docs-auth", commit=later),
    ]
    result = merge_wave(repo.path, base=str(base), changes=changes, session_id="s", wave=2)
    tree = repo[result.integration].peel(pygit2.Commit).tree
    assert tree["docs/api.md"].peel(pygit2.Blob).data.decode() == HEADER + ENDPOINTS
    assert tree["docs/auth.md"].peel(pygit2.Blob).data == b"auth\n"
    (resolution,) = result.resolutions
    assert resolution.rule is MergeRule.BOTH_ADDED
    assert (resolution.kept_task, resolution.other_task) == ("docs-api", "docs-auth")
    assert resolution.fix_task == "docs-auth-fix-w2"
    (fix,) = result.fix_tasks
    assert (fix.id, fix.source_task, fix.against_tasks) == (
        "docs-auth-fix-w2",
        "docs-auth",
        ("docs-api",),
    )
    assert fix.files == ("docs/api.md",) and fix.source_commit == later
    assert "<<<<<<< docs-api (kept in the tree)" in fix.hunks
    assert "- GET /items" in fix.hunks and "## Authentication" in fix.hunks
    assert ">>>>>>> docs-auth (this fix task)" in fix.hunks
    # its other file merged: merged, with the conflicting file set aside
    assert result.agent("docs-auth").status is MergeStatus.MERGED


def test_a_later_agent_whose_only_change_conflicts_adds_no_commit(
    repo: pygit2.Repository,
) -> None:
    base = _base(repo)
    earlier = _commit(repo, base, {"docs/api.md": HEADER + ENDPOINTS})
    later = _commit(repo, base, {"docs/api.md": HEADER + AUTH})
    changes = [
        AgentChange(task_id="docs-api", commit=earlier),
        AgentChange(task_id="docs-auth", commit=later),
    ]
    result = merge_wave(repo.path, base=str(base), changes=changes, session_id="s", wave=2)
    assert result.agent("docs-auth").status is MergeStatus.CONFLICTED
    assert result.agent("docs-auth").commit is None
    assert [fix.source_task for fix in result.fix_tasks] == ["docs-auth"]


@pytest.mark.parametrize(
    ("earlier", "later", "rule"),
    [
        ((b"\x00earlier", FileMode.BLOB), (b"\x00later", FileMode.BLOB), MergeRule.BINARY),
        (
            (b"run a\n", FileMode.BLOB_EXECUTABLE),
            (b"run a\nrun b\n", FileMode.BLOB),
            MergeRule.MODE,
        ),
    ],
)
def test_binary_or_mode_differences_of_an_added_file_are_set_aside(
    repo: pygit2.Repository,
    earlier: tuple[bytes, int],
    later: tuple[bytes, int],
    rule: MergeRule,
) -> None:
    base = _base(repo)

    def commit(data: bytes, mode: int) -> str:
        parent = repo[base].peel(pygit2.Commit)
        builder = repo.TreeBuilder(parent.tree)
        builder.insert("tool", repo.create_blob(data), mode)
        signature = pygit2.Signature("agent", "agent@example.invalid")
        return str(repo.create_commit(None, signature, signature, "w", builder.write(), [base]))

    changes = [
        AgentChange(task_id="first", commit=commit(*earlier)),
        AgentChange(task_id="second", commit=commit(*later)),
    ]
    result = merge_wave(repo.path, base=str(base), changes=changes, session_id="s", wave=1)
    entry = repo[result.integration].peel(pygit2.Commit).tree["tool"]
    assert (entry.peel(pygit2.Blob).data, entry.filemode) == earlier
    (resolution,) = result.resolutions
    assert resolution.rule is rule and resolution.kept_task == "first"
    assert [fix.source_task for fix in result.fix_tasks] == ["second"]
