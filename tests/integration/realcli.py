"""Fixtures for tests of the real Claude Code, Codex and opencode CLIs against scripted
models.

``agent_clis`` installs the pinned CLIs (once per machine, see ``tests.fakes.agent_clis``)
and puts them on PATH; ``claude_env`` / ``codex_env`` / ``opencode_env`` give an
environment that points a CLI at a scripted model server and keeps its state (HOME,
CODEX_HOME, the XDG directories) in the test's temporary directory. Import the fixtures
into a test module to use them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.agent_clis import AgentClis, NpmMissing, install_agent_clis
from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.gemini_server import GeminiServer
from tests.fakes.openai_server import OpenAIResponsesServer, codex_home, opencode_config

__all__ = [
    "agent_clis",
    "anthropic",
    "claude_env",
    "codex_env",
    "gemini",
    "gemini_env",
    "live_processes",
    "openai",
    "opencode_env",
]


@pytest.fixture(scope="session")
def agent_clis() -> AgentClis:
    try:
        return install_agent_clis()
    except NpmMissing as exc:
        pytest.skip(f"the real agent CLIs cannot be installed: {exc}")


@pytest.fixture
def anthropic() -> Iterator[AnthropicServer]:
    with AnthropicServer() as server:
        yield server


@pytest.fixture
def openai() -> Iterator[OpenAIResponsesServer]:
    with OpenAIResponsesServer() as server:
        yield server


@pytest.fixture
def gemini() -> Iterator[GeminiServer]:
    with GeminiServer() as server:
        yield server


def _base_env(agent_clis: AgentClis, home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": f"{agent_clis.bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "NO_COLOR": "1",
    }


@pytest.fixture
def claude_env(
    agent_clis: AgentClis,
    anthropic: AnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """The variables that run the real ``claude`` against ``anthropic``; also set in
    this process's environment, so runners and ``seawall`` processes inherit them."""
    env = _base_env(agent_clis, tmp_path / "claude-home")
    env |= {
        "ANTHROPIC_BASE_URL": anthropic.origin,
        "ANTHROPIC_API_KEY": "sk-ant-scripted",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def codex_env(
    agent_clis: AgentClis,
    openai: OpenAIResponsesServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """The variables that run the real ``codex`` against ``openai`` (``CODEX_HOME`` in
    the test's directory; ``TMPDIR`` beside it, since Codex will not put its sandbox
    helpers under the temporary directory)."""
    env = _base_env(agent_clis, tmp_path / "codex-user")
    scratch = tmp_path / "codex-tmp"
    scratch.mkdir()
    env |= {
        "CODEX_HOME": str(codex_home(tmp_path / "codex-home", openai.origin)),
        "SEAWALL_FAKE_OPENAI_KEY": "sk-scripted",
        "TMPDIR": str(scratch),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def opencode_env(
    agent_clis: AgentClis,
    openai: OpenAIResponsesServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """The variables that run the real ``opencode`` against ``openai`` (Chat Completions
    through an OpenAI-compatible provider given in ``OPENCODE_CONFIG_CONTENT``), offline:
    no model list fetched, no default plugins installed, no updates."""
    home = tmp_path / "opencode-home"
    env = _base_env(agent_clis, home)
    env |= {
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "OPENCODE_CONFIG_CONTENT": opencode_config(openai.origin),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def gemini_env(
    agent_clis: AgentClis,
    gemini: GeminiServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """The variables that run the real ``gemini`` against ``gemini`` (an API key the
    settings in its HOME say to use, the scripted server as the API's base), offline."""
    home = tmp_path / "gemini-home"
    env = _base_env(agent_clis, home)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    env |= {"GEMINI_API_KEY": "scripted", "GOOGLE_GEMINI_BASE_URL": gemini.origin}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def live_processes(marker: str, *, within: Path | None = None) -> list[str]:
    """``"<pid>: <command line>"`` of the live processes whose command line contains
    ``marker`` (zombies, which have none, are not alive); with ``within``, only those
    whose environment names it (a test's temporary directory: its CLI's home is there),
    so the processes of tests running beside it do not count."""
    found: list[str] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes() if within is not None else b""
        except OSError:
            continue
        text = raw.replace(b"\0", b" ").decode("utf-8", "replace")
        ours = within is None or str(within).encode() in environ
        if ours and marker in text and "pytest" not in text and entry.name != str(os.getpid()):
            found.append(f"{entry.name}: {text}")
    return found
