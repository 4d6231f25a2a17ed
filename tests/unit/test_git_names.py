"""Names derived from ids, commit trailers, and the package's public namespace."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import seawall.git
from seawall.git import agent_branch, checkpoint_ref, safe_component
from seawall.git.repo import parse_trailers


@given(st.text(min_size=1, max_size=80))
def test_a_safe_component_never_escapes_or_contains_separators(text: str) -> None:
    name = safe_component(text)
    assert name and "/" not in name and ".." not in name and "\\" not in name
    assert not name.startswith(("-", ".")) and not name.endswith(".lock")
    assert all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in name)


def test_clean_ids_stay_as_they_are_and_changed_ids_do_not_collide() -> None:
    assert safe_component("task-1_a") == "task-1_a"
    assert safe_component("a/b") != safe_component("a-b")
    assert safe_component("a b") != safe_component("a:b")


def test_branch_and_ref_names_follow_the_documented_shape() -> None:
    assert agent_branch("s1", 2, "t1") == "seawall/s1/w2/t1"
    assert checkpoint_ref("s1", "t1") == "refs/seawall/s1/t1"


def test_trailers_come_from_the_last_paragraph_only() -> None:
    message = "title\n\nBody: not a trailer here\nmore text\n\nKey: value\nOther-Key: x y\n"
    assert parse_trailers(message) == {"Key": "value", "Other-Key": "x y"}


def test_every_name_in_all_exists_and_nothing_public_is_missing() -> None:
    exported = set(seawall.git.__all__)
    assert all(hasattr(seawall.git, name) for name in exported)
    public = {
        name
        for name, value in vars(seawall.git).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith("seawall.git")
    }
    assert public == exported
