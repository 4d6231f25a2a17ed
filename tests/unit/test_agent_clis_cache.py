"""The installed agent CLIs can be shared between checkouts through one cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.agent_clis import (
    CLAUDE_CODE,
    CODEX,
    GEMINI,
    OPENCODE,
    PROJECT,
    install_agent_clis,
)


def test_a_shared_cache_with_the_pinned_versions_is_used_without_installing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared-clis"
    for name, version in (CLAUDE_CODE, CODEX, OPENCODE, GEMINI):
        package = shared / "node_modules" / name
        package.mkdir(parents=True)
        (package / "package.json").write_text(json.dumps({"name": name, "version": version}))
    monkeypatch.setenv("SEAWALL_AGENT_CLIS", str(shared))
    monkeypatch.setenv("PATH", str(tmp_path / "no-npm-here"))  # an install would fail
    clis = install_agent_clis()
    assert clis.bin_dir == shared / "node_modules" / ".bin"
    assert clis.claude == shared / "node_modules" / ".bin" / "claude"


FAKE_NPM = """#!{python}
import json, sys, time
from pathlib import Path
args = sys.argv[1:]
with open({log!r}, "a") as log:
    log.write(" ".join(args) + "\\n")
time.sleep(1.0)  # an install takes a while: the other test process reaches the lock meanwhile
prefix = Path(args[args.index("--prefix") + 1])
for spec in args[args.index("--prefix") + 2 :]:
    name, _, version = spec.rpartition("@")
    (prefix / "node_modules" / name).mkdir(parents=True, exist_ok=True)
    (prefix / "node_modules" / name / "package.json").write_text(json.dumps({{"version": version}}))
"""

INSTALL = "import sys; from pathlib import Path; from tests.fakes.agent_clis import install_agent_clis; install_agent_clis(Path(sys.argv[1]))"  # noqa: E501


def test_test_processes_installing_at_once_install_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parallel test workers share the cache: the first installs, the others wait for it."""
    bin_dir, log, cache = tmp_path / "bin", tmp_path / "npm.log", tmp_path / "clis"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM.format(python=sys.executable, log=str(log)))
    npm.chmod(0o755)
    monkeypatch.delenv("SEAWALL_AGENT_CLIS", raising=False)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    workers = [
        subprocess.Popen([sys.executable, "-c", INSTALL, str(cache)], cwd=PROJECT, env=env)
        for _ in range(2)
    ]
    assert [worker.wait(timeout=60) for worker in workers] == [0, 0]
    (installed,) = log.read_text().splitlines()
    assert installed.endswith(
        " ".join(f"{name}@{version}" for name, version in (CLAUDE_CODE, CODEX, OPENCODE, GEMINI))
    )
