"""Path matching: the escape table (every denied row has an allowed twin) and properties."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.errors import ConfigurationError
from seawall.scope.matcher import ScopeMatcher, ambiguity, compile_grant, grant_matches

SESSION = "s1"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A workspace with in-scope and out-of-scope dirs, and symlinks both ways."""
    base = tmp_path_factory.mktemp("matcher")
    ws = base / "ws"
    outside = base / "outside"
    granted = base / "granted"
    for directory in (
        ws / "src/app/sub",
        ws / "other",
        ws / "docs",
        ws / "pkg/a/b",
        outside,
        granted,
    ):
        directory.mkdir(parents=True)
    (ws / "src/app/real.py").write_text("x\n")
    (outside / "file.txt").write_text("secret\n")
    (ws / "src/app/link_out").symlink_to(outside / "file.txt")
    (ws / "src/app/link_in").symlink_to(ws / "src/app/real.py")
    (ws / "src/app/dir_out").symlink_to(outside, target_is_directory=True)
    (ws / "src/app/dir_in").symlink_to(ws / "src/app/sub", target_is_directory=True)
    (ws / "src/app/sneaky").symlink_to("../../other", target_is_directory=True)
    (ws / "src/app/dangling_out").symlink_to(outside / "not-yet.txt")
    return {"ws": ws, "outside": outside, "granted": granted}


def matcher(tree: dict[str, Path], *extra: str) -> ScopeMatcher:
    grants = ("src/app/", "docs/café.md", "pkg/**/*.py", *extra)
    return ScopeMatcher(grants, workspace=tree["ws"], session=SESSION, agent="t1")


# (denied path, its allowed twin)
ESCAPES = [
    ("../outside/file.txt", "src/app/real.py"),
    ("src/app/../../outside/file.txt", "src/app/../app/real.py"),
    ("src/../src/../../x.txt", "src/../src/app/x.py"),
    ("./src/app/../../../x", "./src/app/x.py"),
    ("src/app/sub/../../../../../etc/passwd", "src/app/sub/../x.py"),
    ("/etc/passwd", "{ws}/src/app/x.py"),
    ("{outside}/file.txt", "{ws}/src/app/sub/x.py"),
    ("src/./other/x.py", "src/./app/x.py"),
    ("src//other//x.py", "src//app//x.py"),
    ("src/app/.//../x.py", "src/app/.//sub/x.py"),
    ("src/app/link_out", "src/app/link_in"),
    ("src/app/dir_out/file.txt", "src/app/dir_in/x.py"),
    ("src/app/sneaky/x.py", "src/app/sub/x.py"),
    ("src/app/dangling_out", "src/app/new_file.py"),
    ("SRC/app/x.py", "src/app/x.py"),
    ("src/App/x.py", "src/app/x.py"),
    ("Docs/café.md", "docs/café.md"),
    ("src/app/x.py\x00.txt", "src/app/x.py"),
    ("src/app/" + "a" * 300, "src/app/" + "a" * 200),
    ("src/app/" + "a/" * 2100 + "x", "src/app/" + "a/" * 100 + "x"),
    ("src/ａpp/x.py", "src/app/x.py"),  # fullwidth a: NFKC -> src/app/x.py
    ("src/app/ﬁle.py", "src/app/file.py"),  # ligature fi: NFKC -> file.py
    ("docs/cafe\u0301.md", "docs/caf\u00e9.md"),  # NFD vs NFC
    ("src/app/x\u200b.py", "src/app/x.py"),  # zero-width space
    ("src/app/\u202ecod.py", "src/app/cod.py"),  # right-to-left override
    ("src/аpp/x.py", "src/app/x.py"),  # Cyrillic a: another directory
    ("pkg/a/b/c.txt", "pkg/a/b/c.py"),
    ("pkg.py", "pkg/c.py"),
    ("~/.bashrc", "{granted}/notes.txt"),
    (".seawall/s1/wave-1/scope.json", ".seawall/s1/BLOCKED.md"),
    (".seawall/s1/agents/t1/breaker.json", ".seawall/s1/agents/t1/BLOCKED.md"),
    (".seawall/other-session/BLOCKED.md", ".seawall/s1/BLOCKED.md"),
    (".seawall/s1/agents/t2/BLOCKED.md", ".seawall/s1/agents/t1/BLOCKED.md"),  # another's note
    (".seawall/s1/agents/t1/BLOCKED.md/x", ".seawall/s1/agents/t1/BLOCKED.md"),
]


def _fill(path: str, tree: dict[str, Path]) -> str:
    return path.format(ws=tree["ws"], outside=tree["outside"], granted=tree["granted"])


@pytest.mark.parametrize(("denied", "twin"), ESCAPES)
def test_escape_is_denied_and_its_twin_allowed(
    tree: dict[str, Path], denied: str, twin: str
) -> None:
    m = matcher(tree, f"{tree['granted']}/")
    bad = m.check(_fill(denied, tree))
    good = m.check(_fill(twin, tree))
    assert not bad.allowed, bad
    assert good.allowed, good


@pytest.mark.parametrize(
    "protected",
    [".git/hooks/pre-commit", ".git", ".claude/settings.json", ".claude/settings.local.json"],
)
def test_guard_files_are_denied_even_under_a_catch_all(
    tree: dict[str, Path], protected: str
) -> None:
    m = ScopeMatcher(("**",), workspace=tree["ws"], session=SESSION)
    assert not m.check(protected).allowed
    assert m.check(".claude/agents/helper.md").allowed


def test_a_matcher_of_no_one_agent_writes_no_agent_note(tree: dict[str, Path]) -> None:
    union = ScopeMatcher(("**",), workspace=tree["ws"], session=SESSION)
    assert union.check(f".seawall/{SESSION}/BLOCKED.md").carved_out
    for task in ("t1", "t2"):
        verdict = union.check(f".seawall/{SESSION}/agents/{task}/BLOCKED.md")
        assert not verdict.allowed and "seawall or git state" in verdict.reason


def test_relative_paths_resolve_against_cwd(tree: dict[str, Path]) -> None:
    m = matcher(tree)
    assert m.check("x.py", cwd=tree["ws"] / "src/app").allowed
    assert not m.check("x.py", cwd=tree["ws"] / "other").allowed


def test_state_files_of_a_worktree_agent_live_in_the_main_repository(
    tree: dict[str, Path],
) -> None:
    m = ScopeMatcher(
        ("src/",), workspace=tree["ws"] / "src", session=SESSION, state_root=tree["ws"]
    )
    assert m.check(f"{tree['ws']}/.seawall/{SESSION}/BLOCKED.md").carved_out
    assert not m.check(f"{tree['ws']}/.seawall/{SESSION}/wave-1/scope.json").allowed


def test_verdict_names_the_resolved_path(tree: dict[str, Path]) -> None:
    verdict = matcher(tree).check("src/app/sneaky/x.py")
    assert verdict.path == "other/x.py"
    assert "outside this task's file scope" in verdict.reason


def test_grants_compile_as_documented() -> None:
    cases = [
        ("src/", "src/a/b.py", True),
        ("src/", "srcx/a.py", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/a/b.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/a/b/c.py", True),
        ("src/**", "src/a/b", True),
        ("src/a.py", "src/a.py", True),
        ("src/a.py", "src/a.py/x", False),
        ("./src//a.py", "src/a.py", True),
    ]
    for grant, path, expected in cases:
        norm, regex = compile_grant(grant)
        assert grant_matches(norm, regex, path) is expected, (grant, path)


@pytest.mark.parametrize("grant", ["", "../x", "src/../../x", "a\x00b"])
def test_bad_grants_are_configuration_errors(grant: str) -> None:
    with pytest.raises(ConfigurationError):
        compile_grant(grant)


def test_ambiguity_accepts_plain_unicode() -> None:
    assert ambiguity("docs/café.md") is None
    assert ambiguity("src/日本語.py") is None
    assert ambiguity("src/a\tb.py") is not None


def test_lexical_match_of_git_paths(tree: dict[str, Path]) -> None:
    m = matcher(tree)
    assert m.matches_relative("src/app/x.py")
    assert not m.matches_relative("src/app/../../x.py")
    assert not m.matches_relative(".seawall/s1/wave-1/scope.json")


SEGMENTS = ["src", "app", "sub", "other", "..", ".", "", "real.py", "x.py", "link_out",
            "link_in", "dir_out", "dir_in", "sneaky", "dangling_out", "ａpp", "SRC"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=8), absolute=st.booleans())
def test_an_allowed_path_resolves_inside_an_allowed_scope(
    tree: dict[str, Path], parts: list[str], absolute: bool
) -> None:
    ws = tree["ws"]
    m = ScopeMatcher(("src/app/",), workspace=ws, session=SESSION)
    path = "/".join(parts)
    candidate = f"{ws}/{path}" if absolute else path
    verdict = m.check(candidate)
    if verdict.allowed:
        real = os.path.realpath(ws / path)
        scope = os.path.realpath(ws / "src/app")
        assert os.path.commonpath([real, scope]) == scope, (path, real)
        assert unicodedata.normalize("NFKC", real) == real
