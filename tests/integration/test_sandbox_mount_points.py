"""The empty mount points Claude Code's sandbox makes in a lead's repository are no one's
change: an in-place review never attributes, sets aside or removes one, while an empty
file an agent wrote in the same places is judged as any other change."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from seawall.git.mount_points import is_mount_point
from tests.integration.sessionkit import make_repo, seawall, show, status


def _mount_point(path: Path) -> None:
    """What bubblewrap makes to mount over: an empty file, mode 0444."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    path.chmod(0o444)


def test_mount_points_present_at_review_are_left_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "sub/keep.txt": "k\n"})
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "marks"\nisolation = "none"\n'
        '[[task]]\nid = "root"\nprompt = "Write notes."\nscope = ["*"]\n'
    )
    prepared = seawall("wave", "prepare", str(plan), "--repo", str(repo), cwd=repo, check=True)
    session = json.loads(prepared.stdout)["session"]
    # during the wave: the agent's work, the sandbox's mount points (in the agent's
    # scope, outside every scope, under .claude/), and empty files an agent wrote
    (repo / "notes.txt").write_text("notes\n")
    marks = [".bashrc", ".mcp.json", "sub/.gitconfig", ".claude/agents"]
    for mark in marks:
        _mount_point(repo / mark)
    (repo / ".zshrc").touch()  # an agent's empty file in its scope: its change
    (repo / "sub" / ".profile").touch()  # an empty file outside every scope, writer unseen
    outputs = json.dumps({"outputs": {"root": "Wrote notes.\nSTATUS: done — notes"}})
    reviewed = seawall("wave", "review", "--repo", str(repo), cwd=repo, stdin=outputs, check=True)
    report = json.loads(reviewed.stdout)
    (agent,) = report["agents"]
    assert agent["merged"], report
    assert show(repo, "main", "notes.txt") == "notes\n"
    assert show(repo, "main", ".zshrc") == ""  # the agent's own empty file is merged
    for mark in marks:
        assert show(repo, "main", mark) is None, mark  # never the agent's
        assert (repo / mark).is_file(), mark  # never removed either
        assert stat.S_IMODE((repo / mark).stat().st_mode) == 0o444
    wave = status(repo)["waves"][0]
    # the file outside every scope no agent was seen writing: reported, left in place
    assert wave["set_aside"]["outside_scope"] == ["sub/.profile"]
    assert wave["set_aside"]["files"] == []
    assert (repo / "sub" / ".profile").is_file()
    events = (repo / ".seawall" / session / "events.jsonl").read_text()
    assert not any(mark in events for mark in (".bashrc", ".mcp.json", ".gitconfig"))


def test_what_counts_as_a_mount_point(tmp_path: Path) -> None:
    for name in (".bashrc", "pkg/.gitmodules", ".claude/skills", ".vscode", "ok.txt"):
        _mount_point(tmp_path / name)
    assert is_mount_point(tmp_path, ".bashrc")
    assert is_mount_point(tmp_path, "pkg/.gitmodules")
    assert is_mount_point(tmp_path, ".claude/skills")
    assert is_mount_point(tmp_path, ".vscode")
    assert not is_mount_point(tmp_path, "ok.txt")  # not a name the sandbox mounts over
    assert not is_mount_point(tmp_path, ".zshrc")  # absent
    (tmp_path / ".zshrc").write_text("")
    assert not is_mount_point(tmp_path, ".zshrc")  # empty, but writable: a program's
    (tmp_path / ".profile").write_text("x")
    (tmp_path / ".profile").chmod(0o444)
    assert not is_mount_point(tmp_path, ".profile")  # read-only, but not empty
    os.symlink(tmp_path / ".bashrc", tmp_path / ".zprofile")
    assert not is_mount_point(tmp_path, ".zprofile")  # a link is never one
