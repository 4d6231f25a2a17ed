"""Every command and subcommand explains itself, and `--json` errors are JSON."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from seawall.cli import build_parser, main


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str | None, argparse.ArgumentParser]]:
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action.choices.items():
            yield (*path, name), helps.get(name), sub
            yield from _commands(sub, (*path, name))


def test_every_command_and_subcommand_has_help_text() -> None:
    commands = list(_commands(build_parser()))
    assert len(commands) > 20  # the walk reached the nested groups
    missing = [" ".join(path) for path, text, _ in commands if not (text and text.strip())]
    assert missing == []
    undescribed = [" ".join(path) for path, _, sub in commands if not sub.description]
    assert undescribed == []
    for path, _, sub in commands:
        for action in sub._actions:
            if action.option_strings and action.help is None:
                pytest.fail(f"seawall {' '.join(path)} {action.option_strings[0]}: no help")


def test_json_errors_are_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["status", "--json", "--repo", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["error"]["type"] == "StateError"
    assert str(tmp_path) in out["error"]["message"] and out["error"]["exit_code"] == 1


def test_json_usage_errors_are_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["status", "--json", "--no-such-option"])
    captured = capsys.readouterr()
    error = json.loads(captured.out)["error"]
    assert code == 2 and error["type"] == "usage" and "--no-such-option" in error["message"]


def test_plan_errors_name_the_file_task_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('[session]\nname = "x"\n\n[[task]]\nid = "t1"\nprompt = "p"\nscop = []\n')
    code = main(["plan", str(plan), "--json"])
    error = json.loads(capsys.readouterr().out)["error"]
    assert code == 1
    assert error["file"] == str(plan) and error["task"] == "t1" and error["field"] == "scop"
    assert error["line"] == 7 and error["code"] == "plan"


def test_errors_without_json_stay_prose(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "seawall", "status", "--repo", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("seawall: error: no seawall session")
