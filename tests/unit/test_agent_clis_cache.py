"""The installed agent CLIs can be shared between checkouts through one cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.agent_clis import CLAUDE_CODE, CODEX, OPENCODE, install_agent_clis


def test_a_shared_cache_with_the_pinned_versions_is_used_without_installing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared-clis"
    for name, version in (CLAUDE_CODE, CODEX, OPENCODE):
        package = shared / "node_modules" / name
        package.mkdir(parents=True)
        (package / "package.json").write_text(json.dumps({"name": name, "version": version}))
    monkeypatch.setenv("SEAWALL_AGENT_CLIS", str(shared))
    monkeypatch.setenv("PATH", str(tmp_path / "no-npm-here"))  # an install would fail
    clis = install_agent_clis()
    assert clis.bin_dir == shared / "node_modules" / ".bin"
    assert clis.claude == shared / "node_modules" / ".bin" / "claude"
