"""The README starts with the two commands, and CI runs the test command exactly."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)


def test_readme_starts_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    first, second = _blocks()[:2]
    assert text.index(first) < text.index("## ")  # before any section
    assert first.endswith("seawall demo")
    assert "python3 -m venv .venv" in first and "python3 -m venv .venv" in second
    assert "pytest" in second


def test_ci_runs_the_readme_test_command_exactly() -> None:
    second = _blocks()[1]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert second in ci
