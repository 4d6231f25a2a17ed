"""End to end: two agents add the same file with conflicting content. The earlier
agent's version is merged, the later one is set aside in a fix task the next wave runs,
and every account of the later agent says what was set aside and where it went."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import jsonschema

from seawall.adapters.runners.scripted import AgentScript, Edit, ScriptedRunner
from seawall.plan import parse_plan
from seawall.session.engine import Session
from seawall.session.step_types import load_schema
from seawall.state.ledger import SessionPhase
from tests.integration.sessionkit import agents_by_wave, make_repo, seawall, show, status

HEADER = "# API\n\nThe service's HTTP interface.\n"
ENDPOINTS = "\n## Endpoints\n\n- GET /items\n"
AUTH = "\n## Authentication\n\nSend `Authorization: Bearer <token>`.\n"

PLAN = """
[session]
name = "docs"
type = "feature"
agent = "scripted"
isolation = "worktree"

[[task]]
id = "docs-api"
prompt = "Write docs/api.md: the endpoints."
scope = ["docs/"]

[[task]]
id = "docs-auth"
prompt = "Write the authentication section of docs/api.md and docs/tokens.md."
scope = ["docs/"]
"""


def test_a_conflicting_both_added_file_goes_to_a_fix_task(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# inventory\n"})
    runner = ScriptedRunner(
        {
            "docs-api": AgentScript(
                steps=(Edit(path="docs/api.md", content=HEADER + ENDPOINTS),),
                final="STATUS: done — docs/api.md lists the endpoints",
            ),
            "docs-auth": AgentScript(
                steps=(
                    Edit(path="docs/api.md", content=HEADER + AUTH),
                    Edit(path="docs/tokens.md", content="# Tokens\n"),
                ),
                final="STATUS: done — authentication documented",
            ),
            "docs-auth-fix-w1": AgentScript(
                steps=(
                    Edit(path="docs/api.md", old="- GET /items\n", new="- GET /items\n" + AUTH),
                ),
                final="STATUS: done — docs/api.md holds both sections",
            ),
        }
    )
    session = Session(parse_plan(PLAN), repo=repo, runner=runner, plan_text=PLAN)
    result = anyio.run(session.run)
    assert result.phase is SessionPhase.DONE

    final = show(repo, "main", "docs/api.md")
    assert final is not None
    assert "- GET /items" in final and "## Authentication" in final
    assert show(repo, "main", "docs/tokens.md") == "# Tokens\n"
    assert runner.dispatches("docs-auth-fix-w1") == 1

    data = status(repo)
    waves = agents_by_wave(data)
    api, auth = waves[0]["docs-api"], waves[0]["docs-auth"]
    assert api["merged"] is True and api["set_aside"] == []
    # docs/tokens.md merged; docs/api.md did not, and the status says where it went
    assert auth["merged"] is True
    (aside,) = auth["set_aside"]
    assert aside["path"] == "docs/api.md"
    assert aside["kept"] == "docs-api"
    assert aside["fix_task"] == "docs-auth-fix-w1"
    assert aside["rule"].startswith("both-added")
    assert waves[1]["docs-auth-fix-w1"]["merged"] is True

    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    row = next(line for line in state_md.splitlines() if "· docs-auth ·" in line)
    assert "· merged ·" not in row
    assert "`docs/api.md` set aside" in row and "docs-auth-fix-w1" in row
    api_row = next(line for line in state_md.splitlines() if "· docs-api ·" in line)
    assert "· merged ·" in api_row

    assert result.report is not None
    page = result.report.read_text(encoding="utf-8")
    auth_row = page[page.index('<tr class="agent" data-wave="1" data-task="docs-auth"') :]
    auth_row = auth_row[: auth_row.index("</tr>")]
    assert '<code class="path">docs/<wbr>api.md</code> set aside for fix task' in auth_row
    assert "docs-auth-fix-w1" in auth_row


STEP_PLAN = """
[session]
name = "lead"
isolation = "worktree"

[[task]]
id = "docs-api"
prompt = "Write docs/api.md: the endpoints."
scope = ["docs/"]

[[task]]
id = "docs-auth"
prompt = "Write the authentication section of docs/api.md."
scope = ["docs/"]
"""


def test_the_review_json_says_what_was_set_aside(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# inventory\n"})
    plan = tmp_path / "plan.toml"
    plan.write_text(STEP_PLAN)
    prepared = seawall(
        "wave", "prepare", str(plan), "--json", "--repo", str(repo), cwd=repo, check=True
    )
    agents = {a["task"]: a for a in json.loads(prepared.stdout)["agents"]}
    for task, text in (("docs-api", HEADER + ENDPOINTS), ("docs-auth", HEADER + AUTH)):
        target = Path(agents[task]["workspace"], "docs", "api.md")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    outputs = {"outputs": {"docs-api": "STATUS: done — endpoints", "docs-auth": "STATUS: done"}}
    reviewed = seawall(
        "wave", "review", "--json", "--repo", str(repo), cwd=repo,
        stdin=json.dumps(outputs), check=True,
    )  # fmt: skip
    report = json.loads(reviewed.stdout)
    jsonschema.validate(report, load_schema(report["schema"]))
    by_task = {a["task"]: a for a in report["agents"]}
    assert by_task["docs-api"]["merged"] is True and by_task["docs-api"]["set_aside"] == []
    assert by_task["docs-auth"]["merged"] is False
    (aside,) = by_task["docs-auth"]["set_aside"]
    assert (aside["path"], aside["kept"], aside["fix_task"]) == (
        "docs/api.md",
        "docs-api",
        "docs-auth-fix-w1",
    )
    assert report["pending"] == ["docs-auth-fix-w1"]
    assert show(repo, "main", "docs/api.md") == HEADER + ENDPOINTS
