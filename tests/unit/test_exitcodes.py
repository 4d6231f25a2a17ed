"""The exit codes are defined once; the docs and `run --help` list exactly those."""

from __future__ import annotations

import re
from pathlib import Path

from seawall.cli import build_parser
from seawall.exitcodes import MEANINGS, ExitCode, describe, help_epilog
from seawall.unattended.outcomes import EXIT_CODE_OUTCOMES

ROOT = Path(__file__).resolve().parents[2]


def test_every_code_has_a_meaning() -> None:
    assert set(MEANINGS) == set(ExitCode)
    assert len({int(code) for code in ExitCode}) == len(ExitCode)


def test_the_sessions_doc_lists_exactly_the_codes() -> None:
    text = (ROOT / "docs" / "sessions.md").read_text()
    section = text.split("## Exit codes", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = {int(code) for code in re.findall(r"^\| (\d+) \|", section, re.MULTILINE)}
    assert rows == {int(code) for code in ExitCode}


def test_run_help_lists_every_code() -> None:
    parser = build_parser()
    run = next(
        choice
        for action in parser._subparsers._group_actions  # type: ignore[union-attr]
        for name, choice in action.choices.items()  # type: ignore[union-attr]
        if name == "run"
    )
    assert help_epilog() in run.format_help()
    for code in ExitCode:
        assert f"{int(code)} {MEANINGS[code]}" in describe()


def test_the_unattended_runner_maps_every_session_outcome_code() -> None:
    # the codes a session run ends with; errors, usage and Ctrl-C are the runner's "failed"
    not_outcomes = {ExitCode.ERROR, ExitCode.USAGE, ExitCode.INTERRUPTED}
    assert set(EXIT_CODE_OUTCOMES) == set(ExitCode) - not_outcomes
