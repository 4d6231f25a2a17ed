"""The check an unverified-edits trip names: the plan's, else the project's own.

The soft trip costs the agent one check, so its message names the command to run: the
plan's ``[session.breakers] verify_command``, else the first of the plan's ``checks``
that is a verify run (one test or build command alone, which clears the trip), else
the test or build command the project's own files declare (``detected_check``). The
session puts that command into the breaker limits it gives every agent's breaker
(``limits_with_check``), live and in hook processes alike.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from seawall.breakers.commands import verify_run
from seawall.model import BreakerLimits, SessionConfig

__all__ = ["check_to_run", "detected_check", "limits_with_check"]

_MAKE_TARGET = re.compile(r"^(test|check)\s*:", re.MULTILINE)
_PYTEST_CONFIG = re.compile(r"^\[tool\.pytest|^\[pytest\]|^\[tool:pytest\]", re.MULTILINE)
_READ_LIMIT = 256 * 1024  # a project file larger than this is not read for a check


def _text(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(_READ_LIMIT)
    except OSError:  # absent, a directory, unreadable: it declares nothing
        return ""


def _node_check(root: Path) -> str | None:
    text = _text(root / "package.json")
    if not text:
        return None
    try:
        package = json.loads(text)
    except ValueError:
        return None
    scripts = package.get("scripts") if isinstance(package, dict) else None
    if not isinstance(scripts, dict):
        return None
    runner = (
        "pnpm"
        if (root / "pnpm-lock.yaml").is_file()
        else "yarn"
        if (root / "yarn.lock").is_file()
        else "bun"
        if (root / "bun.lockb").is_file() or (root / "bun.lock").is_file()
        else "npm"
    )
    test = scripts.get("test")
    if isinstance(test, str) and test and "no test specified" not in test:
        return f"{runner} test" if runner != "bun" else "bun run test"
    if isinstance(scripts.get("build"), str):
        return f"{runner} run build"
    return None


def detected_check(repo: Path) -> str | None:
    """The test or build command the project at ``repo`` declares, or None.

    Read from its own files, in this order: a Makefile's ``test``/``check`` target,
    ``Cargo.toml``, ``go.mod``, ``mix.exs``, ``package.json`` scripts (``test``, else
    ``build``; the package manager from its lock file), pytest configuration
    (``pyproject.toml``, ``pytest.ini``, ``setup.cfg``, ``tox.ini``) or a ``tests``
    folder beside a ``pyproject.toml``, Gradle, Maven. Every command named here is one
    ``verify_run`` recognises, so running it clears the trip.
    """
    names = ("GNUmakefile", "makefile", "Makefile")  # the order make reads them in
    makefile = next((repo / name for name in names if (repo / name).is_file()), None)
    target = _MAKE_TARGET.search(_text(makefile)) if makefile is not None else None
    if target is not None:
        return f"make {target.group(1)}"
    if (repo / "Cargo.toml").is_file():
        return "cargo test"
    if (repo / "go.mod").is_file():
        return "go test ./..."
    if (repo / "mix.exs").is_file():
        return "mix test"
    node = _node_check(repo)
    if node is not None:
        return node
    if (repo / "pytest.ini").is_file() or any(
        _PYTEST_CONFIG.search(_text(repo / name))
        for name in ("pyproject.toml", "setup.cfg", "tox.ini")
    ):
        return "pytest"
    if (repo / "pyproject.toml").is_file() and (repo / "tests").is_dir():
        return "pytest"
    if (repo / "build.gradle").is_file() or (repo / "build.gradle.kts").is_file():
        return "./gradlew test" if (repo / "gradlew").is_file() else "gradle test"
    if (repo / "pom.xml").is_file():
        return "mvn test"
    return None


def check_to_run(config: SessionConfig, repo: Path) -> str:
    """The command an unverified-edits trip names for a session of ``config`` in
    ``repo`` ("" when neither the plan nor the project names one)."""
    if config.breakers.verify_command:
        return config.breakers.verify_command
    for check in config.checks:
        if verify_run(check):
            return check
    return detected_check(repo) or (config.checks[0] if config.checks else "")


def limits_with_check(config: SessionConfig, repo: Path) -> BreakerLimits:
    """The plan's breaker limits with the check to name filled in (``check_to_run``)."""
    limits = config.breakers
    check = check_to_run(config, repo)
    return limits if check == limits.verify_command else replace(limits, verify_command=check)
