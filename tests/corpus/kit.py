"""The scope corpus: its cases (``scope_cases.toml``), the repository they run in, the
exact hook input Claude Code sends, and two ways to answer it: the real
``seawall hook pre-tool-use`` process, and its entry function in process."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seawall.hooks import pre_tool_use
from seawall.hooks.protocol import BLOCK_EXIT
from seawall.model import BreakerLimits, Enforcement, Isolation, Task, Wave
from seawall.scope.manifest import build_manifest, write_manifest

CASES_FILE = Path(__file__).with_name("scope_cases.toml")
SEAWALL = str(Path(sys.executable).with_name("seawall"))
SESSION = "corp"
_ROOMY = BreakerLimits(
    max_edits_without_verify=10**6,
    max_repeat_identical=10**6,
    max_same_command_failures=10**6,
    max_consecutive_failures=10**6,
    max_consecutive_polls=10**6,
    max_tool_calls=10**6,
    tool_budget_warn_fraction=1.0,
    max_files_touched=10**6,
    max_session_minutes=10.0**6,
)  # the corpus judges the scope barrier, not the breakers


@dataclass(frozen=True, slots=True)
class Case:
    """One hook input and what the hook must answer."""

    cls: str
    index: int
    expect: str  # "deny" | "allow"
    tool: str
    tool_input: Mapping[str, Any]
    cwd: str = "."
    who: str = "agent"  # agent | lead | lead-agent
    level: str = "strict"
    tamper: bool = False

    @property
    def id(self) -> str:
        return f"{self.cls}-{self.index}-{self.expect}"


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    """Every case of the corpus: each pair's bad side (deny) and good side (allow)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    cases: list[Case] = []
    for cls, section in data.items():
        for index, pair in enumerate(section["pairs"]):
            cases.extend(_pair(cls, index, pair))
    return cases


def _pair(cls: str, index: int, pair: object) -> Iterator[Case]:
    if isinstance(pair, list):
        bad, good = pair
        yield Case(cls, index, "deny", "Bash", {"command": bad})
        yield Case(cls, index, "allow", "Bash", {"command": good})
        return
    assert isinstance(pair, dict), pair
    tool = str(pair.get("tool", "Bash"))
    cwd, who, level = pair.get("cwd", "."), pair.get("who", "agent"), pair.get("level", "strict")
    tamper = bool(pair.get("tamper", False))
    for expect, side, side_tool in (
        ("deny", pair["bad"], tool),
        ("allow", pair["good"], str(pair.get("good_tool", tool))),
    ):
        tool_input = {"command": side} if side_tool == "Bash" and isinstance(side, str) else side
        yield Case(
            cls, index, expect, side_tool, tool_input, cwd, who, level, tamper and expect == "deny"
        )


@dataclass(slots=True)
class World:
    """The repositories the corpus runs in and the environment each kind of caller has."""

    repo: Path
    lead_repo: Path
    tampered_repo: Path
    home: Path
    envs: dict[str, dict[str, str]] = field(default_factory=dict)

    def place(self, case: Case) -> Path:
        if case.tamper:
            return self.tampered_repo
        return self.lead_repo if case.who == "lead" else self.repo

    def payload(self, case: Case) -> dict[str, Any]:
        """The PreToolUse JSON exactly as Claude Code sends it."""
        root = self.place(case)
        tool_input = _fill(case.tool_input, str(root))
        return {
            "session_id": "3f1c2a9e-corpus",
            "transcript_path": str(self.home / ".claude/projects/corpus/3f1c2a9e.jsonl"),
            "cwd": str((root / case.cwd).resolve()),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": case.tool,
            "tool_input": tool_input,
        }

    def env(self, case: Case) -> dict[str, str]:
        key = "tamper" if case.tamper else case.who
        return {**self.envs[key], **({"SEAWALL_ENFORCEMENT": case.level} if case.level else {})}


def _fill(value: Any, repo: str) -> Any:
    if isinstance(value, str):
        return value.replace("{repo}", repo)
    if isinstance(value, dict):
        return {k: _fill(v, repo) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, repo) for v in value]
    return value


def build_world(root: Path) -> World:
    """Three copies of the corpus repository: the agents', a lead's, a tampered one."""
    home = root / "home"
    home.mkdir()
    world = World(
        repo=_repository(root / "repo", home),
        lead_repo=_repository(root / "lead", home),
        tampered_repo=_repository(root / "tampered", home),
        home=home,
    )
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    world.envs["agent"] = _agent_env(world.repo, base)
    world.envs["tamper"] = _agent_env(world.tampered_repo, base, tamper=True)
    world.envs["lead"] = {**base, "CLAUDE_PROJECT_DIR": str(world.lead_repo)}
    world.envs["lead-agent"] = {**base, "CLAUDE_PROJECT_DIR": str(world.repo)}
    return world


def _repository(root: Path, home: Path) -> Path:
    files = {
        "tests/auth/test_login.py": "def test_login():\n    assert True\n",
        "tests/auth/sub/keep.txt": "k\n",
        "tests/auth/forge/README": "forged manifests live here\n",
        "src/app/db.py": "DB = 1\n",
        "src/app/auth.py": "AUTH = 1\n",
        "other/y.py": "y = 1\n",
        "other/shared.py": "shared = 1\n",
        "docs/index.md": "# docs\n",
        "node_modules/.bin/jest": "#!/bin/sh\n",  # tools the repository installed
        "node_modules/.bin/tsc": "#!/bin/sh\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "tests/auth/link_out").symlink_to("../../src/app/db.py")
    (root / "tests/auth/link_dir").symlink_to("../../src")
    os.link(root / "other/shared.py", root / "tests/auth/hard.py")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "GIT_AUTHOR_NAME": "c", "GIT_AUTHOR_EMAIL": "c@example.invalid",
           "GIT_COMMITTER_NAME": "c", "GIT_COMMITTER_EMAIL": "c@example.invalid"}  # fmt: skip
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    forged = root / "tests/auth/forge/.seawall" / SESSION / "wave-1" / "scope.json"
    forged.parent.mkdir(parents=True)
    forged_scope = {
        "schema": 1,
        "session": SESSION,
        "wave": 1,
        "enforcement": "off",
        "isolation": "none",
        "repo": str(root / "tests/auth/forge"),
        "agents": {"t1": {"paths": ["**"], "workspace": "/"}},
        "commands": {"allow": ["*"], "deny": []},
    }
    forged.write_text(json.dumps(forged_scope))
    return root


def _agent_env(repo: Path, base: Mapping[str, str], *, tamper: bool = False) -> dict[str, str]:
    wave = Wave(
        number=1,
        tasks=(
            Task(id="t1", prompt="auth tests", scope=("tests/auth/",)),
            Task(id="t2", prompt="app", scope=("src/app/",)),
        ),
        isolation=Isolation.NONE,
        enforcement=Enforcement.STRICT,
        max_turns=30,
    )
    manifest = build_manifest(session=SESSION, wave=wave, repo=repo, limits=_ROOMY)
    path = write_manifest(manifest)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if tamper:  # a program the agent ran widened its own scope in the live manifest
        data = json.loads(path.read_text())
        data["agents"][0]["paths"] = ["**"]
        path.write_text(json.dumps(data))
    return {
        **base,
        "CLAUDE_PROJECT_DIR": str(repo),
        "SEAWALL_SESSION": SESSION,
        "SEAWALL_WAVE": "1",
        "SEAWALL_TASK_ID": "t1",
        "SEAWALL_MANIFEST": str(path),
        "SEAWALL_MANIFEST_SHA256": digest,
        "TMPDIR": str(_scratch(repo)),  # the agent's own, as seawall's runners make it
    }


def _scratch(repo: Path) -> Path:
    scratch = repo.parent / "seawall-agent-corpus"
    scratch.mkdir(exist_ok=True)
    return scratch


def decision_in_process(world: World, case: Case) -> tuple[str, str]:
    """The hook's entry function on the case: ("deny" | "allow", the reason shown)."""
    response = pre_tool_use.handle(world.payload(case), world.env(case))
    return _decision(response.exit_code, response.stdout, response.stderr)


def decision_of_process(
    world: World, case: Case, extra: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """The real ``seawall hook pre-tool-use`` process on the case (``extra``: more
    environment, such as where the resident decision server listens, or ``off``)."""
    done = subprocess.run(
        [SEAWALL, "hook", "pre-tool-use"],
        input=json.dumps(world.payload(case)),
        env={**world.env(case), **(extra or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return _decision(done.returncode, done.stdout, done.stderr)


def _decision(code: int, stdout: str, stderr: str = "") -> tuple[str, str]:
    if code == BLOCK_EXIT:
        return "deny", stderr or stdout
    text = stdout.strip()
    if not text.startswith("{"):
        return "allow", text
    specific = json.loads(text.splitlines()[0]).get("hookSpecificOutput", {})
    if specific.get("permissionDecision") == "deny":
        return "deny", str(specific.get("permissionDecisionReason", ""))
    return "allow", str(specific.get("additionalContext", ""))
