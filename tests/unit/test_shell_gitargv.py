"""The one git argv reader: global options as git reads them, long-option prefixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.breakers.commands import cleanup_refusal, git_invocations
from seawall.events import ToolCall
from seawall.scope.command_policy import CommandContext, CommandPolicy, FindingKind
from seawall.shell.gitargv import canonical_args, git_argv, read_git
from seawall.stagnation import GitWriteDetector


def test_global_options_and_their_values() -> None:
    read = read_git(["git", "-C", "a", "-C", "b", "-c", "x=y", "--no-pager", "push", "-f"])
    assert read.subcommand == "push" and read.args == ("-f",)
    assert read.directory == "a/b" and read.config == ("x=y",)
    assert read.global_options == ("-C", "-C", "-c", "--no-pager")
    assert read.changes_directory


@pytest.mark.parametrize(
    "argv",
    [
        ["git", "--config-env", "core.x=HOME", "commit", "-m", "x"],
        ["git", "--config-env=core.pager=HOME", "commit", "-m", "x"],
    ],
)
def test_config_env_in_both_spellings(argv: list[str]) -> None:
    read = read_git(argv)
    assert read.subcommand == "commit" and read.config[0].startswith("core.")


def test_the_git_write_detector_sees_through_config_env() -> None:
    (found,) = git_invocations("git --config-env core.x=HOME commit -m x") or []
    assert found.subcommand == "commit" and found.global_options


@pytest.mark.parametrize(
    "command",
    ["git --config-env core.x=HOME commit -m x", "git --config-env=core.x=HOME commit -m x"],
)
def test_a_commit_behind_config_env_is_a_git_write_everywhere(command: str, tmp_path: Path) -> None:
    call = ToolCall(call_id="c1", name="Bash", arguments={"command": command})
    detector = GitWriteDetector(agent="t1", workspace=tmp_path, repo=tmp_path)
    (finding,) = detector.observe_all(call)
    assert finding.subject == "commit"
    findings = CommandPolicy().check(command, CommandContext(cwd=tmp_path, agent=True))
    assert findings and findings[0].kind is FindingKind.DENIED
    assert "--config-env" in findings[0].reason
    assert cleanup_refusal(command) is not None  # a git write: no cleanup command
    assert cleanup_refusal("git log -1") is None


def test_unknown_and_missing_global_options() -> None:
    assert read_git(["git", "--forc", "push"]).unknown_global == "--forc"
    assert read_git(["git", "-C"]).missing_value
    assert read_git(["git", "--git-dir=/x", "log"]).git_dir == "/x"
    assert read_git(["git", "-C=x", "log"]).unknown_global == "-C=x"  # git wants "-C x"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["git", "reset", "--har"], ("git", "reset", "--hard")),
        (["git", "push", "--forc", "origin"], ("git", "push", "--force", "origin")),
        (["git", "push", "--force-w=x"], ("git", "push", "--force-with-lease=x")),
        (["git", "commit", "--amen", "--no-e"], ("git", "commit", "--amend", "--no-edit")),
        (["git", "-C", "x", "status"], ("git", "status")),
        (["git", "push", "--", "--forc"], ("git", "push", "--", "--forc")),
        (["git", "log", "--onel"], ("git", "log", "--onel")),  # not a subcommand we model
    ],
)
def test_long_option_prefixes_are_read_as_git_reads_them(
    argv: list[str], expected: tuple[str, ...]
) -> None:
    assert git_argv(argv) == expected


def test_an_ambiguous_prefix_reads_as_the_most_destructive_option() -> None:
    assert canonical_args("push", ["--f"]) == ("--force",)
    assert canonical_args("branch", ["--no-forc"]) == ("--no-force",)
