"""Whose call a hook answers: told by its environment, never found from ``cwd``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seawall.hooks.context import find_repository, resolve_context
from seawall.hooks.install import install_hooks
from seawall.model import Enforcement, Isolation, Task, Wave
from seawall.scope.enforce import Failure
from seawall.scope.manifest import (
    build_manifest,
    digest_path,
    load_manifest,
    manifest_digest,
    write_manifest,
)


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    wave = Wave(
        number=1,
        tasks=(Task(id="t1", prompt="p", scope=("src/",)),),
        isolation=Isolation.NONE,
        enforcement=Enforcement.STRICT,
        max_turns=5,
    )
    return write_manifest(build_manifest(session="s1", wave=wave, repo=tmp_path))


def told(path: Path, **extra: str) -> dict[str, str]:
    return {
        "SEAWALL_MANIFEST": str(path),
        "SEAWALL_MANIFEST_SHA256": manifest_digest(path),
        "SEAWALL_SESSION": "s1",
        "SEAWALL_TASK_ID": "t1",
        **extra,
    }


def test_a_named_manifest_with_its_digest_applies(manifest: Path, tmp_path: Path) -> None:
    ctx = resolve_context({"cwd": str(tmp_path / "anywhere")}, told(manifest))
    assert ctx.failure is None and ctx.task_id == "t1" and ctx.repo == tmp_path


def test_a_manifest_changed_after_it_was_handed_out_is_refused(
    manifest: Path, tmp_path: Path
) -> None:
    env = told(manifest)
    data = json.loads(manifest.read_text())
    data["agents"][0]["paths"] = ["**"]
    manifest.write_text(json.dumps(data))
    ctx = resolve_context({"cwd": str(tmp_path)}, env)
    assert ctx.failure is Failure.MANIFEST_CORRUPT and "changed after" in ctx.detail
    # without the variable the digest written beside the manifest is the reference
    lead = resolve_context({"cwd": str(tmp_path)}, {"CLAUDE_PROJECT_DIR": str(tmp_path)})
    assert lead.failure is Failure.MANIFEST_CORRUPT


@pytest.mark.parametrize(
    "path",
    ["relative/.seawall/s1/wave-1/scope.json", "/tmp/elsewhere/scope.json", "/x/.seawall/s1/w/s"],
)
def test_only_a_manifest_at_its_one_place_is_accepted(path: str, tmp_path: Path) -> None:
    ctx = resolve_context({"cwd": str(tmp_path)}, {"SEAWALL_MANIFEST": path})
    assert ctx.failure is Failure.MANIFEST_CORRUPT


def test_seawall_repo_must_agree_with_the_named_manifest(manifest: Path, tmp_path: Path) -> None:
    env = told(manifest, SEAWALL_REPO=str(tmp_path / "other"))
    assert resolve_context({"cwd": str(tmp_path)}, env).failure is Failure.MANIFEST_CORRUPT


def test_a_manifest_under_cwd_is_never_discovered(manifest: Path, tmp_path: Path) -> None:
    forged_root = tmp_path / "src/forge"
    forged = forged_root / ".seawall/s1/wave-1/scope.json"
    forged.parent.mkdir(parents=True)
    forged.write_text(manifest.read_text().replace('"src/"', '"**"'))
    ctx = resolve_context({"cwd": str(forged_root)}, {})
    assert ctx.failure is Failure.NO_SESSION and ctx.manifest is None
    assert find_repository({}) is None
    lead = resolve_context({"cwd": str(forged_root)}, {"CLAUDE_PROJECT_DIR": str(tmp_path)})
    assert lead.manifest is not None and lead.manifest.agents[0].paths == ("src/",)


def test_the_digest_is_written_beside_the_manifest(manifest: Path) -> None:
    assert digest_path(manifest).read_text().strip() == manifest_digest(manifest)
    assert load_manifest(manifest, digest="").session == "s1"


def test_hooks_install_can_name_the_session(tmp_path: Path) -> None:
    result = install_hooks(tmp_path, command="/usr/bin/seawall", session="s1")
    settings = json.loads(result.path.read_text())
    commands = [h["command"] for g in settings["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert commands == ["/usr/bin/seawall hook pre-tool-use --session s1"]
    again = install_hooks(tmp_path, command="/usr/bin/seawall")  # replaces, never duplicates
    settings = json.loads(again.path.read_text())
    assert [h["command"] for g in settings["hooks"]["PreToolUse"] for h in g["hooks"]] == [
        "/usr/bin/seawall hook pre-tool-use"
    ]
