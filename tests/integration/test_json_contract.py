"""Every command that reports something answers ``--json`` with a document naming its
shipped JSON Schema, and validates against it: a real session run, then each command on
its repository, then each command's error (``seawall.error/1``, on stdout, with the
documented exit code)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from seawall.exitcodes import ExitCode
from seawall.session.step_types import SCHEMAS, load_schema
from tests.integration.sessionkit import make_repo, seawall, write_plan
from tests.unit.test_replay_score import bash, transcript

SEEN: set[str] = set()


def _valid(text: str) -> dict[str, Any]:
    """The document ``text`` holds, validated against the schema it names."""
    data: dict[str, Any] = json.loads(text)
    jsonschema.validate(data, load_schema(data["schema"]))
    SEEN.add(data["schema"])
    return data


def _lines(text: str) -> list[dict[str, Any]]:
    return [_valid(line) for line in text.splitlines() if line.strip()]


def _json(*args: str, cwd: Path, code: int = 0, env: dict[str, str] | None = None) -> str:
    done = seawall(*args, "--json", cwd=cwd, env=env)
    assert done.returncode == code, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _error(*args: str, cwd: Path, code: int = ExitCode.ERROR, json_flag: bool = True) -> Any:
    """The error document a failing command prints on stdout under ``--json``."""
    done = seawall(*args, *(["--json"] if json_flag else []), cwd=cwd)
    assert done.returncode == code, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    data = _valid(done.stdout)
    assert data["schema"] == "seawall.error/1" and data["error"]["exit_code"] == code
    return data["error"]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A repository with one halted session: one task done, one that failed twice the
    same way (its carryover filed, the wave breaker tripped)."""
    tmp = tmp_path_factory.mktemp("contract")
    repo = make_repo(tmp / "repo", {"src/app.py": "x = 1\n"})
    spec = tmp / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "app": [{"writes": {"src/app.py": "x = 2\n"}, "final": "STATUS: done — x is 2"}],
                "docs": [{"final": "STATUS: failed — no idea"}],
            }
        )
    )
    plan = write_plan(
        tmp / "plan.toml",
        session='name = "contract"',
        tasks=[
            {"id": "app", "prompt": "Bump x.", "scope": ["src/app.py"]},
            {"id": "docs", "prompt": "Write docs.", "scope": ["docs/**"]},
        ],
        extra='[session.tracker]\nkind = "local"\n',
    )
    done = seawall(
        "run", str(plan), "--repo", str(repo), "--json", "--heartbeat", "0",
        cwd=repo, env={"AGENT_SPEC": str(spec)},
    )  # fmt: skip
    assert done.returncode == ExitCode.HALTED, done.stdout + done.stderr
    outcome = _valid(done.stdout)
    assert outcome["schema"] == "seawall.outcome/1" and outcome["done"] == ["app"]
    progress = _lines(done.stderr)
    assert {line["schema"] for line in progress} == {"seawall.progress/1"}
    assert {"wave_started", "agent_finished"} <= {line["event"] for line in progress}
    return repo, plan, outcome["session"]


def test_every_command_prints_a_document_its_schema_accepts(
    ran: tuple[Path, Path, str], tmp_path: Path
) -> None:
    repo, plan, session = ran
    where = ("--repo", str(repo))
    plan_doc = _valid(_json("plan", str(plan), cwd=repo))
    assert [w["tasks"] for w in plan_doc["waves"]] == [["app", "docs"]]
    prompt = _valid(_json("prompt", str(plan), "app", cwd=repo))
    assert prompt["task"] == "app" and "Bump x." in prompt["prompt"]
    status = _valid(_json("status", *where, cwd=repo))
    assert status["schema"] == "seawall.status/1" and status["phase"] == "halted"
    report = _valid(_json("report", *where, cwd=repo))
    assert Path(report["report"]).is_file()
    assert _valid(_json("worktrees", "list", *where, cwd=repo))["worktrees"] == []
    pruned = _valid(_json("worktrees", "prune", *where, cwd=repo))
    assert pruned["removed"] == [] and pruned["kept"] == []
    assert _valid(_json("restore", *where, cwd=repo))["files"] == []
    listed = _valid(_json("carryover", "list", *where, cwd=repo))
    assert [issue["title"] for issue in listed["issues"]] and listed["label"] == "carryover"
    checked = _valid(_json("carryover", "validate", *where, cwd=repo))
    assert checked["missing"] == [] and checked["session"] == session
    reset = _valid(_json("reset", "--agent", "app", *where, cwd=repo))
    assert reset == {"schema": "seawall.reset-agent/1", "agent": "app", "cleared": False}
    lead = _valid(_json("reset", "--lead", *where, cwd=repo))
    assert lead["released"] is False
    killed = _valid(_json("kill", *where, cwd=repo))
    assert killed["phase"] == "killed"
    hooks = _valid(_json("hooks", "install", "--check", *where, cwd=repo, code=1))
    assert hooks["complete"] is False and hooks["lines"]
    adapters = _valid(_json("adapters", "list", cwd=repo))
    assert {"local", "command"} <= {row["name"] for row in adapters["adapters"]}
    assert _valid(_json("adapters", "check", cwd=repo))["ok"] is True
    runner = ("--dir", str(tmp_path / "runner"), *where)
    queued = _valid(_json("runner", "enqueue", str(plan), *runner, cwd=repo))
    assert queued["plan"].endswith("plan.toml")
    assert _valid(_json("runner", "status", *runner, cwd=repo))["items"]
    assert _valid(_json("runner", "resume", *runner, cwd=repo))["resumed"] is True
    idle = ("--dir", str(tmp_path / "idle"), *where)
    tick = _valid(_json("runner", "tick", *idle, cwd=repo))["tick"]
    assert tick["action"] and "item" not in tick  # an empty queue: nothing ran
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "system", "subtype": "init", "tools": []}) + "\n")
    replayed = _lines(_json("replay", str(transcript), cwd=repo))
    assert replayed[-1]["kind"] == "summary"
    watched = _valid(_json("watch", *where, cwd=repo))
    assert watched["session"] == session and {a["task"] for a in watched["agents"]} >= {"app"}
    served = _valid(_json("mcp", *where, cwd=repo))
    assert served["name"] == "seawall" and served["version"]
    assert {"next", "status", "trips"} <= {tool["name"] for tool in served["tools"]}
    assert served["resources"][0]["uri"] == "seawall://sessions/{session}/STATE.md"
    _wave_watch(tmp_path)
    _demo(tmp_path)
    steps = {"seawall.wave-prepare/1", "seawall.wave-review/1", "seawall.wave-done/1"}
    steps |= {"seawall.wave-halted/1", "seawall.next/1", "seawall.error/1"}
    # the lead's documents are checked against real output in test_lead_seat; every
    # other shipped schema was met by a real document here
    assert set(SCHEMAS) - steps <= SEEN, set(SCHEMAS) - steps - SEEN


def _wave_watch(tmp_path: Path) -> None:
    """``wave watch --json`` on a prepared wave whose agent repeats one call: the trip as
    it happens, then the agent's findings, each a line of its schema."""
    repo = make_repo(tmp_path / "step")
    plan = tmp_path / "step.toml"
    plan.write_text('[session]\nname = "w"\n[[task]]\nid = "a"\nprompt = "x"\nscope = ["a"]\n')
    seawall("wave", "prepare", str(plan), "--repo", str(repo), cwd=repo, check=True)
    transcripts = tmp_path / "subagents"
    transcripts.mkdir()
    calls = [bash(n, "ls src", "a.py", error=False) for n in range(1, 5)]
    transcript(transcripts / "agent-a1.jsonl", calls)
    args = ("wave", "watch", str(transcripts), "--for", "1", "--repo", str(repo))
    lines = _lines(_json(*args, cwd=repo))
    trip = next(line for line in lines if line["kind"] == "trip")
    assert trip["breaker"] == "breaker/loop" and trip["soft"] is False
    assert lines[-1]["kind"] == "findings" and lines[-1]["agent"] == "a1"


def _demo(tmp_path: Path) -> None:
    done = seawall("demo", "--dir", str(tmp_path / "demo"), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    demo = _valid(done.stdout)
    assert demo["session_exit_code"] in (ExitCode.OK, ExitCode.CARRYOVER)
    assert Path(demo["state_md"]).is_file() and Path(demo["repo"]).is_dir()
    assert demo["again"] == f"seawall demo --dir {tmp_path / 'demo'}"
    assert {line["schema"] for line in _lines(done.stderr)} == {"seawall.progress/1"}


def test_every_error_is_a_document_with_its_exit_code(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    bad = tmp_path / "bad.toml"
    bad.write_text('[session]\nname = "x"\n[[task]]\nid = "a"\nprompt = "p"\nmax_turns = "ten"\n')
    error = _error("plan", str(bad), cwd=repo)
    assert error["code"] == "plan" and error["file"] == str(bad) and error["line"] == 6
    assert error["task"] == "a" and error["field"] == "max_turns"
    usage = _error("plna", cwd=repo, code=ExitCode.USAGE)
    assert usage["code"] == "usage" and "did you mean 'plan'" in usage["message"]
    assert _error("status", "--repo", str(repo), cwd=repo)["code"] == "state"
    missing = _error("next", "--repo", str(repo), cwd=repo, json_flag=False)
    assert missing["code"] == "configuration" and "plan file" in missing["message"]
    for args in (
        ("prompt", str(bad), "b"),
        ("restore", "--repo", str(repo)),
        ("worktrees", "prune", "--repo", str(tmp_path)),
        ("carryover", "validate", "--repo", str(repo)),
        ("runner", "enqueue", str(tmp_path / "none.toml"), "--dir", str(tmp_path / "r")),
        ("kill", "--repo", str(repo)),
        ("report", "--repo", str(repo)),
        ("replay", str(tmp_path / "none.jsonl")),
        ("adapters", "check", str(bad)),
        ("watch", "--repo", str(repo)),
        ("wave", "watch", str(tmp_path), "--repo", str(repo)),
        ("demo", "--dir", str(bad)),
        ("run", str(bad), "--repo", str(repo)),
    ):
        error = _error(*args, cwd=repo)
        assert error["message"], args
