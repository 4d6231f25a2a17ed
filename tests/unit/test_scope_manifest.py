"""The per-wave scope manifest: written, read back, bound to its session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.errors import ConfigurationError, StateError
from seawall.model import CommandPolicyConfig, Enforcement, Isolation, Task, Wave
from seawall.scope.manifest import (
    ManifestError,
    build_manifest,
    close_manifest,
    find_manifests,
    load_manifest,
    manifest_path,
    write_manifest,
)


def wave(number: int = 1) -> Wave:
    return Wave(
        number=number,
        tasks=(
            Task(id="t1", prompt="a", scope=("src/a/",)),
            Task(id="t2", prompt="b", scope=("docs/b.md", "tests/**/*.py")),
        ),
        isolation=Isolation.NONE,
        enforcement=Enforcement.STRICT,
        max_turns=15,
    )


def test_written_manifest_reads_back_equal(tmp_path: Path) -> None:
    manifest = build_manifest(
        session="sess-1",
        wave=wave(),
        repo=tmp_path,
        workspaces={"t2": tmp_path / "wt" / "t2"},
        commands=CommandPolicyConfig(allow=("npm test",), deny=("npm publish",)),
        base="abc123",
    )
    path = write_manifest(manifest)
    assert path == tmp_path / ".seawall" / "sess-1" / "wave-1" / "scope.json"
    loaded = load_manifest(path, session="sess-1")
    assert loaded == manifest
    agent = loaded.agent("t2")
    assert agent is not None
    assert agent.workspace == str((tmp_path / "wt" / "t2").resolve())
    assert loaded.agent("t9") is None
    assert loaded.union_paths() == ("src/a/", "docs/b.md", "tests/**/*.py")


def test_a_manifest_of_another_session_never_applies(tmp_path: Path) -> None:
    path = write_manifest(build_manifest(session="mine", wave=wave(), repo=tmp_path))
    with pytest.raises(ManifestError, match="belongs to session"):
        load_manifest(path, session="theirs")
    copied = manifest_path(tmp_path, "theirs", 1)
    copied.parent.mkdir(parents=True)
    copied.write_text(path.read_text())
    with pytest.raises(ManifestError, match="lives in"):
        load_manifest(copied)


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{not json",
        "[]",
        '{"schema": 99}',
        '{"schema": 1, "session": "s", "wave": 1}',
        '{"schema": 1, "session": "s", "wave": 1, "enforcement": "loud", "isolation": "none",'
        ' "repo": "/r", "agents": {}}',
        '{"schema": 1, "session": "s", "wave": 1, "enforcement": "strict", "isolation": "none",'
        ' "repo": "/r", "agents": {"t": {"paths": "src/", "workspace": "/r"}}}',
    ],
)
def test_a_corrupt_manifest_is_a_state_error(tmp_path: Path, content: str) -> None:
    path = manifest_path(tmp_path, "s", 1)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(StateError):
        load_manifest(path)


def test_missing_manifest_is_a_manifest_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no scope manifest"):
        load_manifest(manifest_path(tmp_path, "s", 3))


@pytest.mark.parametrize("session", ["", "../x", "a/b", "..", "x" * 200])
def test_unsafe_session_ids_are_refused(tmp_path: Path, session: str) -> None:
    with pytest.raises(ConfigurationError):
        manifest_path(tmp_path, session, 1)


def test_find_and_close(tmp_path: Path) -> None:
    first = write_manifest(build_manifest(session="s", wave=wave(1), repo=tmp_path))
    second = write_manifest(build_manifest(session="s", wave=wave(2), repo=tmp_path))
    write_manifest(build_manifest(session="other", wave=wave(1), repo=tmp_path))
    assert find_manifests(tmp_path, "s")[:2] in ([second, first], [first, second])
    assert set(find_manifests(tmp_path, "s")) == {first, second}
    assert len(find_manifests(tmp_path)) == 3
    closed = close_manifest(first)
    assert closed.closed is not None
    assert json.loads(first.read_text())["closed"] == closed.closed


def test_a_schema_1_manifest_is_still_read(tmp_path: Path) -> None:
    path = manifest_path(tmp_path, "s", 1)
    path.parent.mkdir(parents=True)
    old = {
        "schema": 1,
        "session": "s",
        "wave": 1,
        "enforcement": "strict",
        "isolation": "none",
        "repo": str(tmp_path),
        "base": None,
        "created": 1.5,
        "closed": None,
        "agents": {"t1": {"paths": ["src/**"], "workspace": str(tmp_path)}},
        "commands": {"allow": ["npm publish"], "deny": []},
        "limits": {"max_tool_calls": 7},
    }
    path.write_text(json.dumps(old))
    manifest = load_manifest(path)
    agent = manifest.agent("t1")
    assert agent is not None and agent.paths == ("src/**",)
    assert manifest.commands.allow == ("npm publish",) and manifest.limits.max_tool_calls == 7
    assert manifest.enforcement is Enforcement.STRICT and manifest.created == 1.5


def test_an_unknown_schema_and_a_bad_field_are_named(tmp_path: Path) -> None:
    path = write_manifest(build_manifest(session="s", wave=wave(), repo=tmp_path))
    data = json.loads(path.read_text())
    assert data["schema"] == 2 and data["agents"][0]["task_id"] == "t1"
    path.write_text(json.dumps({**data, "schema": 3}))
    with pytest.raises(ManifestError, match="unknown schema 3"):
        load_manifest(path)
    data["limits"]["max_tool_calls"] = True
    path.write_text(json.dumps(data))
    with pytest.raises(ManifestError, match=r"\$\.limits\.max_tool_calls"):
        load_manifest(path)
