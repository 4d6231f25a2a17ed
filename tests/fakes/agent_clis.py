"""The real Claude Code, Codex, opencode and Gemini CLIs, from the npm registry, for the tests.

Pinned versions go into a project-local cache (``<project>/.cache/agent-clis``, ignored
by git; ``SEAWALL_AGENT_CLIS`` names another, so several checkouts or CI jobs share one
install) the first time a test needs them; a file lock makes concurrent test processes
install once. Without ``npm`` on PATH the tests that need the CLIs are skipped (the
reason says so); a failed install is an error, never a silent skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.locks import locked

__all__ = [
    "CLAUDE_CODE",
    "CODEX",
    "GEMINI",
    "OPENCODE",
    "PROJECT",
    "AgentClis",
    "NpmMissing",
    "install_agent_clis",
]

PROJECT = Path(__file__).resolve().parents[2]
CLAUDE_CODE = ("@anthropic-ai/claude-code", "2.1.197")
CODEX = ("@openai/codex", "0.171.0")
OPENCODE = ("opencode-ai", "1.18.33")
GEMINI = ("@google/gemini-cli", "0.61.0")
_INSTALL_TIMEOUT_S = 600


class NpmMissing(RuntimeError):
    """npm is not on PATH, so the real CLIs cannot be installed."""


@dataclass(frozen=True, slots=True)
class AgentClis:
    """Where the installed CLIs are."""

    bin_dir: Path

    @property
    def claude(self) -> Path:
        return self.bin_dir / "claude"

    @property
    def codex(self) -> Path:
        return self.bin_dir / "codex"

    @property
    def opencode(self) -> Path:
        return self.bin_dir / "opencode"

    @property
    def gemini(self) -> Path:
        return self.bin_dir / "gemini"


def _installed_version(cache: Path, package: str) -> str | None:
    try:
        data = json.loads((cache / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def install_agent_clis(cache: Path | None = None) -> AgentClis:
    """Install the pinned CLIs into ``cache`` (once; later calls only check versions)."""
    shared = os.environ.get("SEAWALL_AGENT_CLIS")
    cache = cache or (Path(shared) if shared else PROJECT / ".cache" / "agent-clis")
    cache.mkdir(parents=True, exist_ok=True)
    clis = AgentClis(bin_dir=cache / "node_modules" / ".bin")
    with locked(cache / ".lock"):
        missing = [
            f"{name}@{version}"
            for name, version in (CLAUDE_CODE, CODEX, OPENCODE, GEMINI)
            if _installed_version(cache, name) != version
        ]
        if not missing:
            return clis
        npm = shutil.which("npm")
        if npm is None:
            raise NpmMissing(f"npm is not on PATH; cannot install {', '.join(missing)}")
        if not (cache / "package.json").exists():
            (cache / "package.json").write_text('{"name": "agent-clis", "private": true}\n')
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), *missing],
            capture_output=True,
            text=True,
            timeout=_INSTALL_TIMEOUT_S,
            env={**os.environ, "npm_config_update_notifier": "false"},
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"npm install {' '.join(missing)} failed ({done.returncode}):\n"
                f"{done.stderr[-4000:]}"
            )
    return clis
