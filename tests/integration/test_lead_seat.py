"""The lead's seat: typed step-mode results, their JSON Schemas, the repository held for
a lead between prepare and review, and a library that is silent and closes what it opens."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from seawall import AgentAssignment, PreparedWave, Session, WaveReport, load_plan
from seawall.adapters.trackers.memory import MemoryTracker
from seawall.exitcodes import ExitCode
from seawall.lead.steps import NextAction
from seawall.model import Enforcement, Isolation, Status
from seawall.session.step_types import SCHEMAS, load_schema
from seawall.state.ledger import HaltReason, SessionPhase
from tests.integration.sessionkit import make_repo, seawall, show

PLAN = (
    '[session]\nname = "{name}"\n'
    '[[task]]\nid = "app"\nprompt = "Bump x."\nscope = ["src/app.py"]\n'
    '[[task]]\nid = "notes"\nprompt = "Write notes."\nscope = ["NOTES.md"]\n'
    'depends_on = ["app"]\n'
)


def _plan(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(PLAN.format(name=name))
    return path


def _checked(out: str) -> dict[str, Any]:
    """The JSON a command printed, validated against the schema it names."""
    data: dict[str, Any] = json.loads(out)
    jsonschema.validate(data, load_schema(data["schema"]))
    return data


def test_every_cli_output_of_the_loop_matches_its_schema(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    plan = _plan(tmp_path, "typed")
    where = ("--repo", str(repo))
    wave = _checked(seawall("wave", "prepare", str(plan), *where, cwd=repo, check=True).stdout)
    assert wave["schema"] == "seawall.wave-prepare/1" and wave["wave"] == 1
    (app,) = wave["agents"]
    assert f"WORKSPACE: {app['workspace']}" in app["prompt"]
    Path(app["workspace"], "src/app.py").write_text("x = 2\n")
    outputs = json.dumps({"outputs": {"app": "Bumped.\nSTATUS: done — x is 2"}})
    review = seawall("wave", "review", *where, cwd=repo, stdin=outputs, check=True)
    report = _checked(review.stdout)
    assert report["schema"] == "seawall.wave-review/1"
    assert report["agents"][0]["status"] == "done" and report["agents"][0]["merged"]
    # the same loop through `next`: dispatch, then reviewed + done
    step = _checked(seawall("next", *where, cwd=repo, check=True).stdout)
    assert step["action"] == "dispatch" and step["wave"]["agents"][0]["task"] == "notes"
    notes = step["wave"]["agents"][0]
    Path(notes["workspace"], "NOTES.md").write_text("notes\n")
    outputs = json.dumps({"outputs": {"notes": "STATUS: done — notes written"}})
    last = _checked(seawall("next", "--input", "-", *where, cwd=repo, stdin=outputs).stdout)
    assert last["action"] == "done" and last["done"] and last["phase"] == "done"
    assert last["reviewed"]["agents"][0]["merged"] is True
    assert show(repo, "main", "NOTES.md") == "notes\n"
    # asked again after "done", `next` answers "done" again (a lead's loop may ask twice)
    again = _checked(seawall("next", *where, cwd=repo, check=True).stdout)
    assert again["action"] == "done" and again["done"] and again["session"] == step["session"]
    # nothing left for `wave prepare` either: the done document has its own schema
    finished = seawall("wave", "prepare", "--session", step["session"], *where, cwd=repo)
    error = _checked(finished.stdout)["error"]  # its answer is JSON: its error too
    assert finished.returncode == ExitCode.ERROR and "nothing to prepare" in error["message"]
    # asked again after it said done, `next` says done again
    again = _checked(seawall("next", *where, cwd=repo, check=True).stdout)
    assert again["action"] == "done" and again["session"] == step["session"]
    again = _checked(seawall("next", str(plan), *where, cwd=repo, check=True).stdout)
    assert again["action"] == "done" and again["session"] == step["session"]


def test_prepare_with_nothing_left_says_done_and_leaves_finishing_to_finish(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    plan = tmp_path / "one.toml"
    plan.write_text(
        '[session]\nname = "one"\n[[task]]\nid = "app"\nprompt = "Bump."\nscope = ["src/app.py"]\n'
    )
    where = ("--repo", str(repo))
    seawall("wave", "prepare", str(plan), *where, cwd=repo, check=True)
    outputs = json.dumps({"outputs": {"app": "STATUS: done — bumped"}})
    seawall("wave", "review", *where, cwd=repo, stdin=outputs, check=True)
    events = next((repo / ".seawall").glob("one-*/events.jsonl"))
    before = events.read_text()
    done = _checked(seawall("wave", "prepare", *where, cwd=repo, check=True).stdout)
    assert done["schema"] == "seawall.wave-done/1" and done["done"] is True
    assert "wave finish" in done["then"]
    assert events.read_text() == before  # preparing recorded nothing: no filing, no finish
    assert json.loads(seawall("status", "--json", *where, cwd=repo).stdout)["phase"] == "running"
    finished = seawall("wave", "finish", *where, cwd=repo, check=True)
    assert json.loads(finished.stdout)["phase"] == "done"
    assert '"session_finished"' in events.read_text()


def test_a_schema_refuses_a_document_that_drifted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    plan = _plan(tmp_path, "drift")
    out = seawall("wave", "prepare", str(plan), "--repo", str(repo), cwd=repo, check=True)
    good = _checked(out.stdout)
    schema = load_schema(good["schema"])
    missing = {k: v for k, v in good.items() if k != "base"}
    renamed = {**good, "agents": [{**good["agents"][0], "workdir": "x"}]}
    wrong = {**good, "schema": "seawall.wave-prepare/2"}
    for bad in (missing, renamed, wrong):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    assert {
        "seawall.next/1",
        "seawall.wave-done/1",
        "seawall.wave-halted/1",
        "seawall.wave-prepare/1",
        "seawall.wave-review/1",
    } <= set(SCHEMAS)
    shipped = Path(__file__).parents[2] / "coordinator" / "lead" / "schemas"
    assert sorted(p.name for p in shipped.iterdir()) == sorted(
        f"{name}.schema.json" for name in SCHEMAS.values()
    )


def test_a_lead_holds_the_repository_from_prepare_until_review(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    where = ("--repo", str(repo))
    first = _checked(
        seawall("wave", "prepare", str(_plan(tmp_path, "first")), *where, cwd=repo).stdout
    )
    lease = json.loads((repo / ".seawall" / "lead.json").read_text())
    assert lease["session"] == first["session"] and lease["wave"] == 1
    other = _plan(tmp_path, "other")
    for command in (["run", str(other)], ["wave", "prepare", str(other)], ["resume"]):
        done = seawall(*command, *where, cwd=repo)
        assert done.returncode == ExitCode.ERROR, done.stdout + done.stderr
        said = done.stdout if command[0] == "wave" else done.stderr  # wave answers JSON
        assert f"wave 1 of session {first['session']} (lead pid {lease['pid']}" in said
        assert "--input OUTPUTS.json" in said and "seawall kill" in said
    assert [p.name for p in (repo / ".seawall").iterdir() if p.name.startswith("other")] == []
    # the holding session's own steps go on: the same wave again, then its review
    again = _checked(seawall("next", *where, cwd=repo, check=True).stdout)
    assert again["again"] is True and again["wave"]["wave"] == 1
    outputs = json.dumps({"outputs": {"app": "STATUS: done — nothing to change"}})
    seawall("wave", "review", *where, cwd=repo, stdin=outputs, check=True)
    assert not (repo / ".seawall" / "lead.json").exists()
    # released: another session may start (its own lease, then `seawall kill` ends it)
    second = _checked(seawall("wave", "prepare", str(other), *where, cwd=repo, check=True).stdout)
    assert json.loads((repo / ".seawall" / "lead.json").read_text())["session"] == second["session"]
    seawall("kill", "--session", second["session"], *where, cwd=repo, check=True)
    assert not (repo / ".seawall" / "lead.json").exists()


def test_a_dead_lead_is_taken_over_and_reset_lead_releases_a_live_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    plan = _plan(tmp_path, "gone")
    # the lead is a short-lived process: it prepares the wave, then dies
    lead = (
        "import subprocess, sys; subprocess.run([sys.executable, '-m', 'seawall', "
        f"'wave', 'prepare', {str(plan)!r}, '--repo', {str(repo)!r}], check=True, "
        "stdout=subprocess.DEVNULL)"
    )
    subprocess.run([sys.executable, "-c", lead], cwd=repo, check=True, timeout=120)
    lease = json.loads((repo / ".seawall" / "lead.json").read_text())
    other = _plan(tmp_path, "next-one")
    done = seawall("wave", "prepare", str(other), "--repo", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert f"took over the repository from the lead of wave 1 of session {lease['session']}" in (
        done.stderr
    )
    taken = json.loads((repo / ".seawall" / "lead.json").read_text())
    assert taken["session"] != lease["session"]
    # a live lead's hold is released by a person with `reset --lead`
    reset = seawall("reset", "--lead", "--session", taken["session"], "--repo", str(repo), cwd=repo)
    assert reset.returncode == 0 and "released" in reset.stdout, reset.stderr
    assert not (repo / ".seawall" / "lead.json").exists()


def test_the_library_is_typed_silent_and_closes_the_tracker_it_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    plan = load_plan(_plan(tmp_path, "lib"))
    assert "Bump x." in plan.source  # kept, so the session can be reopened

    async def main() -> tuple[PreparedWave | None, WaveReport, bool]:
        async with Session(plan, repo=repo) as session:
            prepared = await session.prepare_wave()
            assert prepared is not None
            agent = prepared.agent("app")
            assert isinstance(agent, AgentAssignment) and agent.scope == ("src/app.py",)
            await anyio.Path(agent.workspace, "src/app.py").write_text("x = 3\n")
            tracker = session.tracker()
            report = await session.review_wave({"app": "STATUS: done — x is 3"})
        reopened = Session.open(repo, session.session_id)
        return prepared, report, tracker is not reopened.tracker()

    prepared, report, fresh = anyio.run(main)
    assert prepared is not None and prepared.to_json()["schema"] == "seawall.wave-prepare/1"
    assert report.agent("app").merged and report.pending == ("notes",)
    jsonschema.validate(report.to_json(), load_schema(report.schema))
    assert fresh
    assert capsys.readouterr() == ("", "")  # no progress sink given: nothing printed
    assert show(repo, "main", "src/app.py") == "x = 3\n"


def test_a_session_closes_its_own_tracker_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = load_plan(_plan(tmp_path, "close"))
    closed: list[str] = []

    class Recording(MemoryTracker):
        def close(self) -> None:
            closed.append("given")

    async def main() -> None:
        async with Session(plan, repo=repo, tracker=Recording()) as session:
            session.tracker()
        async with Session(plan, repo=repo) as own:
            opened = own.tracker()
            assert own._tracker is opened
        assert own._tracker is None  # closed and dropped on exit

    anyio.run(main)
    assert closed == []  # a tracker passed in is the caller's to close


def test_the_schemas_name_exactly_the_values_of_the_records_enums() -> None:
    prepare = load_schema("seawall.wave-prepare/1")["properties"]
    review = load_schema("seawall.wave-review/1")["properties"]
    halted = load_schema("seawall.wave-halted/1")["properties"]
    answer = load_schema("seawall.next/1")["properties"]
    resolved = {str(Isolation.WORKTREE), str(Isolation.NONE)}  # never auto, once resolved
    assert set(prepare["isolation"]["enum"]) == resolved
    assert set(prepare["enforcement"]["enum"]) == {str(e) for e in Enforcement}
    statuses = review["agents"]["items"]["properties"]["status"]["enum"]
    assert set(statuses) == {*(str(s) for s in Status), None}
    assert (
        set(review["phase"]["enum"]) == set(answer["phase"]["enum"]) == set(map(str, SessionPhase))
    )
    reasons = {str(r) for r in HaltReason}
    assert set(review["halt"]["properties"]["reason"]["enum"]) == reasons
    assert set(halted["halt"]["properties"]["reason"]["enum"]) == reasons
    assert set(answer["action"]["enum"]) == {str(a) for a in NextAction}
