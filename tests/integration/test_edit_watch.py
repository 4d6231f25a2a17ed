"""Edit history for agents whose runner names no edits: the workspace watched.

A plain command agent (text output, no tool calls) that rewrites one file four times,
half a second apart, without committing, is a spiral from its own history, in a worktree
and in place; one that writes four different files is not; a burst is one edit; in place,
only the agent's scope is its own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from seawall.session.edit_watch import BURST_MS, watch_edits
from tests.integration.sessionkit import agents_by_wave, git, make_repo, seawall, show, status

REWRITES = """
import sys, time
from pathlib import Path
for n in range(4):
    Path("loop.txt").write_text(f"attempt {n % 2}\\n")
    time.sleep(0.5)
print("STATUS: done")
"""

SPREADS = """
import time
from pathlib import Path
for n in range(4):
    Path(f"part{n}.txt").write_text(f"part {n}\\n")
    time.sleep(0.5)
print("STATUS: done")
"""


def _plan(path: Path, *, isolation: str, script: str, scope: list[str]) -> Path:
    agent = path.parent / "agent.py"
    agent.write_text(script)
    path.write_text(
        "\n".join(
            [
                "[session]",
                'name = "watched"',
                f'isolation = "{isolation}"',
                'agent = "plain"',
                "accept_hooks_only = true",
                "[session.wave_breaker]",
                "max_rework_cycles = 0",
                "",
                "[runners.plain]",
                'kind = "command"',
                f"argv = [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]",
                "",
                "[[task]]",
                'id = "loop"',
                'prompt = "Make loop.txt right."',
                f"scope = {json.dumps(scope)}",
                "",
            ]
        )
    )
    return path


@pytest.mark.parametrize("isolation", ["worktree", "none"])
def test_a_command_agent_rewriting_one_file_is_a_spiral_from_its_own_history(
    tmp_path: Path, isolation: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"loop.txt": "start\n"})
    plan = _plan(tmp_path / "plan.toml", isolation=isolation, script=REWRITES, scope=["loop.txt"])
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
    assert done.returncode == 5, done.stdout + done.stderr  # work carried over
    loop = agents_by_wave(status(repo))[0]["loop"]
    assert loop["status"] == "spiral", loop
    assert "loop.txt changed 4×" in loop["spiral"]["summary"], loop["spiral"]
    assert loop["merged"] is False
    assert show(repo, "main", "loop.txt") == "start\n"


def test_a_command_agent_writing_different_files_is_not_a_spiral(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "r\n"})
    plan = _plan(tmp_path / "plan.toml", isolation="worktree", script=SPREADS, scope=["part*.txt"])
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    loop = agents_by_wave(status(repo))[0]["loop"]
    assert loop["status"] == "done", loop
    assert show(repo, "main", "part3.txt") == "part 3\n"
    # the history holds one checkpoint per write, each adding one file
    ref = f"refs/seawall/{status(repo)['session']}/loop"
    first = git(repo, "rev-list", "--max-parents=0", "main").strip()
    added = git(
        repo, "log", "--reverse", "--format=", "--name-only", "--diff-filter=A", ref, f"^{first}"
    )
    assert [line for line in added.splitlines() if line] == [f"part{n}.txt" for n in range(4)]


@pytest.mark.anyio
async def test_a_burst_of_writes_is_one_edit_and_only_what_belongs_is_reported(
    tmp_path: Path,
) -> None:
    bursts: list[tuple[str, ...]] = []
    stop = anyio.Event()

    async def seen(paths: tuple[str, ...]) -> None:
        bursts.append(paths)

    (tmp_path / "src").mkdir()
    async with anyio.create_task_group() as group:
        group.start_soon(
            lambda: watch_edits(
                tmp_path, belongs=lambda p: p.startswith("src/"), on_burst=seen, stop=stop
            )
        )
        await anyio.sleep(0.2)
        for n in range(5):  # five writes within one burst
            (tmp_path / "src" / "a.py").write_text(f"{n}\n")
            await anyio.sleep(0.01)
        (tmp_path / "notes.txt").write_text("not the agent's\n")
        await anyio.sleep(3 * BURST_MS / 1000 + 0.3)
        (tmp_path / "src" / "b.py").write_text("b\n")
        await anyio.sleep(3 * BURST_MS / 1000 + 0.3)
        stop.set()
    assert bursts == [("src/a.py",), ("src/b.py",)]
