"""The files a command visibly writes, per modelled program."""

from __future__ import annotations

import pytest

from seawall.shell import simple_commands
from seawall.shell.words import expand_braces
from seawall.shell.writes import STDIN_FILES, Write, writes


def written(command: str) -> list[Write]:
    return [w for cmd in simple_commands(command) for w in writes(cmd)]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sort -o out.txt in.txt", [Write("out.txt")]),
        ("sort --output=o in", [Write("o")]),
        ("tar -xf a.tar -C dest", [Write("dest", tree=True)]),
        ("tar xzf a.tgz", [Write(".", tree=True)]),
        ("tar -czf out.tgz src", [Write("out.tgz")]),
        ("tar -cf - src", []),
        ("tar -tf a.tar", []),
        ("unzip a.zip -d d", [Write("d", tree=True)]),
        ("unzip -l a.zip", []),
        ("curl -o f https://x.invalid", [Write("f")]),
        ("curl -O https://x.invalid", [Write(".", tree=True)]),
        ("curl https://x.invalid", []),
        ("wget -O - https://x.invalid", []),
        ("wget -P d https://x.invalid", [Write("d", tree=True)]),
        ("gzip a", [Write("a"), Write("a.gz")]),
        ("gunzip a.gz", [Write("a.gz"), Write("a")]),
        ("gzip -c a", []),
        ("chmod 644 a b", [Write("a"), Write("b")]),
        ("chmod -R u+w d", [Write("d", tree=True)]),
        ("find d -delete", [Write("d", tree=True)]),
        ("find d e -fprint out", [Write("out")]),
        ("awk -i inplace '{print}' f", [Write("f")]),
        ("uniq in out", [Write("out")]),
        ("mktemp", []),
        ("mktemp d/x.XXXX", [Write("d/x.XXXX")]),
    ],
)
def test_modelled_writers(command: str, expected: list[Write]) -> None:
    assert written(command) == expected


def test_find_exec_writes_below_its_starting_point() -> None:
    assert written("find tests/auth -name '*.pyc' -exec rm {} +") == [
        Write("tests/auth", tree=True)
    ]
    assert written("find a b -exec rm {} +")[0].dynamic  # two starting points: not one tree


def test_xargs_feeds_a_writer_files_that_are_not_known() -> None:
    assert written("ls | xargs rm") == [Write(STDIN_FILES, dynamic=True)]
    assert written("ls | xargs grep x") == []


def test_globs_are_marked_and_quoted_ones_are_not() -> None:
    (glob,) = written("rm src/*.py")
    assert glob.glob
    (literal,) = written("rm 'src/*.py'")
    assert not literal.glob


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a{b,c}d", ["abd", "acd"]),
        ("a{b,c{d,e}}f", ["abf", "acdf", "acef"]),
        ("{1..3}", ["1", "2", "3"]),
        ("x{c..a}", ["xc", "xb", "xa"]),
        ("{1..7..3}", ["1", "4", "7"]),
        ("{}", ["{}"]),
        ("a{b}c", ["a{b}c"]),
    ],
)
def test_brace_expansion(text: str, expected: list[str]) -> None:
    assert expand_braces(text) == expected


def test_brace_expansion_is_bounded() -> None:
    assert expand_braces("{1..100000}") is None
    assert expand_braces("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}") is None


def test_braces_mixed_with_quotes_are_not_known() -> None:
    (cmd,) = simple_commands('rm "src"/{a,b}.py')
    assert cmd.dynamic[1]
