"""`seawall demo`: every recovery path on a throwaway repository; a second run files no
duplicate issue."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from seawall.telemetry import KINDS, CarryoverFiled, WaveMerged, read_events, read_line
from tests.integration.sessionkit import show

#: what a Python repr looks like inside a JSON string: ``Name(field=``, ``Name('``,
#: ``Name()``, ``<... object at 0x...>``, ``<Enum.MEMBER: 'value'>``
_REPR = re.compile(r"\b[A-Z][A-Za-z]*\((?:[a-z_]+=|'|\)|\\\")|object at 0x|<[A-Z]\w*\.[A-Z_]+: ")


def _demo(tmp_path: Path, name: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    directory = tmp_path / name
    done = subprocess.run(
        [sys.executable, "-m", "seawall", "demo", "--dir", str(directory)],
        env={**os.environ, "HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "c")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, directory / "inventory"


def _sessions(repo: Path) -> list[str]:
    return [path.parent.name for path in (repo / ".seawall").glob("demo-*/state.json")]


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
    # both docs agents add docs/api.md: the earlier one's version merges, the later one's
    # is set aside in a fix task that the next wave runs, and the file ends with both
    (resolution,) = waves[1]["resolutions"]
    assert resolution["rule"].startswith("both-added")
    assert (resolution["kept"], resolution["fix_task"]) == ("docs-api", "docs-auth-fix-w2")
    assert by_wave[1]["docs-api"]["merged"] is True
    assert by_wave[1]["docs-auth"]["merged"] is False
    assert by_wave[2]["docs-auth-fix-w2"]["status"] == "done"
    assert by_wave[2]["docs-auth-fix-w2"]["merged"] is True
    api_md = show(repo, "main", "docs/api.md")
    assert api_md is not None
    assert "- GET /items" in api_md and "## Authentication" in api_md
    auth_row = next(line for line in done.stdout.splitlines() if "· docs-auth ·" in line)
    assert "set aside" in auth_row and "docs-auth-fix-w2" in auth_row
    assert "## Wave History" in done.stdout and "→ issue #1" in done.stdout
    assert "```mermaid" not in done.stdout
    assert state["phase"] == "done"
    # the summary points at the HTML report, which exists and names every agent
    report = next(line for line in done.stdout.splitlines() if line.startswith("report: "))
    page = Path(report.removeprefix("report: ")).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'data-task="report-csv"' in page
    fix_row = page[page.index('<tr class="agent" data-wave="3" data-task="docs-auth-fix-w2"') :]
    assert "<td>merged" in fix_row[: fix_row.index("</tr>")]
    auth_row = page[page.index('<tr class="agent" data-wave="2" data-task="docs-auth"') :]
    assert "docs-auth-fix-w2" in auth_row[: auth_row.index("</tr>")]
    # the tracker lives with the demo, not in a cache every clone shares
    issue = (tmp_path / "first" / "issues" / "1.md").read_text(encoding="utf-8")
    assert "- **Error signature:** ModuleNotFoundError: No module named 'csvkit'" in issue
    assert "### Final message (excerpt)" in issue and "reported on line" not in issue
    assert f"seawall resume --session {next(iter(_sessions(repo)))}" in issue
    # merge commits name their task once
    titles = subprocess.run(
        ["git", "log", "--format=%s", "main"], cwd=repo, capture_output=True, text=True
    ).stdout.splitlines()
    assert "report-csv: report.py writes CSV with the standard library" in titles
    assert not [t for t in titles if t.count(t.split(":", 1)[0] + ":") > 1]
    assert not (tmp_path / "home").exists() and not (tmp_path / "c").exists()

    again, repo2 = _demo(tmp_path, "first")
    assert again.returncode == 0, again.stdout + again.stderr
    second = _state(repo2)
    waves2 = second["waves"]
    assert isinstance(waves2, list)
    csv = next(a for a in waves2[1]["agents"] if a["task"] == "report-csv")
    # the first run's carryover was closed when the fix landed in wave 3, so the second
    # run's failure is new work: a new issue, closed again when its fix lands
    assert csv["issue"] == {"number": 2, "url": csv["issue"]["url"], "existing": False}
    issues = sorted((tmp_path / "first" / "issues").glob("*.md"))
    assert len(issues) == 2
    assert all("state: closed" in path.read_text() for path in issues)
    assert "landed; closed issue #2" in again.stderr
    # a demo in another folder has a tracker of its own: its first carryover is new
    other, _ = _demo(tmp_path, "other")
    assert other.returncode == 0, other.stdout + other.stderr
    assert "→ issue #1" in other.stdout and "→ existing" not in other.stdout


def test_the_demo_telemetry_is_typed_records_without_a_repr(tmp_path: Path) -> None:
    done, repo = _demo(tmp_path, "typed")
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = (repo / ".seawall").glob("demo-*/events.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines
    assert [line for line in lines if _REPR.search(line)] == []
    records = [read_line(line) for line in lines]
    assert [line for line, r in zip(lines, records, strict=True) if not isinstance(r, KINDS)] == []
    merges = list(read_events(path, WaveMerged))
    resolved = [r for merge in merges for r in merge.resolutions]
    assert [r.path for r in resolved] == ["docs/api.md"] and resolved[0].rule.startswith("both-")
    filed = [(c.task, c.kind, c.outcome) for c in read_events(path, CarryoverFiled)]
    assert ("report-csv", "FAILED", "created") in filed
