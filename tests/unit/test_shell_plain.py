"""The plain-line reading of the shell reader gives exactly what the full grammar gives.

``read_line`` reads a line of plain words, single quotes, list operators and
redirections by splitting it at its spaces or cutting it with one regular expression;
every other line goes through the recursive-descent grammar. The two must agree on
every line: the same simple commands (argv, flags, wrappers, subshell marks), the same
bare assignments, the same error.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seawall.events import ToolCall, shell_command
from seawall.shell import ShellLine, ShellParseError, read_line
from seawall.shell.grammar import _Parser
from seawall.shell.plain import PLAIN_LINE
from seawall.transcripts import TranscriptReader
from tests.bench.bench_detectors import synthetic_mix
from tests.bench.bench_shell_grammar import corpus_lines, mutants
from tests.fixtures_path import transcript_files

Outcome = tuple[str, object]


def _full_grammar(command: str) -> Outcome:
    """The recursive-descent grammar alone, never the plain-line reading."""
    try:
        parser = _Parser(command, out=[], env={}, depth=0)
        parser.parse_all()
    except ShellParseError as error:
        return "error", str(error)
    return "line", ShellLine(commands=parser.out, assignments=tuple(parser.bare))


def _read(command: str) -> Outcome:
    try:
        return "line", read_line(command)
    except ShellParseError as error:
        return "error", str(error)


def _commands_in(lines: list[str]) -> set[str]:
    feed = TranscriptReader().feed
    found: set[str] = set()
    for line in lines:
        for event in feed(line):
            if type(event) is ToolCall:
                command = shell_command(event)
                if command is not None:
                    found.add(command)
    return found


def _fixture_commands() -> set[str]:
    found: set[str] = set()
    for path in transcript_files():
        if path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            found |= _commands_in(lines)
    return found


def _assert_same(commands: set[str]) -> int:
    """Assert both readings agree on every command; the number read the plain way."""
    plain = 0
    for command in sorted(commands):
        assert _read(command) == _full_grammar(command), command
        plain += PLAIN_LINE.fullmatch(command) is not None
    return plain


def test_the_fixture_transcripts_read_the_same() -> None:
    commands = _fixture_commands()
    if not commands:
        pytest.skip("the fixture transcripts are not present")
    assert _assert_same(commands) > 0


def test_the_scope_corpus_and_its_mutants_read_the_same() -> None:
    lines = corpus_lines()
    assert _assert_same(set(lines) | set(mutants(lines, 3000, seed=5))) > 0


def test_the_synthetic_agents_commands_read_the_same() -> None:
    commands = _commands_in([line for agent in synthetic_mix(12, 150) for line in agent])
    assert _assert_same(commands) > len(commands) // 2


@pytest.mark.parametrize(
    "command",
    [
        "if true; then ls; fi",
        "a ;; b",
        "A=1 B='x y' env C=2 git status",
        "A=1; export B=2 && bash -c 'ls $A' | tail",
        "sleep 5 & wait",
        "a | | b; c |& d",
        "timeout 5 xargs -n1 rm",
        "echo 'unterminated",
        "for x in a b; do echo x; done",
        "git log --format=%h%n -- ~/x",
        "''",
        "\t ls\n\n pwd ;",
        "done",
        "select",
        "find . -name x -exec rm '{}' ';'",
        "pytest -x > /tmp/run.log 2>&1 &",
        "npm test 2>&1 | tail -5",
        "2>x ls; >y; A=1>z env; cat<in>>out 2 >e 3<&0 &>all &>>more",
        "ls >",
        "ls > ;",
        "ls >\nx",
        "cat <<EOF\nhi\nEOF",
        "bash <<< 'ls -l' > out",
        "if >x true; then :; fi",
        "git log >& -",
        "ls 1>'a b' '2'>c",
    ],
)
def test_lines_at_the_edge_read_the_same(command: str) -> None:
    assert _read(command) == _full_grammar(command)


_PLAIN_CHARS = st.sampled_from(list("abcgitxyz019_./:=@%+,-~"))
_SPECIAL_WORDS = [
    "if", "fi", "do", "done", "for", "case", "function", "then", "A=1", "B='x y'",
    "env", "sudo", "timeout", "xargs", "bash", "-c", "sh", "export", "exec", "nohup",
    "git", "cd", "pytest", "sleep", "eval", "find", "-exec", "{}", "\\;", "$X", "*.py",
]  # fmt: skip
_WORD = st.one_of(
    st.text(_PLAIN_CHARS, min_size=1, max_size=6),
    st.text(st.sampled_from(list('ab $;|&"\\*()#\n')), max_size=5).map(lambda t: f"'{t}'"),
    st.sampled_from(_SPECIAL_WORDS),
)
_GAP = st.sampled_from([" ", "  ", "\t", " && ", "||", " | ", ";", " ; ", "\n", " & ", "|&",
                        ";;", ";&", "'", "", ">", " > ", ">>", "2>&1", "<", "&>", "<<<",
                        "<<", ">&", ">|", "<>", "1>", "2"])  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(_WORD, _GAP), max_size=10))
def test_random_plain_lines_read_the_same(pieces: list[tuple[str, str]]) -> None:
    command = "".join(word + gap for word, gap in pieces)
    assert _read(command) == _full_grammar(command)


_PART = st.one_of(
    st.text(_PLAIN_CHARS, min_size=1, max_size=5),
    st.sampled_from(
        [
            "sudo", "env", "A=1", "B+=2", "export", "C=3", "bash", "-c", "'ls -l'", "sh", "timeout",
            "5", "xargs", "-n1", "nohup", "time", "nice", "-n", "exec", "command", "eval", "find",
            "-exec", "uv", "run", "if", "done", "for", "2>&1", ">/dev/null", "2>/dev/null",
            "&>x", "1>&2", ">>log", "a>b", "<in", "x<>y", "2>", "3<", "<<<", "<<", "<<-", "&&",
            "||", "|", "|&", ";", "&", ";;", ";&", ">", ">>", ">&", ">|", "&>", "&>>", "<&",
            "a;b", "a&&b", "a|b>c", "2>&1;", "x'y'", "'a b'", "&&&", ">>>", "2>>x", "'2'>x",
        ]
    ),
)  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(st.lists(st.tuples(_PART, st.sampled_from([" ", "  ", "", "\t", " \n"])), max_size=9))
def test_random_spaced_lines_read_the_same(pieces: list[tuple[str, str]]) -> None:
    """Lines of parts apart at spaces (split at them), with redirections glued to their
    words, wrappers, assignments and descriptors, read as the full grammar reads them."""
    command = "".join(part + gap for part, gap in pieces).rstrip("\t\n")
    assert _read(command) == _full_grammar(command)


def test_split_lines_read_the_same() -> None:
    """Each way a line may be split at its spaces or read by the tokenizer."""
    for command in [
        "sleep 5 && tail -n 20 /tmp/run1234.log",
        "pytest -x > /tmp/run1234.log 2>&1",
        "ls src",
        "  ls   src  ",
        "npm test 2>&1 | tail -5 &",
        "cmd >/dev/null 2>&1; echo done",
        "make &>build.log || cat build.log",
        "ls > 2>x",
        "ls >a>b <c",
        "cat x>'a>b'",
        "sudo -u root timeout 5 nohup time xargs -n1 rm",
        "A=1 export B=2 && bash -c 'echo $A $B' | env C=3 sh",
        "bash <<< 'ls -l' 2>/dev/null",
        "ls 2>",
        "ls 2> x",
        "x 2<<EOF",
        "a 3<&0 4<>f 5>|g",
    ]:
        assert _read(command) == _full_grammar(command), command


def test_the_plain_pattern_takes_no_special_character() -> None:
    """Every character that quotes, expands, globs, redirects, groups or comments sends
    the line to the full grammar; redirections stay plain."""
    for char in '()\\"$`*?[]{}#!':
        assert PLAIN_LINE.fullmatch(f"ls a{char}b") is None, char
    assert PLAIN_LINE.fullmatch("ls 'a$b' && git -C x status | tail -n 2; pwd &") is not None
    assert read_line("ls 'a b' | wc").commands[0].argv == ("ls", "a b")
    assert read_line("ls 'a b' | wc").commands[1].subshell
