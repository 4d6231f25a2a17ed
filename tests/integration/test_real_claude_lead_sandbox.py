"""A lead's subagents under Claude Code's own sandbox, with the real Claude Code CLI.

The repository is prepared by seawall's documented steps only (``seawall hooks install``,
then ``seawall next PLAN --json``); a scripted model plays the lead and the Task subagent
it dispatches for the in-place wave. Both try a ``python3 -c`` write outside the
repository, which the kernel refuses (``Read-only file system``: the hook cannot see
what such a program writes), and a write inside, which works. The lead runs seawall's
own steps through Bash (they run outside the sandbox, alone); a line that would carry
another program out with them is refused by the hook. While the lead reviews, a
background command keeps the sandbox's empty mount points (``.bashrc``, ``.mcp.json``,
...) in the shared tree: they are never attributed, set aside or reported, and they are
gone once Claude Code ends.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from seawall.git.mount_points import NAMES, is_mount_point
from tests.fakes.agent_clis import AgentClis
from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.model_script import Call, ModelTurn, Script
from tests.integration.realcli import agent_clis, anthropic, claude_env
from tests.integration.sessionkit import make_repo, seawall, show, status

__all__ = ["agent_clis", "anthropic", "claude_env"]

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("socat") is None,
    reason="Claude Code's sandbox needs bubblewrap and socat (.ci/run installs them)",
)

DONE = "Made the module.\nSTATUS: done — src/made.py written"
READ_ONLY = "Read-only file system"


def _write(path: Path, text: str = "x") -> str:
    """A program that writes a file by itself: nothing a hook can read from the line."""
    return f"python3 -c \"open('{path}', 'w').write('{text}')\""


def _lead(outside: Path, repo: Path, prompt: str) -> Script:
    review = json.dumps({"outputs": {"app": DONE}})
    return Script(
        marker="LEAD-SBX",
        turns=[
            ModelTurn(calls=[Call(name="Bash", input={"command": "seawall next --json"})]),
            ModelTurn(
                calls=[
                    Call(
                        name="Task",
                        input={
                            "description": "seawall task app",
                            "prompt": prompt,
                            "subagent_type": "general-purpose",
                        },
                    )
                ]
            ),
            ModelTurn(
                calls=[Call(name="Bash", input={"command": "sleep 20", "run_in_background": True})]
            ),
            ModelTurn(
                calls=[
                    Call(
                        name="Bash",
                        input={"command": f"seawall next --input - <<'EOF'\n{review}\nEOF"},
                    )
                ]
            ),
            ModelTurn(
                calls=[
                    Call(name="Bash", input={"command": _write(outside / "lead.txt")}),
                    Call(name="Bash", input={"command": _write(repo / "lead-notes.txt")}),
                    Call(
                        name="Bash",
                        input={"command": f"seawall --version; {_write(outside / 'carried.txt')}"},
                    ),
                ]
            ),
            ModelTurn(text="The wave is merged."),
        ],
    )


def _subagent(outside: Path, repo: Path) -> Script:
    in_tmp = "python3 -c \"import tempfile; f = tempfile.mkstemp()[1]; open(f, 'w').write('t')\""
    return Script(
        marker="SUB-SBX",
        turns=[
            ModelTurn(
                calls=[
                    Call(name="Bash", input={"command": _write(outside / "sub.txt")}),
                    Call(name="Bash", input={"command": _write(Path.home() / "seawall-sub.txt")}),
                    Call(name="Bash", input={"command": _write(repo / "src/made.py", "y = 2")}),
                    Call(name="Bash", input={"command": in_tmp}),
                ]
            ),
            ModelTurn(text=DONE),
        ],
    )


class _Watch:
    """Which of the sandbox's mount points showed in the repository while the lead ran."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.seen: set[str] = set()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.done.wait(0.1):
            self.seen.update(name for name in NAMES if is_mount_point(self.repo, name))

    def __enter__(self) -> _Watch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def _json(text: str) -> dict[str, Any]:
    """The JSON document a command printed (after what it said on stderr)."""
    data, _ = json.JSONDecoder().raw_decode(text[text.index("{") :])
    assert isinstance(data, dict)
    return data


def _results(stdout: str) -> list[tuple[bool, str]]:
    """(from a subagent, text) of every tool result in the stream."""
    found: list[tuple[bool, str]] = []
    for line in stdout.splitlines():
        try:
            event: Any = json.loads(line)
        except json.JSONDecodeError:
            continue
        message = event.get("message") if isinstance(event, dict) else None
        if event.get("type") != "user" or not isinstance(message, dict):
            continue
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                text = content if isinstance(content, str) else json.dumps(content)
                found.append((bool(event.get("parent_tool_use_id")), text))
    return found


@pytest.mark.slow  # the real Claude Code CLI, a subagent, bubblewrap around every command
def test_the_lead_and_its_subagent_cannot_write_outside_the_repository(
    agent_clis: AgentClis,
    anthropic: AnthropicServer,
    claude_env: dict[str, str],
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n", "README.md": "# p\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "boxed"\nisolation = "none"\n'
        '[[task]]\nid = "app"\nprompt = "Make the module (SUB-SBX)."\nscope = ["src/**"]\n'
    )
    bin_dir = str(Path(sys.executable).parent)  # `seawall` for the hooks and the lead
    env = {**claude_env, "PATH": f"{bin_dir}:{claude_env['PATH']}"}
    # the documented preparation, and nothing else
    seawall("hooks", "install", cwd=repo, env=env, check=True)
    first = seawall("next", str(plan), "--json", cwd=repo, env=env, check=True)
    step = json.loads(first.stdout)
    (agent,) = step["wave"]["agents"]
    anthropic.add(_lead(outside, repo, agent["prompt"]))
    anthropic.add(_subagent(outside, repo))
    with _Watch(repo) as watch:
        done = subprocess.run(
            [str(agent_clis.claude), "-p", "LEAD-SBX: run the prepared seawall wave",
             "--output-format", "stream-json", "--verbose", "--permission-mode", "dontAsk",
             "--allowedTools", "Task,Agent,Bash,Read,Write,Edit", "--max-turns", "12"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=420, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    results = _results(done.stdout)
    lead = "\n".join(text for sub, text in results if not sub)
    sub = "\n".join(text for sub, text in results if sub)
    # writes outside: refused by the kernel, for the lead and for its subagent
    assert sorted(p.name for p in outside.iterdir()) == []
    assert not (Path.home() / "seawall-sub.txt").exists()
    assert lead.count(READ_ONLY) == 1 and sub.count(READ_ONLY) == 2, (lead, sub)
    # a line that would carry a program out of the sandbox with seawall's own step
    assert "runs outside Claude Code's sandbox, and so would everything on its line" in lead
    # writes inside: the subagent's in its scope, the lead's in its repository, $TMPDIR
    assert (repo / "lead-notes.txt").read_text() == "x"
    assert sub.count("Traceback") == 2
    # seawall's steps ran outside the sandbox: the review merged the subagent's work
    answers = [_json(text) for sub, text in results if not sub and "seawall.next/1" in text]
    assert [a["action"] for a in answers] == ["dispatch", "done"], lead
    answer = answers[-1]
    assert {a["task"]: a["merged"] for a in answer["reviewed"]["agents"]} == {"app": True}
    assert show(repo, "main", "src/made.py") == "y = 2"
    # the mount points were there while the lead reviewed, and no one's change
    assert {".bashrc", ".mcp.json"} <= watch.seen, watch.seen
    assert not answer["reviewed"].get("set_aside"), answer["reviewed"]
    (wave,) = status(repo)["waves"]
    assert wave.get("set_aside") is None, wave
    events = (repo / ".seawall" / step["session"] / "events.jsonl").read_text()
    assert not any(name in events for name in watch.seen), events
    for name in watch.seen:
        assert show(repo, "main", name) is None, name
        assert not (repo / name).exists(), name  # Claude Code removed its own


@pytest.mark.slow  # the real Claude Code CLI under seawall's own (Landlock) sandbox
def test_seawall_run_works_in_a_repository_prepared_for_a_lead(
    agent_clis: AgentClis,
    anthropic: AnthropicServer,
    claude_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """The project's settings ask for Claude Code's sandbox and refuse to start without
    it; an agent seawall runs is under Landlock, where bubblewrap cannot start, so its
    own settings turn Claude Code's sandbox off and seawall's is the boundary."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", "src/__init__.py": ""})
    seawall("hooks", "install", cwd=repo, check=True)
    anthropic.add(
        Script(
            marker="DRIVEN-SBX",
            turns=[
                ModelTurn(calls=[Call(name="Bash", input={"command": _write(repo / "src/a.py")})]),
                ModelTurn(text="Wrote it.\nSTATUS: done — src/a.py"),
            ],
        )
    )
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[session]\nname = "driven"\nagent = "claude"\n[runners.claude]\nkind = "claude-code"\n'
        '[[task]]\nid = "a"\nprompt = "Write it (DRIVEN-SBX)."\nscope = ["src/a.py"]\n'
    )
    done = seawall("run", str(plan), "--repo", str(repo), cwd=repo, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert show(repo, "main", "src/a.py") == "x"
