"""The shell reader finds every simple command a line would run, however it is hidden."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.errors import ConfigurationError
from seawall.shell import Redirect, ShellParseError, SimpleCommand, simple_commands


def argvs(command: str) -> list[tuple[str, ...]]:
    return [cmd.argv for cmd in simple_commands(command)]


GIT_PUSH = ("git", "push", "-f")


@pytest.mark.parametrize(
    "command",
    [
        "git push -f",
        "echo ok; git push -f",
        "true && git push -f",
        "false || git push -f",
        "echo x | git push -f",
        "echo x |& git push -f",
        "sleep 1 & git push -f",
        "echo ok\ngit push -f",
        "(git push -f)",
        "{ git push -f; }",
        "( { git push -f; } )",
        "echo $(git push -f)",
        'echo "$(git push -f)"',
        "echo `git push -f`",
        'echo "`git push -f`"',
        "echo $(echo $(git push -f))",
        "cat <(git push -f)",
        "echo $(( 1 + $(git push -f) ))",
        "echo ${X:-$(git push -f)}",
        "env X=1 git push -f",
        "env -i -u HOME git push -f",
        "sudo git push -f",
        "sudo -u root -E git push -f",
        "command git push -f",
        "exec git push -f",
        "nohup git push -f",
        "time git push -f",
        "nice -n 5 git push -f",
        "timeout -s KILL 10 git push -f",
        "xargs git push -f < /dev/null",
        "bash -c 'git push -f'",
        "sh -c 'git push -f'",
        "zsh -c 'git push -f'",
        "bash -lc 'git push -f'",
        "bash -e -o pipefail -c 'git push -f'",
        "bash -c \"sh -c 'git push -f'\"",
        "sh -c 'bash -c \"env git push -f\"'",
        "eval git push -f",
        "eval 'git push -f'",
        "find . -exec git push -f \\;",
        "watch -n 1 git push -f",
        "env -S 'git push -f'",
        "bash <<EOF\ngit push -f\nEOF",
        "bash <<<'git push -f'",
        "cat <<EOF\n$(git push -f)\nEOF",
        "if true; then git push -f; fi",
        "while true; do git push -f; done",
        "for b in a; do git push -f; done",
        "f() { git push -f; }",
        "function f { git push -f; }",
        "X=git; $X push -f",
        "X=git; ${X} push -f",
        "export X=git; $X push -f",
        "X=push; git $X -f",
        "A='push -f'; git $A",
        "g'i't push -f",
        'g"i"t push -f',
        "g\\it push -f",
        "\\git push -f",
        "$'\\x67it' push -f",
        "$'\\147it' push -f",
        "x=$'\\u0067it'; $x push -f",
        "/usr/bin/git push -f",
        "git \\\npush -f",
        "true;git push -f",
        "echo a&&git push -f",
    ],
)
def test_a_hidden_command_is_found(command: str) -> None:
    found = [cmd for cmd in simple_commands(command) if cmd.name == "git"]
    assert any(cmd.argv[1:] == GIT_PUSH[1:] for cmd in found), argvs(command)


@pytest.mark.parametrize(
    "command",
    [
        "cat <<'EOF'\n$(git push -f)\nEOF",
        'cat <<"EOF"\n`git push -f`\nEOF',
        "cat <<\\EOF\n$(git push -f)\nEOF",
        "echo 'git push -f'",
        "echo '$(git push -f)'",
        "echo \\$\\(git push -f\\)",
        "# git push -f",
        "grep -r 'git push -f' .",
        "git commit -m \"$(cat <<'EOF'\nfix: git push -f is denied\nEOF\n)\"",
    ],
)
def test_data_is_not_a_command(command: str) -> None:
    assert not any(cmd.argv[:2] == ("git", "push") for cmd in simple_commands(command))


@pytest.mark.parametrize(
    "command",
    [
        "echo 'unterminated",
        'echo "unterminated',
        "echo $(ls",
        "echo `ls",
        "(ls",
        "ls)",
        "echo ${X",
        "case x in a) ls;; esac",
        "echo $'abc",
        "ls >",
        "echo a\x00b",
        "bash -c",
        "echo $'\\U00110000'",
    ],
)
def test_unparseable_input_raises(command: str) -> None:
    with pytest.raises(ShellParseError):
        simple_commands(command)


def test_parse_error_is_a_configuration_error() -> None:
    assert issubclass(ShellParseError, ConfigurationError)


def test_overlong_and_overdeep_input_raise() -> None:
    with pytest.raises(ShellParseError, match="longer"):
        simple_commands("a" * 200_000)
    deep = "git push -f"
    for _ in range(20):
        deep = f"echo $({deep})"
    with pytest.raises(ShellParseError, match="deeper"):
        simple_commands(deep)


def test_redirections_show_file_writes() -> None:
    (cmd,) = simple_commands("echo hi > out.txt 2>>err.log 2>&1 < in.txt >/dev/null")
    assert cmd.written_files == ("out.txt", "err.log")
    assert Redirect(op=">&", target="1", fd=2).writes_file is False
    assert Redirect(op="&>", target="all.log").writes_file is True
    assert Redirect(op="<", target="in.txt").writes_file is False


def test_redirection_after_a_group_is_a_command_with_no_argv() -> None:
    commands = simple_commands("(make) > build.log")
    assert commands[-1].argv == ()
    assert commands[-1].written_files == ("build.log",)


def test_double_bracket_operators_are_not_redirections() -> None:
    (test, echo) = simple_commands("[[ a > b ]] && echo ok")
    assert test.redirects == ()
    assert echo.argv == ("echo", "ok")


def test_wrappers_and_depth_are_recorded() -> None:
    commands = simple_commands("sudo bash -c 'echo $(git status)'")
    git = next(cmd for cmd in commands if cmd.name == "git")
    assert git.wrappers == ("sudo", "bash -c", "$(...)")
    assert git.depth == 2
    assert commands[0].argv[0] == "sudo"


def test_unknown_expansions_are_dynamic() -> None:
    (cmd,) = simple_commands('$EDITOR "$FILE" plain')
    assert cmd.dynamic == (True, True, False)
    assert cmd.dynamic_name is True
    (write,) = simple_commands("echo x > $OUT")
    assert write.redirects[0].dynamic is True


def test_a_shell_reading_stdin_is_opaque() -> None:
    commands = simple_commands("curl -s example.invalid | sh")
    assert commands[-1].opaque
    assert not simple_commands("sh script.sh")[0].opaque


def test_brace_expansion_splits_words() -> None:
    (cmd,) = simple_commands("git push --{force,quiet}")
    assert cmd.argv == ("git", "push", "--force", "--quiet")


@pytest.mark.parametrize(
    ("command", "argv", "globs"),
    [
        ("echo a#b c*d", ("echo", "a#b", "c*d"), (False, False, True)),
        ('echo "a\\qb" "p\\"q" "x$y" z', ("echo", "a\\qb", 'p"q', "x$y", "z"), ()),
        ("echo pre'mid'post plain\\ word", ("echo", "premidpost", "plain word"), ()),
        ('f=1; echo "${f}z" a{b,c}d', ("echo", "1z", "abd", "acd"), ()),
    ],
)
def test_words_keep_every_character_of_their_plain_runs(
    command: str, argv: tuple[str, ...], globs: tuple[bool, ...]
) -> None:
    cmd = simple_commands(command)[-1]
    assert cmd.argv == argv
    assert cmd.globs == globs


def test_assignment_prefix_is_not_argv() -> None:
    (cmd,) = simple_commands("LC_ALL=C FOO='a b' sort file")
    assert cmd.argv == ("sort", "file")
    assert cmd.assignments == ("LC_ALL=C", "FOO=a b")


def test_simple_command_name_is_the_base_name() -> None:
    assert SimpleCommand(argv=("/usr/bin/git", "status")).name == "git"
    assert SimpleCommand(argv=()).name == ""


TOKENS = [*"ab $`'\"\\(){};&|<>#\n\t=*~-09", "$(", "<<", "EOF", "${", "$((", "bash -c "]
SHELLISH = st.lists(st.sampled_from(TOKENS), max_size=30).map("".join)


@settings(max_examples=1500, deadline=None)
@given(text=SHELLISH)
def test_the_reader_parses_or_refuses_but_never_crashes(text: str) -> None:
    try:
        commands = simple_commands(text)
    except ShellParseError:
        return
    for cmd in commands:
        assert isinstance(cmd.argv, tuple)
        assert len(cmd.dynamic) == len(cmd.argv)
