"""The pre-tool-use decision on Bash writes, in process (the subprocess path is in
tests/integration/test_hooks.py): every denied row has an allowed twin."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from seawall.hooks.context import HookContext
from seawall.hooks.pre_tool_use import check_call
from seawall.model import Enforcement, Isolation
from seawall.scope.enforce import Decision, Failure
from seawall.scope.manifest import AgentScope, ScopeManifest
from seawall.shell import simple_commands
from seawall.shell.writes import writes


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "src/app/sub").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "src/app/x.py").write_text("x\n")
    (tmp_path / "other/y.py").write_text("y\n")
    return tmp_path


def context(
    repo: Path, cwd: Path | None = None, level: Enforcement = Enforcement.STRICT
) -> HookContext:
    agent = AgentScope(task_id="t1", paths=("src/app/",), workspace=str(repo))
    manifest = ScopeManifest(
        session="s1", wave=1, enforcement=level, isolation=Isolation.NONE,
        repo=str(repo), agents=(agent,),
    )  # fmt: skip
    return HookContext(
        cwd=cwd or repo,
        repo=repo,
        enforcement=level,
        manifest=manifest,
        agent=agent,
        scratch=repo / "seawall-agent-t1",  # under seawall's runner: an OS layer confines it
    )


def denied(ctx: HookContext, command: str) -> bool:
    verdicts = check_call(ctx, "Bash", {"command": command})
    return any(v.decision is Decision.DENY for v in verdicts)


WRITES = [
    ("echo x > other/y.py", "echo x > src/app/y.py"),
    ("echo x >other/y.py", "echo x >src/app/y.py"),
    ("echo x >| other/y.py", "echo x >| src/app/y.py"),
    ("echo x &> other/log", "echo x &> src/app/log"),
    ("echo x 2>>other/log", "echo x 2>>src/app/log"),
    ("exec 3> other/y.py", "exec 3> src/app/y.py"),
    ("cat > 'oth'\"er\"/y.py", "cat > 'sr'\"c\"/app/y.py"),
    ("printf x > src/app/../../other/y.py", "printf x > src/app/../app/y.py"),
    ("echo x | tee -a other/log", "echo x | tee -a src/app/log"),
    ("touch other/new", "touch src/app/new"),
    ("mkdir -p other/dir", "mkdir -p src/app/dir"),
    ("rm -f other/y.py", "rm -f src/app/x.py"),
    ("rm -rf src", "rm -rf src/app/sub"),
    ("cp src/app/x.py other/", "cp other/y.py src/app/"),
    ("cp -t other src/app/x.py", "cp -t src/app other/y.py"),
    ("mv src/app/x.py other/", "mv src/app/x.py src/app/sub/"),
    ("mv other/y.py src/app/", "mv src/app/sub src/app/moved"),
    ("install -m 644 src/app/x.py other/z.py", "install -m 644 other/y.py src/app/z.py"),
    ("sed -i s/a/b/ other/y.py", "sed -i s/a/b/ src/app/x.py"),
    ("sed -i -e s/a/b/ other/y.py", "sed -i -e s/a/b/ src/app/x.py"),
    ("perl -pi -e s/a/b/ other/y.py", "perl -pi -e s/a/b/ src/app/x.py"),
    ("truncate -s 0 other/y.py", "truncate -s 0 src/app/x.py"),
    ("dd if=/dev/zero of=other/blob count=1", "dd if=/dev/zero of=src/app/blob count=1"),
    ("git rm other/y.py", "git status > src/app/plan"),
    ("git mv src/app/x.py other/x.py", "git ls-files src/app"),
    ("git apply fix.patch", "git diff -- src/app"),
    ("patch -p1 < fix.patch", "patch --dry-run -p1 < fix.patch"),
    ("echo x > /tmp/outside-file", "echo x > /dev/null"),
    ("echo x > ~/notes", "echo x 2>/dev/stderr"),
    ("echo x > $OUT", "echo x > src/app/out"),
    ('echo x > "$DIR/f"', 'echo x > "src/app/f"'),
    ("cd other && echo x > y.py", "cd src/app && echo x > y.py"),
    ("cd src/app; cd ../..; echo x > y.py", "cd src/app; cd sub; echo x > y.py"),
    ("(cd src/app); echo x > y.py", "(cd src/app); echo x > src/app/y.py"),
    ("cd src/app | true; echo x > y.py", "cd src/app | true; echo x > src/app/y.py"),
    ("cd $D && echo x > y.py", "cd src/app && echo x > /dev/null"),
    ("cd nowhere; echo x > y.py", "cd nowhere; echo x > /dev/null"),
    ("bash -c 'echo x > other/y.py'", "bash -c 'echo x > src/app/y.py'"),
    ("timeout 5 tee other/y.py < /dev/null", "timeout 5 tee src/app/y.py < /dev/null"),
    ("echo $(echo x > other/y.py)", "echo $(echo x > src/app/y.py)"),
    ("ln -s /etc src/app/etc", "ln -s sub src/app/sublink"),
    ("ln -s ../../other src/app/o", "ln -s ../app/x.py src/app/sub/l"),
    ("ln other/y.py src/app/hard", "ln src/app/x.py src/app/hard"),
    ("ln -s src/app/x.py other/l", "ln -s x.py src/app/l"),
]


@pytest.mark.parametrize(("bad", "twin"), WRITES)
def test_bash_write_is_denied_and_its_twin_allowed(repo: Path, bad: str, twin: str) -> None:
    ctx = context(repo)
    assert denied(ctx, bad), bad
    assert not denied(ctx, twin), (twin, check_call(ctx, "Bash", {"command": twin}))


def test_cd_from_a_subdirectory_cwd(repo: Path) -> None:
    ctx = context(repo, cwd=repo / "src/app/sub")
    assert not denied(ctx, "echo x > y.py")
    assert denied(ctx, "cd ../../.. && echo x > y.py")
    assert denied(ctx, "ln -s ../x ../../l")  # from the link's directory: the repository root


def test_a_hard_linked_file_is_refused(repo: Path) -> None:
    os.link(repo / "other/y.py", repo / "src/app/alias.py")
    ctx = context(repo)
    assert denied(ctx, "echo x > src/app/alias.py")
    assert not denied(ctx, "echo x > src/app/x.py")
    verdicts = check_call(ctx, "Write", {"file_path": str(repo / "src/app/alias.py")})
    assert "hard links" in verdicts[0].message


def test_unknown_writes_follow_the_matrix(repo: Path) -> None:
    (verdict,) = check_call(context(repo, level=Enforcement.WARN), "Bash", {"command": "echo > $X"})
    assert verdict.decision is Decision.WARN and verdict.failure is Failure.UNKNOWN_WRITE
    assert check_call(context(repo, level=Enforcement.OFF), "Bash", {"command": "echo > $X"}) == []


def test_written_paths_sees_the_usual_writers() -> None:
    def paths(command: str) -> list[str]:
        return [w.path for cmd in simple_commands(command) for w in writes(cmd)]

    assert paths("cp -r a b dest/") == ["dest/"]
    assert paths("mv a b dest/") == ["dest/", "a", "b"]
    assert paths("tee -a x y") == ["x", "y"]
    assert paths("sed -n p file") == []
    assert paths("git status > s.txt") == ["s.txt"]
    assert paths("ls src") == []


def test_other_tools_are_not_checked(repo: Path) -> None:
    ctx = context(repo)
    assert check_call(ctx, "Read", {"file_path": "/etc/passwd"}) == []
    assert check_call(ctx, "Grep", {"pattern": "x", "path": "/"}) == []
    (verdict,) = check_call(ctx, "Write", {"content": "no path"})
    assert verdict.failure is Failure.BAD_INPUT and verdict.decision is Decision.DENY


def test_a_link_out_of_the_workspace_is_refused_where_the_wave_only_warns(repo: Path) -> None:
    ctx = context(repo, level=Enforcement.WARN)
    assert denied(ctx, "ln -s /etc/passwd src/app/pw")
    assert denied(ctx, "ln -sr ../outside.txt src/app/out")
    assert not denied(ctx, "ln -s ../../other/y.py src/app/y")  # inside: warned, not refused
    assert not denied(ctx, "ln -s x.py src/app/alias.py")
    assert not denied(ctx, "echo x > ../outside.txt")  # a plain write there is only warned
