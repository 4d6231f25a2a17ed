"""Docs that run: every code block of README.md and docs/ is executed here, or is marked
as an illustration (an HTML comment ``<!-- docs: illustration -->`` on the line above
its fence), so a snippet that drifts from the code fails the suite.

- ``python``: run as a script in a fresh folder, after the named setup
  (``<!-- docs: setup=NAME -->``, see ``SETUPS``) defined the names the prose gives it;
  top-level ``await`` runs under anyio. An illustration is still compiled.
- ``toml``: parsed; a plan (it has ``[session]``) is loaded with the plan loader, and a
  ``[runners.NAME]`` table with a minimal plan around it.
- ``json``: parsed.
- anything else (shell sessions, unit files, output shown) must be an illustration; the
  ``seawall`` command lines in a shell illustration must still parse with the real CLI.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from seawall.cli import build_parser
from seawall.plan.loader import parse_plan

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FAKE_BIN = ROOT / "tests" / "fakes" / "bin"
_FENCE = re.compile(
    r"^(?:<!--\s*docs:\s*(?P<mark>[^>]*?)\s*-->\n)?"  # the mark on the line above, if any
    r"```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$",
    re.S | re.M,
)
_SHELLS = {"bash", "sh", "console", "shell"}


@dataclass(frozen=True, slots=True)
class Block:
    path: Path
    line: int
    lang: str
    body: str
    mark: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def illustration(self) -> bool:
        return self.mark.startswith("illustration")

    @property
    def setup(self) -> str:
        match = re.search(r"setup=([\w-]+)", self.mark)
        return match.group(1) if match else "folder"


def _blocks() -> list[Block]:
    found = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            line = text.count("\n", 0, match.start("lang")) + 1
            found.append(
                Block(path, line, match["lang"], match["body"], (match["mark"] or "").strip())
            )
    return found


BLOCKS = _blocks()

_REPO = '''
import subprocess
from pathlib import Path

repo = repo_root = Path.cwd()
subprocess.run(["git", "init", "-q", "-b", "main"], check=True)
for key, value in (("user.name", "docs"), ("user.email", "docs@seawall.invalid"),
                   ("commit.gpgsign", "false")):
    subprocess.run(["git", "config", key, value], check=True)
Path("README.md").write_text("# project\\n")
Path("plan.toml").write_text("""
[session]
name = "docs"
agent = "claude"

[runners.claude]
kind = "claude-code"
model = "sonnet"

[[task]]
id = "config-loader"
prompt = "Add src/app/config.py."
scope = ["src/app/config.py"]

[[task]]
id = "api-auth"
prompt = "Implement token authentication in src/app/auth.py."
scope = ["src/app/auth.py"]
depends_on = ["config-loader"]
""")
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", "initial"], check=True)
'''

_PLAN = (
    _REPO
    + """
from seawall import load_plan
plan = load_plan("plan.toml")
"""
)

SETUPS: dict[str, str] = {
    "folder": "",
    "repo": _REPO,
    "plan": _PLAN,
}

_RUN = """
import ast, sys
import anyio

source = sys.stdin.read()
code = compile(source, sys.argv[1], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
namespace = {"__name__": "__docs__"}
result = eval(code, namespace)
if result is not None and hasattr(result, "__await__"):
    async def main():
        await result
    anyio.run(main)
"""


def _env(folder: Path) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}"}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "HOME": str(folder / "home"),
            "GITHUB_TOKEN": "docs-token",
            "GITLAB_TOKEN": "docs-token",
            "FAKE_AGENT_EDIT": "src/app/output.py",
        }
    )
    env.pop("SEAWALL_KILL_AT", None)
    return env


def _run_python(block: Block, folder: Path) -> None:
    source = SETUPS[block.setup] + "\n" + block.body
    done = subprocess.run(
        [sys.executable, "-c", _RUN, block.name],
        input=source,
        cwd=folder,
        env=_env(folder),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{block.name} failed:\n{done.stdout}\n{done.stderr}"


def _check_toml(block: Block) -> None:
    data = tomllib.loads(block.body)
    task = '\n[[task]]\nid = "t"\nprompt = "p"\nscope = ["a"]\n'
    if "session" in data and "task" in data:
        parse_plan(block.body, path=block.name)
    elif "session" in data:  # [session.*] tables: a plan around them
        head = "" if "name" in data["session"] else '[session]\nname = "docs"\n\n'
        parse_plan(head + block.body + task, path=block.name)
    elif "runners" in data:
        parse_plan('[session]\nname = "docs"\n' + task + "\n" + block.body, path=block.name)


def _seawall_lines(body: str) -> list[list[str]]:
    """The ``seawall ...`` command lines of a shell block, as argv (comments dropped)."""
    lines = []
    for raw in body.splitlines():
        line = raw.strip().removeprefix("$ ")
        if not line.startswith("seawall ") or any(c in line for c in "[]|<>…"):
            continue
        words = shlex.split(line, comments=True)
        lines.append(words[1:])
    return lines


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_the_block_runs_or_is_an_illustration(block: Block, tmp_path: Path) -> None:
    if block.setup not in SETUPS:
        pytest.fail(f"{block.name}: no setup {block.setup!r}")
    if block.lang == "python":
        if block.illustration:
            compile(block.body, block.name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        else:
            _run_python(block, tmp_path)
    elif block.lang == "toml" and not block.illustration:
        _check_toml(block)
    elif block.lang == "json" and not block.illustration:
        json.loads(block.body)
    elif not block.illustration:
        pytest.fail(f"{block.name}: a {block.lang or 'plain'} block must run or be marked")
    if block.lang in _SHELLS:
        parser = build_parser()
        for argv in _seawall_lines(block.body):
            try:
                parser.parse_args(argv)
            except SystemExit as exc:
                pytest.fail(f"{block.name}: `seawall {shlex.join(argv)}` does not parse ({exc})")


def test_the_blocks_were_found() -> None:
    assert len(BLOCKS) > 40
    assert {b.path.name for b in BLOCKS} >= {"README.md", "runners.md", "trackers.md"}


def test_a_drifted_block_fails(tmp_path: Path) -> None:
    """The harness can fail: a snippet using a name nobody imported, an unmarked shell
    block, and a shell illustration with a command seawall does not have."""
    drifted = Block(ROOT / "docs" / "x.md", 1, "python", "Crash()\n", "")
    with pytest.raises(AssertionError, match="NameError"):
        _run_python(drifted, tmp_path)
    with pytest.raises(pytest.fail.Exception, match="must run or be marked"):
        test_the_block_runs_or_is_an_illustration(
            Block(ROOT / "docs" / "x.md", 2, "bash", "ls\n", ""), tmp_path
        )
    with pytest.raises(pytest.fail.Exception, match="does not parse"):
        test_the_block_runs_or_is_an_illustration(
            Block(
                ROOT / "docs" / "x.md", 3, "bash", "seawall run --no-such-flag p\n", "illustration"
            ),
            tmp_path,
        )
