"""The check an unverified-edits trip names: the plan's, else the project's own, and the
last verify a hook-mode breaker saw, kept in ``breaker.json`` for the next hook process."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from seawall.breakers import AgentBreaker, BreakerKind, Trip, open_breaker
from seawall.breakers.commands import verify_run
from seawall.breakers.project_check import check_to_run, detected_check, limits_with_check
from seawall.events import ToolCall, ToolResult
from seawall.model import BreakerLimits, SessionConfig
from seawall.plan.loader import parse_plan

PROJECTS: list[tuple[dict[str, str], str]] = [
    ({"Makefile": "all:\n\tcc x.c\n\ntest: all\n\t./t\n"}, "make test"),
    ({"GNUmakefile": "check:\n\t./t\n", "Cargo.toml": "[package]\n"}, "make check"),
    ({"Cargo.toml": "[package]\nname = 'x'\n"}, "cargo test"),
    ({"go.mod": "module x\n"}, "go test ./..."),
    ({"mix.exs": "defmodule X.MixProject do\nend\n"}, "mix test"),
    ({"package.json": json.dumps({"scripts": {"test": "vitest run"}})}, "npm test"),
    (
        {"package.json": json.dumps({"scripts": {"test": "jest"}}), "pnpm-lock.yaml": ""},
        "pnpm test",
    ),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}}), "yarn.lock": ""}, "yarn test"),
    ({"package.json": json.dumps({"scripts": {"build": "tsc -p ."}})}, "npm run build"),
    (
        {"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified"'}})},
        "",
    ),
    ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, "pytest"),
    ({"pyproject.toml": "[project]\nname = 'x'\n", "tests/test_x.py": ""}, "pytest"),
    ({"tox.ini": "[pytest]\naddopts = -q\n"}, "pytest"),
    ({"build.gradle.kts": "", "gradlew": ""}, "./gradlew test"),
    ({"pom.xml": "<project/>"}, "mvn test"),
    ({"README.md": "# nothing to run\n", "Makefile": "install:\n\tcp x /usr\n"}, ""),
    ({"package.json": "{not json"}, ""),
]


def project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(("files", "expected"), PROJECTS, ids=lambda v: str(v)[:40])
def test_the_project_declares_its_check(
    files: dict[str, str], expected: str, tmp_path: Path
) -> None:
    found = detected_check(project(tmp_path, files))
    assert (found or "") == expected
    if found is not None:
        assert verify_run(found), "running the named check clears the trip"


def test_the_plan_names_the_check_first(tmp_path: Path) -> None:
    repo = project(tmp_path, {"Cargo.toml": "[package]\n"})
    plain = SessionConfig()
    assert check_to_run(plain, repo) == "cargo test"  # the project's, when the plan has none
    checks = SessionConfig(checks=("ruff check .", "uv run pytest -q", "cargo test"))
    assert check_to_run(checks, repo) == "uv run pytest -q"  # the plan's first verify run
    named = replace(checks, breakers=BreakerLimits(verify_command="just ci"))
    assert check_to_run(named, repo) == "just ci"  # [session.breakers] verify_command wins
    scripts = SessionConfig(checks=("./ci.sh",))
    assert check_to_run(scripts, repo) == "cargo test"  # a script clears nothing when run
    assert check_to_run(scripts, tmp_path / "empty") == "./ci.sh"  # ...but is the plan's
    assert check_to_run(plain, tmp_path / "empty") == ""
    limits = limits_with_check(checks, repo)
    assert limits.verify_command == "uv run pytest -q"
    assert replace(limits, verify_command="") == checks.breakers  # nothing else changes


def test_the_plan_key_is_read_from_session_breakers() -> None:
    plan = parse_plan(
        '[session]\nname = "p"\n\n[session.breakers]\nverify_command = "make check"\n\n'
        '[[task]]\nid = "a"\nprompt = "x"\nscope = ["a.py"]\n'
    )
    assert plan.session.breakers.verify_command == "make check"


def edit(breaker: AgentBreaker, n: int) -> Trip | None:
    call = ToolCall(
        call_id=f"e{n}", name="Edit", arguments={"file_path": "a.py", "old_string": f"{n}"}
    )
    breaker.observe(call)
    return breaker.observe(ToolResult(call_id=f"e{n}", text="The file a.py has been updated."))


def test_the_soft_trip_names_the_limits_check_before_the_agents_last() -> None:
    limits = BreakerLimits(max_edits_without_verify=2, verify_command="cargo test")
    breaker = AgentBreaker(limits=limits, clock=lambda: 0.0)
    breaker.last_verify = "cargo check"
    edit(breaker, 1)
    trip = edit(breaker, 2)
    assert trip is not None and trip.kind is BreakerKind.UNVERIFIED_EDITS
    assert "run `cargo test`" in trip.evidence


HOOK_PROCESS = """
import sys
from pathlib import Path
from seawall.breakers import open_breaker
from seawall.events import ToolCall, ToolResult
from seawall.model import BreakerLimits

with open_breaker(Path(sys.argv[1]), "s-1", "t1",
                  limits=BreakerLimits(max_edits_without_verify=2)) as breaker:
    call = ToolCall(call_id="e9", name="Edit", arguments={"file_path": "b.py", "old_string": "x"})
    assert breaker.admit(call).allowed
    trip = breaker.observe(ToolResult(call_id="e9", text="The file b.py has been updated."))
    print(trip.evidence if trip is not None else "no trip")
"""


def test_hook_mode_keeps_the_last_verify_for_the_next_process(tmp_path: Path) -> None:
    limits = BreakerLimits(max_edits_without_verify=2)
    with open_breaker(tmp_path, "s-1", "t1", limits=limits) as breaker:
        edit(breaker, 0)
        run = ToolCall(call_id="v1", name="Bash", arguments={"command": "pytest -q tests"})
        assert breaker.admit(run).allowed
        breaker.observe(ToolResult(call_id="v1", text="1 passed", exit_code=0))
        edit(breaker, 1)
    saved = json.loads((tmp_path / ".seawall/s-1/agents/t1/breaker.json").read_text())
    assert saved["last_verify"] == "pytest -q tests"
    done = subprocess.run(
        [sys.executable, "-c", HOOK_PROCESS, str(tmp_path)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "run `pytest -q tests`" in done.stdout, done.stdout + done.stderr
