"""``seawall run`` sandboxes its agents: out-of-scope writes fail in the kernel, live.

A real session (the ``seawall`` CLI, a real repository, command-runner agents written
in Python) runs an in-place wave of two agents; each writes its own file, then tries
the other's, the repository root, ``.git`` and ``.seawall``, and a file outside the
repository. Every such write is refused while the agent runs, so nothing is left for
the post-wave check to take back.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from seawall.sandbox.launch import available
from tests.integration.sessionkit import agents_by_wave, git, make_repo, seawall, show, status
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(not available(), reason="this kernel has no Landlock")

AGENT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path

    sys.stdin.read()
    task = os.environ["SEAWALL_TASK_ID"]
    other = {"alpha": "beta", "beta": "alpha"}[task]
    session = os.environ["SEAWALL_SESSION"]
    attempts = {
        f"src/{task}/impl.py": f"{task} = 1\\n",
        f"src/{other}/impl.py": "stolen\\n",
        "README.md": "overwritten\\n",
        ".git/hooks/post-merge": "#!/bin/sh\\necho planted\\n",
        f".seawall/{session}/state.json": "{}",
        os.environ["OUTSIDE"]: "escaped\\n",
    }
    for path, content in attempts.items():
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(content)
            print(f"wrote {path}")
        except OSError as exc:
            print(f"refused {path}: {exc.strerror}")
    print("STATUS: done")
    """
)


def test_an_in_place_session_refuses_every_out_of_scope_write(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {"README.md": "# p\n", "src/alpha/__init__.py": "", "src/beta/__init__.py": ""},
    )
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    outside = tmp_path / "outside.txt"
    plan = tmp_path / "plan.toml"
    plan.write_text(
        "\n".join(
            [
                "[session]",
                'name = "boxed"',
                'isolation = "none"',
                'enforcement = "strict"',
                'agent = "py"',
                "",
                "[runners.py]",
                'kind = "command"',
                f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]",
                f"env = {{ OUTSIDE = {json.dumps(str(outside))} }}",
                "",
                "[[task]]",
                'id = "alpha"',
                'prompt = "Write alpha."',
                'scope = ["src/alpha/**"]',
                "",
                "[[task]]",
                'id = "beta"',
                'prompt = "Write beta."',
                'scope = ["src/beta/**"]',
            ]
        )
        + "\n"
    )
    hooks_before = sorted(p.name for p in (repo / ".git" / "hooks").iterdir())
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "agents are sandboxed by the kernel (Landlock)" in done.stderr
    data = status(repo)
    wave = agents_by_wave(data)[0]
    assert wave["alpha"]["status"] == "done" and wave["beta"]["status"] == "done"
    transcripts = {
        task: (repo / ".seawall" / data["session"] / "agents" / task).glob("*transcript.jsonl")
        for task in ("alpha", "beta")
    }
    for task, found in transcripts.items():
        lines = next(iter(found)).read_text().splitlines()
        other = "beta" if task == "alpha" else "alpha"
        assert f"wrote src/{task}/impl.py" in lines
        assert f"refused src/{other}/impl.py: Permission denied" in lines
        assert "refused README.md: Permission denied" in lines
        assert "refused .git/hooks/post-merge: Permission denied" in lines
        assert any(line.startswith("refused .seawall/") for line in lines)
        assert f"refused {outside}: Permission denied" in lines
    assert show(repo, "main", "src/alpha/impl.py") == "alpha = 1\n"
    assert show(repo, "main", "src/beta/impl.py") == "beta = 1\n"
    assert show(repo, "main", "README.md") == "# p\n"
    assert not outside.exists()
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) == hooks_before
    assert git(repo, "status", "--porcelain") == ""


NEW_FILE_AGENT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path

    sys.stdin.read()
    task = os.environ["SEAWALL_TASK_ID"]
    other = {"alpha": "beta", "beta": "alpha"}[task]
    for path in (f"src/{task}.py", f"src/{other}.py", "src/stray.py"):
        try:
            Path(path).write_text(f"{task} = 1\\n")
            print(f"wrote {path}")
        except OSError as exc:
            print(f"refused {path}: {exc.strerror}")
    print("STATUS: done")
    """
)


def test_an_absent_scope_file_grants_that_file_not_its_directory(tmp_path: Path) -> None:
    """Scopes naming files that do not exist yet: each agent creates its own, the
    kernel refuses a sibling, and a granted file left unwritten leaves nothing."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    agent = tmp_path / "agent.py"
    agent.write_text(NEW_FILE_AGENT)
    plan = tmp_path / "plan.toml"
    tasks = [
        ("alpha", '["src/alpha.py", "src/unused.py"]'),
        ("beta", '["src/beta.py"]'),
    ]
    lines = [
        "[session]",
        'name = "newfiles"',
        'isolation = "none"',
        'enforcement = "strict"',
        'agent = "py"',
        "",
        "[runners.py]",
        'kind = "command"',
        f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]",
    ]
    for task, scope in tasks:
        lines += ["", "[[task]]", f'id = "{task}"', 'prompt = "Write."', f"scope = {scope}"]
    plan.write_text("\n".join(lines) + "\n")
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    data = status(repo)
    wave = agents_by_wave(data)[0]
    assert wave["alpha"]["status"] == "done" and wave["beta"]["status"] == "done"
    for task, other in (("alpha", "beta"), ("beta", "alpha")):
        found = (repo / ".seawall" / data["session"] / "agents" / task).glob("*transcript.jsonl")
        said = next(iter(found)).read_text().splitlines()
        assert f"wrote src/{task}.py" in said
        assert f"refused src/{other}.py: Permission denied" in said
        assert "refused src/stray.py: Permission denied" in said
    assert show(repo, "main", "src/alpha.py") == "alpha = 1\n"
    assert show(repo, "main", "src/beta.py") == "beta = 1\n"
    assert not (repo / "src" / "unused.py").exists()
    assert not (repo / "src" / "stray.py").exists()
    assert git(repo, "status", "--porcelain") == ""


WAITS_FOR_A_KILL = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path

    sys.stdin.read()
    Path("src/alpha.py").write_text("alpha = 1\\n")
    print("STATUS: done", flush=True)
    print(f"supervisor {os.getppid()}", flush=True)
    time.sleep(60)  # until the test kills the supervisor, and this agent with it
    """
)


def test_a_placeholder_a_killed_supervisor_left_is_not_taken_as_the_agents_file(
    tmp_path: Path,
) -> None:
    """The supervisor dies outright after its agent wrote one of two absent scope files:
    the empty file it made for the other is seawall's (listed before the agent started),
    so the review removes it instead of taking it as the agent's empty file."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    agent = tmp_path / "agent.py"
    agent.write_text(WAITS_FOR_A_KILL)
    plan = tmp_path / "plan.toml"
    plan.write_text(
        "\n".join(
            [
                "[session]",
                'name = "placeholders"',
                'isolation = "none"',
                'enforcement = "strict"',
                'agent = "py"',
                "",
                "[runners.py]",
                'kind = "command"',
                f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]",
                "",
                "[[task]]",
                'id = "alpha"',
                'prompt = "Write."',
                'scope = ["src/alpha.py", "src/unused.py"]',
            ]
        )
        + "\n"
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "seawall", "run", str(plan), "--repo", str(repo)],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        os.kill(_supervisor_of(repo, run), signal.SIGKILL)  # no clean-up of its own
        output, _ = run.communicate(timeout=120)
    finally:
        run.kill()
        run.wait(timeout=10)
    data = status(repo)
    record = repo / ".seawall" / data["session"] / "wave-1" / "placeholders" / "alpha.txt"
    assert not record.exists(), output  # read and removed by the review
    assert not (repo / "src" / "unused.py").exists(), output
    assert "src/unused.py" not in git(repo, "ls-tree", "-r", "--name-only", "main")
    agent_ref = git(repo, "for-each-ref", "--format=%(refname)", "refs/seawall/").split()
    for ref in agent_ref:
        assert "src/unused.py" not in git(repo, "ls-tree", "-r", "--name-only", ref), ref
    assert "placeholder(s) removed: src/unused.py" in output, output


def _supervisor_of(repo: Path, run: subprocess.Popen[str]) -> int:
    """The supervisor's process id, as the agent tells it in its transcript."""

    def named() -> int:
        for transcript in (repo / ".seawall").glob("*/agents/alpha/*transcript.jsonl"):
            for line in transcript.read_text().splitlines():
                if "supervisor " in line:
                    return int(line.split("supervisor ")[1].split()[0].strip('"\\n'))
        return 0

    what = "the agent to name its supervisor"
    return wait_until(named, timeout=60, interval=0.1, what=what, process=run)
