"""The common mistakes a new user makes, each answered with where and what to do.

Each plan below is written by hand with one mistake and given to the real ``seawall``
command; the message must name the file and place (line, and column for broken TOML),
say what is wrong in one sentence, and suggest the nearest name the user meant.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from seawall.session.step_types import load_schema

GOOD_RUNNER = '[runners.farewell]\nkind = "command"\nargv = ["true"]\n'
TASK_A = '[[task]]\nid = "a"\nprompt = "p"\n'
TASK_ALPHA = '[[task]]\nid = "alpha"\nprompt = "p"\n'


def _seawall(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "seawall", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


MISTAKES = {
    "broken TOML": (
        '[session]\nname = "x"\nfoo = [1,\n',
        ["plan", "plan.toml"],
        "plan.toml:4:1: not valid TOML: Invalid value",
    ),
    "an unclosed string": (
        '[session]\nname = "x\n',
        ["plan", "plan.toml"],
        "plan.toml:2:10: not valid TOML: Illegal character",
    ),
    "a union's wrong type": (
        '[session]\nname = "x"\nmax_turns = "ten"\n[[task]]\nid = "a"\nprompt = "p"\n',
        ["plan", "plan.toml"],
        "plan.toml:3, field 'session.max_turns': must be a whole number or 'auto', not 'ten'",
    ),
    "a misspelled runner": (
        f'[session]\nname = "x"\nagent = "farewel"\n{GOOD_RUNNER}{TASK_A}',
        ["plan", "plan.toml"],
        "field 'session.agent': unknown runner 'farewel'; did you mean 'farewell'?",
    ),
    "a misspelled dependency": (
        f'[session]\nname = "x"\nagent = "farewell"\n{GOOD_RUNNER}'
        '[[task]]\nid = "alpha"\nprompt = "p"\n'
        '[[task]]\nid = "b"\nprompt = "p"\ndepends_on = ["alpah"]\n',
        ["plan", "plan.toml"],
        "task 'b', field 'depends_on[0]': unknown dependency 'alpah'; did you mean 'alpha'?",
    ),
    "a misspelled task to prompt": (
        f'[session]\nname = "x"\nagent = "farewell"\n{GOOD_RUNNER}{TASK_ALPHA}',
        ["prompt", "plan.toml", "alhpa"],
        "'alhpa' is not a task of plan.toml; did you mean 'alpha'? (tasks: alpha)",
    ),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_common_mistake_is_answered_with_where_and_what(mistake: str, tmp_path: Path) -> None:
    text, args, expected = MISTAKES[mistake]
    (tmp_path / "plan.toml").write_text(text)
    done = _seawall(*args, cwd=tmp_path)
    assert done.returncode != 0
    assert expected in done.stderr, done.stderr


def test_a_schema_is_found_by_its_short_name_and_an_unknown_one_is_named() -> None:
    assert load_schema("next") == load_schema("seawall.next/1")
    with pytest.raises(
        KeyError, match=r"no schema 'nxt': seawall ships .*seawall\.next/1 \(next\)"
    ):
        load_schema("nxt")


def test_outside_a_repository_nothing_is_said_of_a_session(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(f'[session]\nname = "x"\nagent = "farewell"\n{GOOD_RUNNER}{TASK_A}')
    done = _seawall("run", str(plan), cwd=tmp_path)
    assert done.returncode != 0
    assert "session" not in done.stderr, done.stderr
    assert f"{tmp_path} is not inside a git repository: run seawall from one" in done.stderr
    gone = _seawall("run", str(plan), "--repo", str(tmp_path / "nope"), cwd=tmp_path)
    assert f"{tmp_path / 'nope'} does not exist" in gone.stderr, gone.stderr


def test_a_missing_extra_names_an_install_line_that_works_offline_of_the_index() -> None:
    from seawall.errors import MissingExtraError

    message = str(MissingExtraError(package="PyGithub", extra="github", purpose="The tracker"))
    assert "pip install 'PyGithub>=2.3'" in message  # the extra's own requirement
    assert "pip install '.[github]'" in message
    assert "seawall[" not in message  # seawall is not on the package index
