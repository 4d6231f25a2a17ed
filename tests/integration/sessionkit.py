"""Shared helpers for end-to-end session tests: real repositories, real `seawall` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SPEC_AGENT = ROOT / "tests" / "fakes" / "agents" / "spec_agent.py"
FAKE_BIN = ROOT / "tests" / "fakes" / "bin"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository on branch main with one commit of ``files``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "seawall test")
    git(path, "config", "user.email", "test@seawall.invalid")
    git(path, "config", "commit.gpgsign", "false")
    for name, content in (files or {"README.md": "# project\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def write_plan(
    path: Path,
    *,
    session: str,
    tasks: list[dict[str, Any]],
    extra: str = "",
    agent_writes: Path | None = None,
) -> Path:
    """A plan file whose runner ``agent`` runs the spec agent with this interpreter.

    The spec agent keeps its dispatch counters (and tests their markers) beside the
    plan, outside the repository; ``agent_writes`` is the directory its sandbox lets it
    write for that (default: the plan's directory, which holds the repository too).
    """
    writable = agent_writes if agent_writes is not None else path.parent
    lines = [
        "[session]",
        session,
        'agent = "agent"',
        f"sandbox_writable = [{json.dumps(str(writable))}]",
        "accept_hooks_only = true",  # these sessions test other things on any kernel
        "",
        "[runners.agent]",
        'kind = "command"',
        f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(SPEC_AGENT))}]",
        extra,
    ]
    for task in tasks:
        lines.append("\n[[task]]")
        for key, value in task.items():
            lines.append(f"{key} = {json.dumps(value)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def seawall(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    check: bool = False,
    timeout: float = 120,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``seawall`` CLI as a separate process."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("SEAWALL_KILL_AT", None) if "SEAWALL_KILL_AT" not in (env or {}) else None
    done = subprocess.run(
        [sys.executable, "-m", "seawall", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
    )
    if check and done.returncode != 0:
        raise AssertionError(
            f"seawall {' '.join(args)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
        )
    return done


def status(repo: Path) -> dict[str, Any]:
    done = seawall("status", "--json", "--repo", str(repo), cwd=repo, check=True)
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def agents_by_wave(data: dict[str, Any]) -> list[dict[str, dict[str, Any]]]:
    return [{a["task"]: a for a in wave["agents"]} for wave in data["waves"]]


def show(repo: Path, rev: str, path: str) -> str | None:
    done = subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=repo, capture_output=True, text=True
    )
    return done.stdout if done.returncode == 0 else None
