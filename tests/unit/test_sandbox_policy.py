"""What the sandbox grants an agent, computed from real directories and scopes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from seawall.errors import PlanError
from seawall.plan import parse_plan
from seawall.runtime.processes import end_group
from seawall.sandbox import supervise
from seawall.sandbox.launch import supervisor_argv
from seawall.sandbox.policy import cli_state_paths, scope_policy, workspace_policy
from tests.waiting import wait_until


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in ("src/auth/login.py", "src/app.py", "docs/a.md", "README.md", ".git/config"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    (root / ".seawall" / "s1").mkdir(parents=True)
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text("{}")
    (root / ".claude" / "agents.md").write_text("notes")
    return root.resolve()


def granted(repo: Path, scope: list[str], *, create: bool = False) -> set[str]:
    policy = scope_policy(repo, scope, create=create)
    return {str(path.relative_to(repo)) for path in policy.writable}


def test_globs_grant_their_literal_directory(repo: Path) -> None:
    assert granted(repo, ["src/auth/**"]) == {"src/auth"}
    assert granted(repo, ["src/*.py"]) == {"src"}
    assert granted(repo, ["docs/"]) == {"docs"}
    assert granted(repo, ["src/app.py"]) == {"src/app.py"}


def test_a_root_grant_is_split_around_protected_entries(repo: Path) -> None:
    assert granted(repo, ["**"]) == {"README.md", "docs", "src", ".claude/agents.md"}
    assert granted(repo, ["*.md"]) == {"README.md", "docs", "src", ".claude/agents.md"}


def test_protected_paths_are_never_granted(repo: Path) -> None:
    assert granted(repo, [".git/**", ".seawall/", ".claude/settings.json"]) == set()
    assert granted(repo, ["src/../.git/config"]) == set()


def test_a_missing_directory_grants_its_nearest_directory_made_on_request(
    repo: Path,
) -> None:
    assert granted(repo, ["src/new/**"]) == {"src"}
    assert granted(repo, ["pkg/new/**"]) == set()  # widening to the root: nothing
    assert not (repo / "pkg").exists()
    assert granted(repo, ["pkg/new/**"], create=True) == {"pkg/new"}
    assert scope_policy(repo, ["pkg/new/**"]).new_files == ()


def test_a_missing_file_is_granted_alone_never_its_directory(repo: Path) -> None:
    assert granted(repo, ["src/new.py"]) == {"src/new.py"}
    assert scope_policy(repo, ["src/new.py"]).new_files == (repo / "src" / "new.py",)
    assert scope_policy(repo, ["src/app.py"]).new_files == ()  # it exists: not created
    assert granted(repo, ["lib/mod.py"]) == set()  # its directory is missing too
    assert granted(repo, ["lib/mod.py"], create=True) == {"lib/mod.py"}
    assert (repo / "lib").is_dir() and not (repo / "lib" / "mod.py").exists()
    assert granted(repo, ["NEW.md"], create=True) == {"NEW.md"}  # the file, not the root
    assert granted(repo, ["src/*.py"]) == {"src"}  # a pattern: its literal directory


def test_symlinks_out_of_the_repository_grant_nothing(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / "src" / "out").symlink_to(outside)
    (repo / "loop").symlink_to(repo)
    assert granted(repo, ["src/out/**"]) == set()
    assert str(outside) not in {str(p) for p in scope_policy(repo, ["**"]).writable}
    assert granted(repo, ["**"]) == {"README.md", "docs", "src", ".claude/agents.md"}


def test_a_worktree_and_the_cli_state(tmp_path: Path) -> None:
    assert workspace_policy(tmp_path).writable == (tmp_path,)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "CODEX_HOME": str(tmp_path / "codex")}
    paths = cli_state_paths(env)
    assert paths[:3] == (home / ".claude", home / ".claude.json", tmp_path / "codex")
    assert not (home / ".claude").exists() and not (tmp_path / "codex").exists()
    assert cli_state_paths(env, create_for="codex") == paths
    assert (tmp_path / "codex").is_dir() and not (home / ".claude").exists()
    cli_state_paths(env, create_for="claude")
    assert (home / ".claude").is_dir()
    assert not (home / ".claude.json").exists()  # a file is never made


def test_the_supervisor_refuses_bad_arguments_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    argv = supervisor_argv(["touch", str(marker)], policy=None, grace=1.0)
    bad = [*argv[: argv.index("--")], "--frobnicate", *argv[argv.index("--") :]]
    done = subprocess.run(bad, capture_output=True, text=True, timeout=30)
    assert done.returncode == supervise.SANDBOX_FAILED
    assert "unknown or incomplete option '--frobnicate'" in done.stderr
    assert not marker.exists()
    missing = supervisor_argv([str(tmp_path / "no-such-agent")], policy=None, grace=1.0)
    done = subprocess.run(missing, capture_output=True, text=True, timeout=30)
    assert done.returncode == supervise.EXEC_FAILED
    assert "cannot run" in done.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_descendants_from_children_lists_and_from_a_full_scan_agree() -> None:
    child = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30"], start_new_session=True)
    try:

        def both_sleeps() -> set[int]:
            live, _ = supervise.descendants(os.getpid())
            return live if len(live) >= 2 else set()

        live = wait_until(both_sleeps, timeout=10, interval=0.01, what="both sleeps to start")
        assert child.pid in live
        assert supervise._scan(os.getpid())[0] >= live
    finally:
        end_group(child.pid, grace=1.0)  # the background sleep too
        child.wait()


def test_the_plan_names_a_bad_sandbox_path_and_reads_the_hooks_only_setting() -> None:
    tasks = '[[task]]\nid = "a"\nprompt = "p"\nscope = ["src/"]\n'
    session = '[session]\nsandbox_writable = ["~/.cargo", "/opt/cache"]\naccept_hooks_only = true\n'
    plan = parse_plan(session + tasks, path="plan.toml")
    assert plan.session.sandbox_writable == ("~/.cargo", "/opt/cache")
    assert plan.session.accept_hooks_only is True
    assert parse_plan(tasks).session.accept_hooks_only is False
    with pytest.raises(PlanError) as caught:
        parse_plan(f'[session]\nsandbox_writable = ["/ok", "cache"]\n{tasks}', path="plan.toml")
    assert caught.value.field == "session.sandbox_writable[1]"
    assert "plan.toml" in str(caught.value)
