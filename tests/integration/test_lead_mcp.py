"""`seawall mcp` through the MCP SDK's own client over stdio, and `seawall next` as a loop.

The worked loop of a lead agent: ``next`` with the plan prepares wave 1; the "agents"
(this test) write in the given workspaces; ``next`` with their final messages reviews,
merges and prepares the next wave; until ``done``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.runnerkit import anyio_backend
from tests.integration.sessionkit import make_repo, seawall, show, status

mcp = pytest.importorskip("mcp")

__all__ = ["anyio_backend"]

pytestmark = pytest.mark.anyio

PLAN = (
    '[session]\nname = "lead"\n'
    '[[task]]\nid = "app"\nprompt = "Bump x."\nscope = ["src/app.py"]\n'
    '[[task]]\nid = "notes"\nprompt = "Write notes."\nscope = ["NOTES.md"]\n'
    '[[task]]\nid = "docs"\nprompt = "Document x."\nscope = ["docs/x.md"]\n'
    'depends_on = ["app"]\n'
)


def _repo_and_plan(tmp_path: Path) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    return repo, plan


def _structured(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(_text(result.content[0]))


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _text(content: object) -> str:
    text = getattr(content, "text", None)
    assert isinstance(text, str), content
    return text


def test_next_is_the_whole_loop(tmp_path: Path) -> None:
    repo, plan = _repo_and_plan(tmp_path)
    first = json.loads(seawall("next", str(plan), "--repo", str(repo), cwd=repo, check=True).stdout)
    assert first["schema"] == "seawall.next/1" and first["action"] == "dispatch"
    agents = {a["task"]: a for a in first["wave"]["agents"]}
    assert set(agents) == {"app", "notes"}
    # asking again (a lead that lost its context) shows the same wave, prepares nothing new
    again = json.loads(seawall("next", "--repo", str(repo), cwd=repo, check=True).stdout)
    assert again["again"] is True and again["wave"]["wave"] == 1
    Path(agents["app"]["workspace"], "src/app.py").write_text("x = 2\n")
    Path(agents["notes"]["workspace"], "NOTES.md").write_text("notes\n")
    outputs = tmp_path / "outputs.json"
    outputs.write_text(
        json.dumps({"outputs": {"app": "STATUS: done — x is 2", "notes": "STATUS: done — ok"}})
    )
    second = json.loads(
        seawall("next", "--input", str(outputs), "--repo", str(repo), cwd=repo, check=True).stdout
    )
    assert {a["task"]: a["merged"] for a in second["reviewed"]["agents"]} == {
        "app": True,
        "notes": True,
    }
    assert [a["task"] for a in second["wave"]["agents"]] == ["docs"]
    docs = second["wave"]["agents"][0]
    Path(docs["workspace"], "docs").mkdir(exist_ok=True)
    Path(docs["workspace"], "docs/x.md").write_text("x\n")
    third = json.loads(
        seawall(
            "next",
            "--input",
            "-",
            "--repo",
            str(repo),
            cwd=repo,
            check=True,
            stdin=json.dumps({"outputs": {"docs": "STATUS: done — documented"}}),
        ).stdout
    )
    assert third["done"] is True and third["action"] == "done"
    assert show(repo, "main", "src/app.py") == "x = 2\n"
    assert show(repo, "main", "docs/x.md") == "x\n"
    assert status(repo)["phase"] == "done"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"app": "STATUS: done"}, 'expected {"outputs"'),
        ({"outputs": {"ap": "STATUS: done"}}, "outputs.ap: not a task of the dispatched wave"),
        ({"outputs": {"app": 3}}, "outputs.app: the final text must be a string"),
        ({"outputs": {}, "extra": 1}, "unknown key 'extra'"),
    ],
)
def test_bad_outputs_are_refused_naming_the_field(
    tmp_path: Path, document: object, message: str
) -> None:
    repo, plan = _repo_and_plan(tmp_path)
    seawall("next", str(plan), "--repo", str(repo), cwd=repo, check=True)
    for command in (["next", "--input", "-"], ["wave", "review"]):
        result = seawall(
            *command, "--repo", str(repo), cwd=repo, stdin=json.dumps(document), check=False
        )
        assert result.returncode == 1, result.stdout
        assert message in result.stderr
        assert "Traceback" not in result.stderr
    hint = seawall(
        "next",
        "--input",
        "-",
        "--repo",
        str(repo),
        cwd=repo,
        stdin=json.dumps({"outputs": {"ap": "x"}}),
        check=False,
    )
    assert "did you mean 'app'?" in hint.stderr
    # nothing was reviewed: the wave still waits
    assert status(repo)["waves"][0]["phase"] == "dispatched"


def test_a_missing_input_file_is_named(tmp_path: Path) -> None:
    repo, plan = _repo_and_plan(tmp_path)
    seawall("next", str(plan), "--repo", str(repo), cwd=repo, check=True)
    missing = tmp_path / "nope.json"
    for command in (["next", "--input", str(missing)], ["wave", "review", "--input", str(missing)]):
        result = seawall(*command, "--repo", str(repo), cwd=repo, check=False)
        assert result.returncode == 1
        assert f"--input {missing}: no such file" in result.stderr
        assert "Traceback" not in result.stderr


async def test_the_mcp_server_over_stdio(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    repo, plan = _repo_and_plan(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "seawall", "mcp", "--repo", str(repo)], cwd=repo
    )
    async with Client(params, read_timeout_seconds=120) as client:
        from seawall.version import __version__

        info = client.server_info
        assert info is not None and info.name == "seawall"
        assert info.version == __version__ != ""
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"plan", "next", "status", "trips", "reset", "carryovers"} <= set(tools)
        assert "outputs" in tools["next"].input_schema["properties"]
        waves = _structured(await client.call_tool("plan", {"plan": str(plan)}))
        assert waves
        first = _structured(await client.call_tool("next", {"plan": str(plan)}))
        agents = {a["task"]: a for a in first["wave"]["agents"]}
        _write(Path(agents["app"]["workspace"], "src/app.py"), "x = 3\n")
        _write(Path(agents["notes"]["workspace"], "NOTES.md"), "n\n")
        bad = await client.call_tool("next", {"outputs": {"apq": "STATUS: done"}})
        assert bad.is_error
        assert "outputs.apq" in _text(bad.content[0])
        second = _structured(
            await client.call_tool(
                "next", {"outputs": {"app": "STATUS: done — 3", "notes": "STATUS: done — n"}}
            )
        )
        assert [a["task"] for a in second["wave"]["agents"]] == ["docs"]
        state = _structured(await client.call_tool("status", {}))
        assert state["waves"][0]["agents"][0]["merged"] is True
        assert _structured(await client.call_tool("trips", {})) == []
        session = first["session"]
        resource = await client.read_resource(f"seawall://sessions/{session}/STATE.md")
        text = _text(resource.contents[0])
        assert session in text and "app" in text
    assert show(repo, "main", "src/app.py") == "x = 3\n"
