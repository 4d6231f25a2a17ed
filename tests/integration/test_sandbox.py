"""The OS sandbox, through the real command runner: the kernel refuses writes outside.

Each agent is a real process (a shell, ``python -c``, ``make``, a compiled C program)
started by ``CommandRunner`` with a ``SandboxPolicy``; the refusal is Landlock's, seen as
``Permission denied`` with nothing changed on disk.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest

from seawall.adapters.runners.command import CommandRunner
from seawall.errors import ConfigurationError, RunnerError
from seawall.model import Enforcement
from seawall.runner import AgentRequest, AgentResult
from seawall.sandbox.launch import available
from seawall.sandbox.policy import SandboxPolicy, scope_policy, workspace_policy
from seawall.sandbox.selection import agent_sandbox, sandbox_notice
from tests.integration.runnerkit import anyio_backend
from tests.integration.sessionkit import git, make_repo

__all__ = ["anyio_backend"]

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not available(), reason="this kernel has no Landlock"),
]

C_WRITER = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "w");
        if (f == NULL) { printf("%s: %s\n", argv[i], strerror(errno)); continue; }
        fputs("written by C\n", f);
        fclose(f);
        printf("%s: written\n", argv[i]);
    }
    return 0;
}
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo",
        {"README.md": "# project\n", "src/auth/login.py": "x = 1\n", "src/app.py": "y = 2\n"},
    )


async def run_sandboxed(
    argv: Sequence[str], workspace: Path, policy: SandboxPolicy | None
) -> AgentResult:
    request = AgentRequest(
        task_id="boxed", prompt="go", workspace=workspace, session="sbx", sandbox=policy
    )
    return await CommandRunner(argv).run(request, lambda event: None)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its content (``.git`` included)."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


async def test_python_write_outside_the_scope_is_refused_by_the_kernel(
    repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    before = snapshot(repo)
    code = (
        "import sys\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        open(name, 'w').write('x')\n"
        "        print(name, 'written')\n"
        "    except OSError as exc:\n"
        "        print(name, exc.strerror)\n"
    )
    targets = ["src/app.py", "src/auth/new.py", str(outside), "src/auth/login.py"]
    result = await run_sandboxed(
        [sys.executable, "-c", code, *targets], repo, scope_policy(repo, ["src/auth/**"])
    )
    lines = result.final_text.splitlines()
    assert "src/app.py Permission denied" in lines
    assert f"{outside} Permission denied" in lines
    assert "src/auth/new.py written" in lines
    assert "src/auth/login.py written" in lines
    assert not outside.exists()
    after = snapshot(repo)
    assert after.pop("src/auth/new.py") == b"x"
    assert after.pop("src/auth/login.py") == b"x"
    before.pop("src/auth/login.py")
    assert after == before


async def test_a_make_target_cannot_write_outside(repo: Path, tmp_path: Path) -> None:
    (repo / "src" / "auth" / "Makefile").write_text(
        "all:\n\techo inside > built.txt\n\techo outside > ../../README.md\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "makefile")
    before = snapshot(repo)
    result = await run_sandboxed(
        ["make", "-C", "src/auth"], repo, scope_policy(repo, ["src/auth/"])
    )
    assert result.exit_code != 0
    assert (repo / "src/auth/built.txt").read_text() == "inside\n"
    after = snapshot(repo)
    after.pop("src/auth/built.txt")
    assert after == before  # README.md unchanged
    assert "Permission denied" in result.stderr_tail


@pytest.fixture
def c_writer(tmp_path: Path) -> Path:
    """A C program that opens each argument for writing and says what happened."""
    if shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    source = tmp_path / "writer.c"
    source.write_text(C_WRITER)
    binary = tmp_path / "writer"
    subprocess.run(["gcc", "-o", str(binary), str(source)], check=True)
    return binary


def exists(path: str | Path) -> bool:
    return Path(path).exists()


async def test_a_compiled_binary_cannot_write_outside(
    repo: Path, tmp_path: Path, c_writer: Path
) -> None:
    binary = c_writer
    before = snapshot(repo)
    result = await run_sandboxed(
        [str(binary), "src/auth/login.py", "src/app.py", str(tmp_path / "c-outside")],
        repo,
        scope_policy(repo, ["src/auth/login.py"]),
    )
    lines = result.final_text.splitlines()
    assert lines == [
        "src/auth/login.py: written",
        "src/app.py: Permission denied",
        f"{tmp_path / 'c-outside'}: Permission denied",
    ]
    assert not (tmp_path / "c-outside").exists()
    after = snapshot(repo)
    assert after.pop("src/auth/login.py") == b"written by C\n"
    before.pop("src/auth/login.py")
    assert after == before


async def test_git_and_seawall_state_stay_read_only_even_for_a_whole_repo_scope(
    repo: Path,
) -> None:
    (repo / ".seawall" / "sbx").mkdir(parents=True)
    (repo / ".seawall" / "sbx" / "state.json").write_text("{}")
    before = snapshot(repo)
    script = (
        "echo '[core] x = 1' >> .git/config; echo hook > .git/hooks/post-merge; "
        "rm -f .git/HEAD; echo forged > .seawall/sbx/state.json; "
        "mkdir -p src/auth/.seawall/forge 2>/dev/null; "
        "git commit -q --allow-empty -m sneaky; "
        "echo ok > src/app.py && echo in-scope-written"
    )
    result = await run_sandboxed(["sh", "-c", script], repo, scope_policy(repo, ["**"]))
    assert "in-scope-written" in result.final_text
    after = snapshot(repo)
    assert after.pop("src/app.py") == b"ok\n"
    before.pop("src/app.py")
    assert after == before  # .git/config, hooks, HEAD, refs and .seawall unchanged
    assert result.stderr_tail.count("Permission denied") >= 4


async def test_a_new_file_at_the_root_of_an_in_place_repo_is_refused(repo: Path) -> None:
    """The documented limit of the kernel's grants: the root holds ``.git``."""
    result = await run_sandboxed(
        ["sh", "-c", "echo x > NEW.md; echo x > src/new.py"], repo, scope_policy(repo, ["**"])
    )
    assert not (repo / "NEW.md").exists()
    assert (repo / "src" / "new.py").read_text() == "x\n"
    assert "Permission denied" in result.stderr_tail


async def test_a_worktree_agent_writes_its_worktree_but_not_the_repository(
    repo: Path, tmp_path: Path
) -> None:
    worktree = repo / ".seawall" / "worktrees" / "sbx" / "w1" / "boxed"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree))
    objects = sorted(path.name for path in (repo / ".git" / "objects").iterdir())
    refs = git(repo, "for-each-ref")
    escape = f"/tmp/seawall-sbx-escape-{uuid.uuid4().hex}"  # the shared /tmp, outside the box
    script = (
        'echo new > TOP.md && echo edit > src/app.py && echo tmp > "$TMPDIR/t" && '
        "echo worktree-written; git add -A && git commit -q -m agent; "
        f"echo other > ../../../../../README.md; echo scratch > {escape}"
    )
    result = await run_sandboxed(["sh", "-c", script], worktree, workspace_policy(worktree))
    assert "worktree-written" in result.final_text
    assert (worktree / "TOP.md").read_text() == "new\n"
    assert (repo / "README.md").read_text() == "# project\n"
    assert not exists(escape)
    assert sorted(path.name for path in (repo / ".git" / "objects").iterdir()) == objects
    assert git(repo, "for-each-ref") == refs
    assert "Permission denied" in result.stderr_tail


async def test_the_agent_temp_dir_is_its_own_and_removed_after(repo: Path) -> None:
    result = await run_sandboxed(
        ["sh", "-c", 'echo "$TMPDIR"; echo scratch > "$TMPDIR/work" && echo tmp-ok'],
        repo,
        scope_policy(repo, ["src/auth/"]),
    )
    tmpdir, status = result.final_text.splitlines()
    assert status == "tmp-ok"
    assert Path(tmpdir).name.startswith("seawall-agent-")
    assert not exists(tmpdir)


def test_strict_in_place_without_a_sandbox_is_refused_unless_accepted(tmp_path: Path) -> None:
    def choose(
        *, in_place: bool, accept: bool, missing: str, processes: bool = True
    ) -> SandboxPolicy | None:
        return agent_sandbox(
            task_id="t1",
            workspace=tmp_path,
            in_place=in_place,
            scope=("src/**",),
            enforcement=Enforcement.STRICT,
            accept_hooks_only=accept,
            starts_processes=processes,
            missing=missing,
        )

    missing = "this Linux kernel has no Landlock"
    with pytest.raises(ConfigurationError, match=r"task 't1'.*accept_hooks_only = true"):
        choose(in_place=True, accept=False, missing=missing)
    assert choose(in_place=True, accept=True, missing=missing) is None
    # an in-process agent (scripted, a callable): no sandbox applies, nothing is refused
    assert choose(in_place=True, accept=False, missing=missing, processes=False) is None
    assert choose(in_place=False, accept=False, missing=missing) is None
    assert "no OS sandbox" in sandbox_notice(accept_hooks_only=False, missing=missing)
    assert "Landlock" in sandbox_notice(accept_hooks_only=False, missing="")
    policy = choose(in_place=True, accept=False, missing="")
    assert policy is not None
    assert policy.writable == (tmp_path.resolve() / "src",)  # made, so it can be granted
    assert (tmp_path / "src").is_dir()
    assert choose(in_place=False, accept=False, missing="") == workspace_policy(tmp_path)


async def test_links_do_not_lead_out_of_the_scope(repo: Path) -> None:
    """A hard link to an outside file cannot be made; a symlink to one cannot be written."""
    before = snapshot(repo)
    script = (
        "ln README.md src/auth/hard; echo hard=$?; "
        "ln -s ../../README.md src/auth/soft; echo pwned > src/auth/soft; echo soft=$?"
    )
    result = await run_sandboxed(["sh", "-c", script], repo, scope_policy(repo, ["src/auth/"]))
    assert "hard=1" in result.final_text
    assert "soft=2" in result.final_text
    assert "Invalid cross-device link" in result.stderr_tail  # Landlock's refusal of a link
    after = snapshot(repo)
    assert after == before  # README.md unchanged; the dangling symlink is not a file here
    assert (repo / "src/auth/soft").is_symlink()


async def test_a_sandbox_the_kernel_refuses_is_a_start_failure_not_an_outcome(
    tmp_path: Path,
) -> None:
    """A namespace file cannot carry a Landlock rule: nothing starts, the runner raises."""
    marker = tmp_path / "ran"
    policy = SandboxPolicy(writable=(Path("/proc/self/ns/net"),))
    with pytest.raises(RunnerError, match=r"task 'boxed'.*sandbox could not be applied"):
        await run_sandboxed(["touch", str(marker)], tmp_path, policy)
    assert not exists(marker)


async def test_an_absent_scope_file_is_granted_alone_not_its_directory(repo: Path) -> None:
    """Scope ``src/mine.py`` (absent): the agent creates it; a sibling is refused."""
    before = snapshot(repo)
    script = "echo mine > src/mine.py; echo other > src/other.py; echo app > src/app.py"
    policy = scope_policy(repo, ["src/mine.py"], create=True)
    assert [(path.parent.name, path.name) for path in policy.new_files] == [("src", "mine.py")]
    assert not (repo / "src" / "mine.py").exists()  # made by the supervisor, not here
    result = await run_sandboxed(["sh", "-c", script], repo, policy)
    assert result.stderr_tail.count("Permission denied") == 2
    after = snapshot(repo)
    assert after.pop("src/mine.py") == b"mine\n"
    assert after == before  # no src/other.py, src/app.py unchanged


async def test_an_unused_absent_scope_file_is_removed_after_the_agent(repo: Path) -> None:
    """The empty file made for the grant goes; a user's file of that name is never
    created over nor removed."""
    before = snapshot(repo)
    policy = scope_policy(repo, ["src/unused.py", "src/mine.py"])
    (repo / "src" / "mine.py").write_text("")  # the user's own, made after the policy
    result = await run_sandboxed(["sh", "-c", "test -f src/unused.py && echo seen"], repo, policy)
    assert "seen" in result.final_text  # it existed while the agent ran
    assert not (repo / "src" / "unused.py").exists()
    assert (repo / "src" / "mine.py").read_text() == ""
    after = snapshot(repo)
    assert after.pop("src/mine.py") == b""
    assert after == before
