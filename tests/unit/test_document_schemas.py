"""Every document a command prints names a JSON Schema seawall ships: the schemas of the
commands' records are derived from the records themselves, and each shipped file must
equal what its records give today (``SEAWALL_WRITE_SCHEMAS=1`` writes them out after a
record changed; a change that breaks readers takes a new number after the slash).
docs/sessions.md lists every document in one table."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from seawall.cli.documents import (
    AdapterChecks,
    AdapterList,
    CarryoverList,
    CarryoverValidation,
    DemoDocument,
    ErrorDocument,
    HooksInstalled,
    McpDescription,
    PlanDocument,
    PromptDocument,
    Queued,
    ReportWritten,
    Restored,
    RunnerResumed,
    TickDone,
    WaveWatchFindings,
    WaveWatchTrip,
    WorktreeList,
    WorktreesPruned,
)
from seawall.codec import document_schema
from seawall.replay import ReplayRecord, ReplaySummary
from seawall.report.progress import AgentProgress, LogLine, WaveProgress
from seawall.session.documents import (
    BreakerReset,
    Killed,
    LeadReleased,
    SessionOutcome,
    SessionStatus,
)
from seawall.session.step_types import (
    COMMAND_SCHEMAS,
    SCHEMAS,
    STEP_SCHEMAS,
    load_schema,
    schema_name,
)
from seawall.unattended.status_view import RunnerStatusDocument
from seawall.watch.document import WatchDocument

ROOT = Path(__file__).parents[2]
SHIPPED = ROOT / "coordinator" / "lead" / "schemas"

DOCUMENTS: dict[str, tuple[Any, str]] = {
    "error": (ErrorDocument, "Any command's error under `--json` (and `next`, `wave ...`)."),
    "plan": (PlanDocument, "`seawall plan --json`: the waves a plan makes."),
    "prompt": (PromptDocument, "`seawall prompt --json`: the exact prompt of a task."),
    "outcome": (SessionOutcome, "`seawall run --json`, `seawall resume --json`: the end."),
    "status": (SessionStatus, "`seawall status --json`, `seawall wave finish`."),
    "progress": (
        (LogLine, WaveProgress, AgentProgress),
        "The progress lines of `run`/`resume`/`demo --json` (stderr).",
    ),
    "kill": (Killed, "`seawall kill --json`."),
    "reset-lead": (LeadReleased, "`seawall reset --lead --json`."),
    "reset-agent": (BreakerReset, "`seawall reset --agent TASK --json`."),
    "report": (ReportWritten, "`seawall report --json`."),
    "worktrees": (WorktreeList, "`seawall worktrees list --json`."),
    "worktrees-prune": (WorktreesPruned, "`seawall worktrees prune --json`."),
    "restore": (Restored, "`seawall restore --json`."),
    "carryover": (CarryoverList, "`seawall carryover list --json`."),
    "carryover-validate": (CarryoverValidation, "`seawall carryover validate --json`."),
    "hooks-install": (HooksInstalled, "`seawall hooks install --json`."),
    "runner-tick": (TickDone, "`seawall runner tick --json`."),
    "runner-enqueue": (Queued, "`seawall runner enqueue --json`."),
    "runner-resume": (RunnerResumed, "`seawall runner resume --json`."),
    "runner-status": (RunnerStatusDocument, "`seawall runner status --json`."),
    "replay": ((ReplayRecord, ReplaySummary), "`seawall replay --json`: one per line."),
    "adapters": (AdapterList, "`seawall adapters list --json`."),
    "adapters-check": (AdapterChecks, "`seawall adapters check --json`."),
    "demo": (DemoDocument, "`seawall demo --json`: the demo session's outcome."),
    "watch": (WatchDocument, "`seawall watch --json`: the session now, once."),
    "wave-watch": (
        (WaveWatchTrip, WaveWatchFindings),
        "`seawall wave watch --json`: the trips as they happen, then each agent's findings.",
    ),
    "mcp": (McpDescription, "`seawall mcp --json`: what the MCP server offers."),
}


def _derived(stem: str) -> dict[str, Any]:
    kinds, description = DOCUMENTS[stem]
    return document_schema(kinds, f"seawall.{stem}/1", description)


def _file(stem: str) -> Path:
    return SHIPPED / f"{stem}.schema.json"


def _text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


if os.environ.get("SEAWALL_WRITE_SCHEMAS") == "1":  # pragma: no cover - a maintainer's tool
    for _stem in DOCUMENTS:
        _file(_stem).write_text(_text(_derived(_stem)), encoding="utf-8")


def test_every_command_document_has_its_records_and_every_shipped_file_a_name() -> None:
    assert set(DOCUMENTS) == set(COMMAND_SCHEMAS)
    stems = {*STEP_SCHEMAS, *COMMAND_SCHEMAS}
    assert sorted(p.name for p in SHIPPED.iterdir()) == sorted(f"{s}.schema.json" for s in stems)


@pytest.mark.parametrize("stem", sorted(DOCUMENTS))
def test_each_shipped_schema_is_the_one_its_records_give(stem: str) -> None:
    shipped = _file(stem).read_text(encoding="utf-8")
    assert shipped == _text(_derived(stem)), (
        f"{_file(stem)} drifted from its records: regenerate it with "
        "SEAWALL_WRITE_SCHEMAS=1 pytest tests/unit/test_document_schemas.py"
    )
    schema = load_schema(f"seawall.{stem}/1")
    jsonschema.Draft202012Validator.check_schema(schema)
    variants = schema.get("anyOf", [schema])
    assert all(one["properties"]["schema"] == {"const": f"seawall.{stem}/1"} for one in variants)
    assert all("schema" in one["required"] for one in variants)


def test_a_short_name_is_the_newest_version_and_an_unknown_one_is_named() -> None:
    assert load_schema("next") == load_schema("seawall.next/1")
    assert schema_name("seawall.plan") == "seawall.plan/1"
    assert schema_name("error") == "seawall.error/1"
    with pytest.raises(KeyError, match="did you mean 'next'"):
        load_schema("nxt")


def test_a_document_of_another_name_fails_its_schema() -> None:
    schema = load_schema("kill")
    good = {"schema": "seawall.kill/1", "session": "s", "phase": "done", "refs": "r"}
    jsonschema.validate(good, schema)
    for bad in ({**good, "schema": "seawall.kill/2"}, {**good, "phase": "gone"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_the_docs_table_lists_every_document() -> None:
    text = (ROOT / "docs" / "sessions.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(seawall\.[a-z-]+/\d+)` \|", text, flags=re.M))
    assert listed == set(SCHEMAS)
