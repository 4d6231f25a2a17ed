"""Soft trips (unverified-edits: a nudge to run the check, which stops nothing) are
counted and shown apart from hard trips (a breaker that stopped the agent) everywhere
people and scripts look: the console, STATE.md, the report, ``status --json`` and the
plain ``seawall replay`` summary."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import anyio
import jsonschema

from seawall.adapters.runners.scripted import AgentScript, Edit, ScriptedRunner, Tool
from seawall.plan import parse_plan
from seawall.report.progress import Progress
from seawall.session.engine import Session
from seawall.session.step_types import load_schema
from tests.integration.sessionkit import make_repo, seawall, show, status
from tests.unit.test_replay_score import bash, edit, transcript

PLAN = """
[session]
name = "trips"
agent = "scripted"
isolation = "worktree"

[session.breakers]
max_edits_without_verify = 3

[session.wave_breaker]
enabled = false

[[task]]
id = "nudged"
prompt = "Write the four modules."
scope = ["src/"]

[[task]]
id = "looper"
prompt = "Make the list helper."
scope = ["lib/list.py"]
"""


def test_a_soft_and_a_hard_trip_are_told_apart_where_people_look(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"lib/list.py": "items = []\n"})
    edits = tuple(Edit(path=f"src/m{n}.py", content=f"m = {n}\n") for n in range(1, 5))
    loop = [Tool(name="Bash", arguments={"command": "ls lib"}, result="list.py")] * 8
    runner = ScriptedRunner(
        {
            "nudged": AgentScript(steps=edits, final="STATUS: done — four modules"),
            "looper": [
                AgentScript(steps=tuple(loop), final="STATUS: done — never reached"),
                AgentScript(
                    steps=(Edit(path="lib/list.py", content="items = [1]\n"),),
                    final="STATUS: done — list helper",
                ),
            ],
        }
    )
    console = io.StringIO()
    session = Session(
        parse_plan(PLAN),
        repo=repo,
        runner=runner,
        plan_text=PLAN,
        progress=Progress(console, live=False, heartbeat=0),
    )
    result = anyio.run(session.run)
    # the nudged agent was not stopped: all four modules landed
    assert show(repo, "main", "src/m4.py") == "m = 4\n"

    said = console.getvalue()
    assert "W1 nudged: soft trip breaker/unverified-edits (3/3): 3 edits without" in said, said
    assert "a nudge to run the check, the agent was not stopped" in said
    assert "W1 looper: seawall breaker/loop tripped (4/4)" in said

    data = status(repo)
    jsonschema.validate(data, load_schema(data["schema"]))
    assert (data["hard_trips"], data["soft_trips"]) == (1, 1)
    first = {a["task"]: a for a in data["waves"][0]["agents"]}
    assert (first["nudged"]["hard_trips"], first["nudged"]["soft_trips"]) == (0, 1)
    assert (first["looper"]["hard_trips"], first["looper"]["soft_trips"]) == (1, 0)
    assert first["nudged"]["status"] == "done" and first["looper"]["status"] == "blocked"

    state_md = (repo / ".seawall" / data["session"] / "STATE.md").read_text()
    assert "- breaker trips: 1 hard (agents stopped) · 1 soft (nudges to run a check)" in state_md
    nudged = state_md[state_md.index("- W1 · nudged ·") :].splitlines()
    assert nudged[0].startswith("- W1 · nudged · DONE")
    assert nudged[1].startswith("  - soft trip breaker/unverified-edits (3/3)")

    assert result.report is not None
    page = result.report.read_text(encoding="utf-8")
    table = page.split('id="totals"', 1)[1].split("</table>", 1)[0]
    totals = dict(re.findall(r'data-field="(\w+)" data-value="([^"]*)"', table))
    assert (totals["hard_trips"], totals["soft_trips"]) == ("1", "1")
    row = page[page.index('<tr class="agent" data-wave="1" data-task="nudged"') :]
    row = row[: row.index("</tr>")]
    assert "soft: breaker/unverified-edits" in row and "not stopped" in row


def test_the_plain_replay_summary_counts_soft_and_hard_trips_apart(tmp_path: Path) -> None:
    edits = transcript(tmp_path / "edits.jsonl", [edit(n, f"src/m{n}.py") for n in range(1, 31)])
    stuck = transcript(
        tmp_path / "stuck.jsonl",
        [bash(n, "git push", "Exit code 1\nrejected: fetch first", error=True) for n in (1, 2, 3)],
    )
    soft_only = seawall("replay", "--only-trips", str(edits), cwd=tmp_path)
    assert soft_only.returncode == 0, soft_only.stdout + soft_only.stderr  # a nudge stops nothing
    assert "\tSOFT TRIP\tbreaker/unverified-edits\t" in soft_only.stdout
    assert f"{edits}: claude-stream-json, 1 trips (0 hard, 1 soft)" in soft_only.stdout
    both = seawall("replay", "--json", "--only-trips", str(edits), str(stuck), cwd=tmp_path)
    assert both.returncode == 3, both.stdout + both.stderr
    lines = [json.loads(line) for line in both.stdout.splitlines()]
    schema = load_schema("seawall.replay/1")
    for line in lines:
        jsonschema.validate(line, schema)
    summaries = {Path(s["file"]).name: s for s in lines if s["kind"] == "summary"}
    assert (summaries["edits.jsonl"]["hard_trips"], summaries["edits.jsonl"]["soft_trips"]) == (
        0,
        1,
    )
    assert (summaries["stuck.jsonl"]["hard_trips"], summaries["stuck.jsonl"]["soft_trips"]) == (
        1,
        0,
    )
    trips = [line for line in lines if line["kind"] == "trip"]
    assert [t["soft"] for t in trips] == [True, False]
