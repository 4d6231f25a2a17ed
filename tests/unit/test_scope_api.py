"""The public namespace of ``seawall.scope`` does not drift."""

from __future__ import annotations

import inspect

import seawall.scope as scope

SESSION_LOOP_API = {
    "build_manifest",
    "write_manifest",
    "close_manifest",
    "load_manifest",
    "plan_collisions",
    "verify_wave",
    "changed_paths",
}


def test_all_names_exist_and_nothing_public_is_missing() -> None:
    assert len(scope.__all__) == len(set(scope.__all__))
    for name in scope.__all__:
        assert hasattr(scope, name), name
    public = {
        name
        for name, value in vars(scope).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }
    assert public == set(scope.__all__)


def test_the_session_loop_api_is_exported() -> None:
    assert set(scope.__all__) >= SESSION_LOOP_API
