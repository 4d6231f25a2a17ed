"""`seawall demo`: every recovery path on a throwaway repository; a second run files no
duplicate issue."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.integration.sessionkit import show


def _demo(tmp_path: Path, name: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    directory = tmp_path / name
    done = subprocess.run(
        [sys.executable, "-m", "coordinator", "demo", "--dir", str(directory)],
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, directory / "inventory"


def _state(repo: Path) -> dict[str, object]:
    path = next((repo / ".seawall").glob("demo-*/state.json"))
    data: dict[str, object] = json.loads(path.read_text())
    return data


def test_demo_shows_every_path_and_files_no_duplicates(tmp_path: Path) -> None:
    done, repo = _demo(tmp_path, "first")
    assert done.returncode == 0, done.stdout + done.stderr
    state = _state(repo)
    waves = state["waves"]
    assert isinstance(waves, list)
    by_wave = [{a["task"]: a for a in wave["agents"]} for wave in waves]
    # a parallel in-place wave, then a worktree wave
    assert waves[0]["isolation"] == "none" and len(waves[0]["agents"]) == 2
    assert waves[1]["isolation"] == "worktree"
    # a partial carried forward and finished
    assert by_wave[0]["models"]["status"] == "partial"
    assert "Stock" in by_wave[0]["models"]["remaining"]
    assert by_wave[1]["models"]["status"] == "done"
    # a spiral, reverted and re-scoped, then done
    assert by_wave[1]["api-auth"]["status"] == "spiral"
    assert by_wave[1]["api-auth"]["merged"] is False
    assert by_wave[2]["api-auth"]["status"] == "done"
    # a failure with its carryover issue
    assert by_wave[1]["report-csv"]["status"] == "failed"
    assert by_wave[1]["report-csv"]["issue"]["number"] == 1
    # a merge conflict resolved by policy, recorded
    rules = [r["rule"] for r in waves[1]["resolutions"]]
    assert any(rule.startswith("both-added") for rule in rules)
    assert show(repo, "main", "docs/api.md") is not None
    assert "## Wave History" in done.stdout and "→ issue #1" in done.stdout
    assert "```mermaid" in done.stdout
    assert state["phase"] == "done"

    again, repo2 = _demo(tmp_path, "second")
    assert again.returncode == 0, again.stdout + again.stderr
    second = _state(repo2)
    waves2 = second["waves"]
    assert isinstance(waves2, list)
    csv = next(a for a in waves2[1]["agents"] if a["task"] == "report-csv")
    # the first run's carryover was closed when the fix landed in wave 3, so the second
    # run's failure is new work: a new issue, closed again when its fix lands
    assert csv["issue"] == {"number": 2, "url": csv["issue"]["url"], "existing": False}
    issues = sorted((tmp_path / "cache" / "seawall" / "demo-issues").glob("*.md"))
    assert len(issues) == 2
    assert all("state: closed" in path.read_text() for path in issues)
    assert "landed; closed issue #2" in again.stderr
