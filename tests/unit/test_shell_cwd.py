"""The one working-directory model: where each command of a line runs, and its callers
(the scope's write check, the git-write detector) agreeing on it."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from seawall.breakers.commands import git_invocations
from seawall.events import ToolCall
from seawall.scope.bashwrites import PathTarget, write_targets
from seawall.shell import cwd_after, placed, simple_commands
from seawall.stagnation import GitWriteDetector

START = PurePosixPath("/repo")


def where(line: str, program: str) -> tuple[str | None, ...]:
    """The directories the first ``program`` of ``line`` may run in."""
    for cmd, places in placed(simple_commands(line), START):
        if cmd.name == program:
            return tuple(None if p is None else str(p) for p in places)
    raise AssertionError(f"no {program} in {line!r}")


def after(line: str) -> tuple[str | None, ...]:
    return tuple(None if p is None else str(p) for p in cwd_after(simple_commands(line), START))


@pytest.mark.parametrize(
    ("line", "places"),
    [
        ("git commit", ("/repo",)),
        ("cd src && git commit", ("/repo/src",)),
        ("cd /tmp/x; git commit", ("/tmp/x",)),
        ("cd src && cd .. && git commit", ("/repo",)),  # logical, as ``cd -L``
        ("cd src/../lib && git commit", ("/repo/lib",)),
        ("cd -P src/.. && git commit", ("/repo/src/..",)),  # physical: the caller resolves
        ("cd /x/y && cd ../z && git commit", ("/x/z",)),
        ("cd -- -d && git commit", ("/repo/-d",)),
        ("pushd /tmp/other && popd && git commit", ("/repo",)),
        ("pushd /tmp/other; git commit", ("/tmp/other",)),
        ("pushd /a && pushd /b && popd && git commit", ("/a",)),
        ("pushd /a && pushd /b && pushd && git commit", ("/a",)),
        ("cd /a && cd /b && cd - && git commit", ("/a",)),
        # a move to a directory not known: the command may run there (None) or, if the
        # move failed, where the shell was
        ("cd - && git commit", ("/repo", None)),  # OLDPWD: not known before a first move
        ("cd && git commit", ("/repo", None)),  # home
        ("cd $DIR && git commit", ("/repo", None)),
        ("cd ~/x && git commit", ("/repo", None)),
        ("cd a b && git commit", ("/repo", None)),  # too many arguments
        ("pushd +1 && git commit", ("/repo", None)),  # a rotation of a stack not known
        ("popd -n && git commit", ("/repo", None)),
        ("pushd /a && pushd +1 && popd && git commit", ("/a", None)),  # the stack is lost
        ("pushd $D && popd && git commit", ("/repo", None)),
        ("cd src* && git commit", ("/repo", None)),  # a glob: the caller may expand it
        # an absolute move is known wherever the shell was
        ("cd $D; cd /abs && git commit", ("/abs",)),
        ("cd $D && cd /a && git commit", ("/a",)),
        ("cd $D && cd /a && cd - && git commit", ("/a", None)),  # OLDPWD: one of two
        # a move in a subshell, a pipeline or a background job ends with it
        ("(cd /tmp/x); git commit", ("/repo",)),
        ("(pushd /tmp/x); popd; git commit", ("/repo", None)),
        ("true | cd /tmp/x; git commit", ("/repo",)),
        ("cd /tmp/x | true && git commit", ("/repo",)),
        ("cd /tmp/x & git commit", ("/repo",)),
        ("cd /a && (cd /tmp/x) && git commit", ("/a",)),
        ("x=$(cd /tmp/x && pwd) && git commit", ("/repo",)),
        # inside one: where the reader cannot tell ``(cd x; y)`` from ``(cd x) && (y)``
        ("(cd /tmp/x; git commit)", ("/repo", "/tmp/x")),
        ("(cd /tmp/x) && (git commit)", ("/repo", "/tmp/x")),
        ("cd /a && (git commit)", ("/a",)),
        ("echo $(cd /tmp/x; git commit)", ("/repo", "/tmp/x")),
        # a nested shell starts where its parent is, and keeps its moves
        ("cd src && bash -c 'cd /tmp/x && git commit'", ("/repo/src", "/tmp/x")),
        ("bash -c 'cd /tmp/x'; git commit", ("/repo",)),
        ("cd /a; bash -c 'true'; cd /b; bash -c 'git commit'", ("/b",)),  # each starts anew
        ("cd /a; echo $(pwd); cd /b; echo $(git commit)", ("/b",)),
        ("(cd /a; bash -c 'git commit')", ("/repo", "/a")),
        ("env -C /tmp/x git commit", (None,)),
    ],
)
def test_where_each_command_runs(line: str, places: tuple[str | None, ...]) -> None:
    assert where(line, "git") == places


def test_where_the_line_leaves_its_shell() -> None:
    assert after("cd /a && pushd /b && popd") == ("/a",)
    assert after("(cd /a)") == ("/repo",)
    assert after("cd /a | cat") == ("/repo",)
    assert after("cd src && cd ..") == ("/repo",)
    assert after("bash -c 'cd /a'") == ("/repo",)
    assert after("popd") == ("/repo", None)  # an empty stack: the shell refuses, or not


def test_a_move_the_caller_does_not_accept_is_only_a_possibility() -> None:
    line = simple_commands("cd missing && touch f")
    places = dict(placed(line, START, definite=lambda path: path.name != "missing"))
    assert [tuple(map(str, p)) for p in places.values()] == [
        ("/repo",),  # the cd itself
        ("/repo", "/repo/missing"),  # touch: the move may have failed
    ]


def test_the_git_detector_reads_the_same_directory() -> None:
    (pushd_popd,) = git_invocations("pushd /tmp/other && popd && git commit -m x") or []
    assert pushd_popd.cwd is None  # where the line started: the shared tree
    (back,) = git_invocations("cd /a && cd /b && cd - && git commit -m x") or []
    assert back.cwd == "/a"
    (unknown,) = git_invocations("cd $D && git commit -m x") or []
    assert unknown.cwd == "$"  # the most recently entered place is not known
    (relative,) = git_invocations("cd sub && git add -A") or []
    assert relative.cwd == "sub"


def test_the_write_check_reads_the_same_directory(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    line = f"pushd {other} && popd && echo x > out.txt"
    targets = write_targets(simple_commands(line), cwd=tmp_path)
    assert targets == [PathTarget("out.txt", tmp_path)]
    back = write_targets(
        simple_commands(f"cd {other} && cd {tmp_path} && cd - > log"), cwd=tmp_path
    )
    assert back == [PathTarget("log", tmp_path)]  # opened before the move
    dash = write_targets(
        simple_commands(f"cd {other} && cd {tmp_path} && cd - && echo > f"), cwd=tmp_path
    )
    assert dash == [PathTarget("f", other)]


def test_the_git_detector_sees_the_shared_tree_after_a_move_that_ended(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    scratch = tmp_path / "scratch"
    for line, subject in [
        (f"pushd {scratch} && popd && git commit -m x", "commit"),
        (f"(cd {scratch} && ls); git add x", "add"),
        (f"true | cd {scratch}; git stash", "stash"),
        (f"cd {scratch}; bash -c 'true'; cd {repo}; bash -c 'git push'", "push"),
        (f"cd {repo}/src && cd .. && git rm x", "rm"),
    ]:
        detector = GitWriteDetector(agent="t1", workspace=repo, repo=repo)
        found = detector.observe_call(_bash(line))
        assert found is not None and found.subject == subject, line
    detector = GitWriteDetector(agent="t1", workspace=repo, repo=repo)
    assert detector.observe_call(_bash(f"pushd {scratch} && git commit -m x")) is None


def test_the_write_check_reads_a_move_that_ended_where_it_began(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    for line in ("(cd sub); echo > f", "cd sub | true; echo > f", "cd sub && cd .. && echo > f"):
        assert write_targets(simple_commands(line), cwd=tmp_path) == [PathTarget("f", tmp_path)]
    inside = write_targets(simple_commands("(cd sub; echo x > f)"), cwd=tmp_path)
    assert inside == [PathTarget("f", tmp_path), PathTarget("f", sub)]  # each is judged


def _bash(command: str) -> ToolCall:
    return ToolCall(call_id="c", name="Bash", arguments={"command": command})
