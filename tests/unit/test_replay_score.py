"""``seawall replay --score LABELS``: labelled stretches of transcripts scored against
their replay (on time, early, late, missed; hard and soft trips of productive work)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from seawall.errors import ConfigurationError
from seawall.model import BreakerLimits
from seawall.replay_score import Outcome, load_labels, score_labels


def line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


def bash(n: int, command: str, output: str, *, error: bool) -> list[str]:
    call_id = f"toolu_{n}"
    return [
        line({"type": "assistant", "message": {"id": f"m{n}", "role": "assistant", "content": [
            {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}]}}),
        line({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": output,
             "is_error": error}]}}),
    ]  # fmt: skip


def edit(n: int, path: str) -> list[str]:
    call_id = f"toolu_{n}"
    arguments = {"file_path": path, "old_string": f"o{n}", "new_string": f"n{n}"}
    return [
        line({"type": "assistant", "message": {"id": f"m{n}", "role": "assistant", "content": [
            {"type": "tool_use", "id": call_id, "name": "Edit", "input": arguments}]}}),
        line({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id,
             "content": f"The file {path} has been updated."}]}}),
    ]  # fmt: skip


def transcript(path: Path, steps: list[list[str]]) -> Path:
    init = line({"type": "system", "subtype": "init", "session_id": "s1", "tools": []})
    path.write_text(init + "".join(text for step in steps for text in step), encoding="utf-8")
    return path


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Two transcripts: ``stuck``: 2 passing calls, then the same push failing at steps
    3, 4, 5 (command-failures trips at 5); ``edits``: 5 edits, then a passing ls."""
    transcript(
        tmp_path / "stuck.jsonl",
        [bash(1, "ls", "a", error=False), bash(2, "cat a", "x", error=False)]
        + [bash(n, "git push", "Exit code 1\nrejected: fetch first", error=True)
           for n in (3, 4, 5)],
    )  # fmt: skip
    transcript(
        tmp_path / "edits.jsonl",
        [edit(n, f"src/m{n}.py") for n in range(1, 6)] + [bash(6, "ls", "a", error=False)],
    )
    return tmp_path


def labels(path: Path, *stretches: str, head: str = "") -> Path:
    body = "".join(f"\n[[stretch]]\n{stretch}\n" for stretch in stretches)
    path.write_text(head + body, encoding="utf-8")
    return path


def stuck(stop_at: int, **more: object) -> str:
    extra = "".join(f"\n{key} = {json.dumps(value)}" for key, value in more.items())
    return f'transcript = "stuck.jsonl"\nstuck = true\nstop_at = {stop_at}{extra}'


@pytest.mark.parametrize(
    ("stretch", "outcome"),
    [
        (stuck(5), Outcome.ON_TIME),
        (stuck(4), Outcome.ON_TIME),  # within one step
        (stuck(3), Outcome.LATE),  # a careful reader stops at the first failure
        (stuck(8), Outcome.EARLY),
        (stuck(2, first=1, last=4), Outcome.MISSED),  # the trip at 5 is outside the stretch
        ('transcript = "stuck.jsonl"\nstuck = false\nfirst = 1\nlast = 2', Outcome.CLEAN),
        ('transcript = "stuck.jsonl"\nstuck = false', Outcome.HARD),
        ('transcript = "edits.jsonl"\nstuck = false', Outcome.SOFT),
    ],
)
def test_each_stretch_gets_its_outcome(runs: Path, stretch: str, outcome: Outcome) -> None:
    limits = BreakerLimits(max_edits_without_verify=4)
    (score,), total = score_labels(labels(runs / "l.toml", stretch), limits=limits)
    assert score.outcome is outcome
    if outcome in (Outcome.ON_TIME, Outcome.EARLY, Outcome.LATE, Outcome.HARD):
        assert (score.step, score.breaker) == (5, "breaker/command-failures")
    if outcome is Outcome.SOFT:
        assert (score.step, score.breaker) == (4, "breaker/unverified-edits")
    counts = (total.on_time, total.early, total.late, total.missed)
    assert sum(counts) == total.stuck and total.clean + total.soft + total.hard == total.productive


def test_the_tolerance_and_a_labelled_breaker(runs: Path) -> None:
    path = labels(runs / "l.toml", stuck(3, breaker="loop"), head="tolerance = 2\n")
    (score,), _ = score_labels(path)
    assert score.outcome is Outcome.ON_TIME
    assert "labelled breaker/loop" in score.text() and "breaker/command-failures" in score.text()


def test_a_soft_trip_never_counts_as_stopping_a_stuck_stretch(runs: Path) -> None:
    path = labels(runs / "l.json", "")
    path.write_text(json.dumps({"stretch": [
        {"transcript": "edits.jsonl", "stuck": True, "stop_at": 4}]}))  # fmt: skip
    (score,), _ = score_labels(path, limits=BreakerLimits(max_edits_without_verify=4))
    assert score.outcome is Outcome.MISSED


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "no [[stretch]] entries"),
        ("[[stretch]]\nstuck = true\nstop_at = 3\n", "stretch[0]: transcript is required"),
        ('[[stretch]]\ntranscript = "a"\nstuck = true\n', "stretch[0]: stop_at is required"),
        ('[[stretch]]\ntranscript = "a"\nstuck = false\nstop_at = 2\n', "stuck stretch only"),
        ('[[stretch]]\ntranscript = "a"\nstuck = "yes"\n', "stuck must be a bool"),
        ('[[stretch]]\ntranscript = "a"\nstuck = false\nstep = 2\n', "unknown key 'step'"),
        ('[[stretch]]\ntranscript = "a"\nstuck = false\nfirst = 5\nlast = 2\n', "before first"),
        ("[[stretch]\n", "not a labels file"),
    ],
)
def test_bad_labels_name_the_file_the_stretch_and_the_field(
    tmp_path: Path, body: str, message: str
) -> None:
    path = tmp_path / "labels.toml"
    path.write_text(body)
    with pytest.raises(ConfigurationError) as caught:
        load_labels(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_a_missing_transcript_names_its_stretch(tmp_path: Path) -> None:
    path = labels(tmp_path / "l.toml", 'transcript = "gone.jsonl"\nstuck = false')
    with pytest.raises(ConfigurationError, match=r"stretch\[0\]: no transcript .*gone.jsonl"):
        score_labels(path)


def test_the_root_is_read_from_the_file_or_given(runs: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "labels"
    elsewhere.mkdir()
    path = labels(elsewhere / "l.toml", stuck(5), head='root = ".."\n')
    assert load_labels(path)[0][0].transcript == elsewhere / ".." / "stuck.jsonl"
    assert load_labels(path, root=runs)[0][0].transcript == runs / "stuck.jsonl"


def seawall(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "seawall", *args],
        cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_the_command_prints_each_stretch_and_the_score(runs: Path) -> None:
    path = labels(
        runs / "l.toml",
        stuck(5),
        stuck(3),
        'transcript = "stuck.jsonl"\nstuck = false\nfirst = 1\nlast = 2',
        'transcript = "edits.jsonl"\nstuck = false',
    )
    done = seawall("replay", "--score", str(path), cwd=runs)
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert len(rows) == 5 and rows[0].startswith("[0] ") and ": on time (" in rows[0]
    assert rows[-1].endswith(
        "2 stuck: 1 on time, 1 late, 0 early, 0 missed; 2 productive: "
        "0 with a hard trip, 0 with only a soft trip, 2 clean"
    )  # 25 edits are the default limit: five trip nothing
    as_json = seawall("replay", "--score", str(path), "--json", cwd=runs)
    objects = [json.loads(row) for row in as_json.stdout.splitlines()]
    assert [o["kind"] for o in objects] == ["stretch"] * 4 + ["score"]
    assert objects[1]["outcome"] == "late" and objects[-1]["late"] == 1
    both = seawall("replay", "--score", str(path), str(runs / "stuck.jsonl"), cwd=runs)
    assert both.returncode == 1 and "the labels name the transcripts" in both.stderr
    neither = seawall("replay", cwd=runs)
    assert neither.returncode == 1 and "--score LABELS" in neither.stderr
