"""The git-write finding (an agent writing git history in a shared tree): parsed,
argument-aware, surfaced on its first occurrence, with an agent's own worktree exempt."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from seawall.events import ToolCall
from seawall.model import Isolation
from seawall.stagnation import Finding, GitWriteDetector, Pattern, Source, Verdict

_ids = itertools.count()


def bash(command: str, **extra: str) -> ToolCall:
    return ToolCall(call_id=f"g{next(_ids)}", name="Bash", arguments={"command": command, **extra})


def in_place(tmp_path: Path) -> GitWriteDetector:
    return GitWriteDetector(agent="t1", workspace=tmp_path, repo=tmp_path)


@pytest.mark.parametrize(
    ("command", "write"),
    [
        ("git add src/a.py", "add"),
        ("git commit -m 'fix parser'", "commit"),
        ("git stash", "stash"),
        ("git stash push -m wip", "stash"),
        ("git push origin HEAD", "push"),
        ("git mv a.py b.py", "mv"),
        ("git rm old.py", "rm"),
        ("git reset HEAD~1", "reset"),
        ("git checkout -- src/a.py", "checkout --"),
        ("pytest && git commit -am done", "commit"),
        ("bash -c 'git push'", "push"),
        ("sudo -u dev git add .", "add"),
        ("git -C src add x.py", "add"),
        ("git -c user.name=bot commit -m x", "commit"),
        ("/usr/bin/git add x", "add"),
        ("git add -A && git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"", "add"),
    ],
)
def test_git_writes_in_the_shared_tree(tmp_path: Path, command: str, write: str) -> None:
    finding = in_place(tmp_path).observe_call(bash(command))
    assert finding is not None
    assert finding.pattern is Pattern.GIT_WRITE and finding.subject == write
    assert finding.source is Source.TAIL and finding.verdict is Verdict.SURFACE
    assert finding.occurrences == 1 and finding.error_class is None and finding.status is None


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git diff HEAD",
        "git log --oneline -5",
        "git stash list",
        "git stash show -p",
        "git checkout main",
        "git show HEAD:src/a.py",
        'echo "git commit -m x"',
        "grep -rn 'git push' docs/",
        "cat > notes.md <<'EOF'\nthen run git commit and git push\nEOF",
        "cat <<EOF\ngit add .\nEOF",
        "printf '%s\\n' 'git stash'",
        "# git commit later\nls",
    ],
)
def test_reads_and_mentions_are_not_git_writes(tmp_path: Path, command: str) -> None:
    assert in_place(tmp_path).observe_call(bash(command)) is None


def test_a_scratch_repository_is_not_the_shared_tree(tmp_path: Path) -> None:
    detector = in_place(tmp_path)
    command = "cd $(mktemp -d) && git init -q && git add . && git commit -qm scratch"
    assert detector.observe_call(bash(command)) is None


def test_another_repository_is_not_the_shared_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    detector = GitWriteDetector(agent="t1", workspace=repo, repo=repo)
    assert detector.observe_call(bash(f"git -C {tmp_path / 'other'} commit -m x")) is None
    assert detector.observe_call(bash(f"cd {tmp_path / 'scratch'} && git add .")) is None
    assert detector.observe_call(bash("git -C ../other add .")) is None
    assert detector.observe_call(bash("git add x", cwd=str(tmp_path / "elsewhere"))) is None
    inside = detector.observe_call(bash(f"cd {repo / 'src'} && git add x"))
    assert inside is not None and inside.subject == "add"


def test_only_the_first_occurrence_of_a_write_is_recorded(tmp_path: Path) -> None:
    detector = in_place(tmp_path)
    first = detector.observe_call(bash("git commit -m one"))
    assert first is not None
    assert detector.observe_call(bash("git commit -m two")) is None
    assert detector.occurrences == 2
    push = detector.observe_call(bash("git push"))
    assert push is not None and push.subject == "push"


def test_own_worktree_commits_are_allowed_stash_and_push_are_not(tmp_path: Path) -> None:
    repo, worktree = tmp_path / "repo", tmp_path / "worktrees" / "t1"
    detector = GitWriteDetector(
        agent="t1", workspace=worktree, repo=repo, isolation=Isolation.WORKTREE
    )
    for command in ("git add src/a.py", "git commit -m step", "git reset HEAD~1",
                    "git checkout -- a.py"):  # fmt: skip
        assert detector.observe_call(bash(command)) is None
    found: list[Finding | None] = [
        detector.observe_call(bash("git stash")),
        detector.observe_call(bash("git push -u origin t1")),
        detector.observe_call(bash(f"git -C {repo} add src/a.py")),
    ]
    assert [f.subject if f else None for f in found] == ["stash", "push", "add"]
    assert all(f is not None and f.pattern is Pattern.GIT_WRITE for f in found)


def test_a_worktree_inside_the_repository_is_still_the_agents_own(tmp_path: Path) -> None:
    worktree = tmp_path / ".seawall" / "worktrees" / "t1"
    detector = GitWriteDetector(
        agent="t1", workspace=worktree, repo=tmp_path, isolation=Isolation.WORKTREE
    )
    assert detector.observe_call(bash("git commit -m step")) is None
    assert detector.observe_call(bash(f"git -C {tmp_path} commit -m x")) is not None


def test_an_unparseable_command_is_not_guessed_at(tmp_path: Path) -> None:
    assert in_place(tmp_path).observe_call(bash("git commit -m 'unbalanced")) is None


def test_non_shell_tools_are_ignored(tmp_path: Path) -> None:
    call = ToolCall(call_id="w", name="Write", arguments={"file_path": "x", "content": "git push"})
    assert in_place(tmp_path).observe_call(call) is None


def test_a_cd_inside_a_nested_shell_is_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    detector = GitWriteDetector(agent="t1", workspace=repo, repo=repo)
    outside = f"bash -lc 'cd {tmp_path / 'scratch'} && git add .'"
    assert detector.observe_call(bash(outside)) is None
    inherited = f"cd {tmp_path / 'scratch'} && bash -c 'git commit -m x'"
    assert detector.observe_call(bash(inherited)) is None
    inside = detector.observe_call(bash(f"bash -lc 'cd {repo / 'pkg'} && git add .'"))
    assert inside is not None and inside.subject == "add"


def test_a_cd_inside_a_substitution_does_not_move_the_command_after_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    detector = GitWriteDetector(agent="t1", workspace=repo, repo=repo)
    finding = detector.observe_call(bash(f"echo $(cd {tmp_path}; pwd) && git add x"))
    assert finding is not None and finding.subject == "add"
