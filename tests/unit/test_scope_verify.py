"""Post-wave verification of each agent's actual changes against its scope."""

from __future__ import annotations

import subprocess
from pathlib import Path

from seawall.model import Enforcement, Isolation
from seawall.scope.manifest import AgentScope, ScopeManifest
from seawall.scope.verify import changed_paths, verify_changes, verify_wave

CHANGED = ("src/a/x.py", "src/a/y.py", "README.md", "src/b/z.py", ".seawall/s/wave-1/scope.json")


def test_strict_excludes_out_of_scope_files_from_the_merge() -> None:
    result = verify_changes("t1", CHANGED, scope=("src/a/",), enforcement=Enforcement.STRICT)
    assert result.in_scope == ("src/a/x.py", "src/a/y.py")
    assert result.out_of_scope == ("README.md", "src/b/z.py", ".seawall/s/wave-1/scope.json")
    assert result.excluded == result.out_of_scope
    assert "not merged" in result.summary() and "README.md" in result.summary()


def test_warn_merges_and_reports() -> None:
    result = verify_changes("t1", CHANGED, scope=("src/a/",), enforcement=Enforcement.WARN)
    assert result.excluded == ()
    assert "merged" in result.summary() and "src/b/z.py" in result.summary()
    assert not result.clean


def test_off_reports_nothing() -> None:
    result = verify_changes("t1", CHANGED, scope=(), enforcement=Enforcement.OFF)
    assert result.clean and result.excluded == ()


def test_verify_wave_uses_each_agents_scope(tmp_path: Path) -> None:
    manifest = ScopeManifest(
        session="s",
        wave=1,
        enforcement=Enforcement.STRICT,
        isolation=Isolation.NONE,
        repo=str(tmp_path),
        agents=(
            AgentScope(task_id="t1", paths=("src/a/",), workspace=str(tmp_path)),
            AgentScope(task_id="t2", paths=("src/b/",), workspace=str(tmp_path)),
        ),
    )
    results = verify_wave(manifest, {"t1": ["src/a/x.py", "src/b/z.py"], "t2": ["src/b/z.py"]})
    assert [(r.task_id, r.out_of_scope) for r in results] == [("t1", ("src/b/z.py",)), ("t2", ())]


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_changed_paths_reads_the_history(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "keep.txt").write_text("1\n")
    (tmp_path / "old.txt").write_text("move me\n" * 20)
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    base = _git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "old.txt").rename(tmp_path / "new.txt")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "added.py").write_text("x\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "work")
    head = _git(tmp_path, "rev-parse", "HEAD")
    assert set(changed_paths(tmp_path, base, head)) == {"old.txt", "new.txt", "src/added.py"}
