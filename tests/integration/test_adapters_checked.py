"""Adapters are checked before anything runs, with errors that name the entry point.

A real third-party distribution (a ``.dist-info`` with ``entry_points.txt`` and its
modules) is put on ``PYTHONPATH`` for real ``seawall`` subprocesses, the way an
installed package registers its adapters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_MODULES = {
    "good_tracker.py": """
        from seawall.adapters.trackers.memory import MemoryTracker

        class ForgejoTracker(MemoryTracker):
            name = "forgejo"
    """,
    "abstract_tracker.py": """
        from seawall.tracker import IssueTracker

        class Half(IssueTracker):
            def list_issues(self, label):
                return []
    """,
    "import_error_tracker.py": """
        import definitely_missing_dependency  # noqa: F401
    """,
    "raising_tracker.py": """
        from seawall.adapters.trackers.memory import MemoryTracker

        class Raising(MemoryTracker):
            @classmethod
            def from_config(cls, config, *, root):
                raise RuntimeError("the server URL is not set")
    """,
    "not_a_tracker.py": """
        class Plain:
            pass
    """,
}
_ENTRY_POINTS = """
[seawall.trackers]
forgejo = good_tracker:ForgejoTracker
nomodule = not_installed_module:Tracker
noattr = good_tracker:Missing
abstract = abstract_tracker:Half
importerror = import_error_tracker:Tracker
raising = raising_tracker:Raising
plain = not_a_tracker:Plain
github = good_tracker:ForgejoTracker
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A third-party distribution ``forge-adapters 1.2`` on a path of its own."""
    root = tmp_path_factory.mktemp("site")
    info = root / "forge_adapters-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: forge-adapters\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text(_ENTRY_POINTS)
    for name, text in _MODULES.items():
        (root / name).write_text(textwrap.dedent(text))
    return root


def seawall(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-m", "seawall", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
    )


def plan_file(tmp_path: Path, tracker: str, runner_kind: str = "command") -> Path:
    marker = tmp_path / "agent-started"
    plan = tmp_path / "plan.toml"
    plan.write_text(
        textwrap.dedent(
            f"""
            [session]
            name = "checked"
            agent = "worker"

            [session.tracker]
            kind = "{tracker}"

            [runners.worker]
            kind = "{runner_kind}"
            argv = ["sh", "-c", "touch {marker}; echo 'STATUS: done - ok'"]

            [[task]]
            id = "one"
            prompt = "do one thing"
            scope = ["one.txt"]
            """
        )
    )
    return plan


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    ):
        subprocess.run(argv, cwd=repo, check=True, capture_output=True, timeout=30)
    return repo


@pytest.mark.parametrize(
    ("kind", "cause"),
    [
        ("nomodule", "module 'not_installed_module' is not installed"),
        ("noattr", "module 'good_tracker' has no attribute 'Missing'"),
        ("abstract", "Half does not implement the abstract method(s) close_issue, comment"),
        ("importerror", "no module named 'definitely_missing_dependency'"),
        ("raising", "could not be constructed: RuntimeError: the server URL is not set"),
        ("plain", "is not a subclass of seawall.tracker.IssueTracker"),
        ("github", "uses the name of the built-in tracker 'github'"),
    ],
)
def test_a_broken_entry_point_fails_plan_naming_it_its_package_and_the_cause(
    site: Path, tmp_path: Path, kind: str, cause: str
) -> None:
    done = seawall(site, "plan", str(plan_file(tmp_path, kind)), cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    error = done.stderr.strip()
    assert error.count("\n") == 0, f"one line, not a traceback:\n{error}"
    assert cause in error
    assert "field 'session.tracker.kind'" in error
    assert "forge-adapters 1.2" in error
    if kind != "github":
        assert f"entry point seawall.trackers:{kind} = " in error


def test_a_misspelled_kind_suggests_the_name(site: Path, tmp_path: Path) -> None:
    done = seawall(site, "plan", str(plan_file(tmp_path, "forgjo")), cwd=tmp_path)
    assert done.returncode == 1
    assert "unknown tracker 'forgjo'; did you mean 'forgejo'?" in done.stderr
    done = seawall(site, "plan", str(plan_file(tmp_path, "local", "comand")), cwd=tmp_path)
    assert done.returncode == 1
    assert "field 'runners.worker.kind'" in done.stderr
    assert "did you mean 'command'?" in done.stderr


def test_a_third_party_tracker_loads_and_plan_names_its_package(site: Path, tmp_path: Path) -> None:
    done = seawall(site, "plan", str(plan_file(tmp_path, "forgejo")), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["adapters"]["tracker"] == "forgejo, forge-adapters 1.2"


@pytest.mark.parametrize("command", ["run", "wave-prepare"])
def test_run_and_wave_prepare_stop_before_any_agent_starts(
    site: Path, tmp_path: Path, command: str
) -> None:
    repo = repository(tmp_path)
    plan = plan_file(tmp_path, "forgjo")
    argv = ["run", str(plan)] if command == "run" else ["wave", "prepare", str(plan)]
    done = seawall(site, *argv, "--repo", str(repo), cwd=repo)
    assert done.returncode == 1
    assert "did you mean 'forgejo'?" in done.stderr
    assert not (tmp_path / "agent-started").exists(), "an agent ran"
    assert not (repo / ".seawall").exists(), "a session was recorded"


def test_adapters_list_names_kind_package_and_version(site: Path, tmp_path: Path) -> None:
    done = seawall(site, "adapters", "list", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "seawall.adapters/1"
    listed = document["adapters"]
    rows = {(r["kind"], r["name"], r["builtin"]): r for r in listed}
    assert rows[("tracker", "forgejo", False)]["package"] == "forge-adapters"
    assert rows[("tracker", "forgejo", False)]["version"] == "1.2"
    assert rows[("tracker", "github", True)]["package"] == "seawall"
    clashes = [r for r in listed if r["collides_with"]]
    assert [(r["name"], r["package"]) for r in clashes] == [("github", "forge-adapters")]
    assert rows[("runner", "command", True)]["package"] == "seawall"


def test_adapters_check_reports_each_broken_entry_and_fails(site: Path, tmp_path: Path) -> None:
    done = seawall(site, "adapters", "check", "--json", cwd=tmp_path)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False
    failed = {r["name"] for r in report["adapters"] if not r["ok"]}
    assert failed == {"nomodule", "noattr", "abstract", "importerror", "plain", "github"}


def test_adapters_check_with_a_plan_lists_and_probes(site: Path, tmp_path: Path) -> None:
    plan = plan_file(tmp_path, "forgejo")
    done = seawall(site, "adapters", "check", str(plan), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["kind"]: r for r in json.loads(done.stdout)["adapters"]}
    assert rows["tracker"]["detail"] == "listed 0 open carryover issue(s)"
    assert rows["runner"]["ok"] is True
