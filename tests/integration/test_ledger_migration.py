"""Sessions written by older ledgers resume, and a coordinator SIGKILLed at random
moments of its saves always leaves a ledger that loads as one of the saves it made.

``data/session-schema1.tar.gz`` is a real repository with its ``.seawall/`` as seawall
0.1.0 (schema 1: one ``state.json`` rewritten whole) left it; ``session-schema2.tar.gz``
the same as the schema-2 ledger (a snapshot and its journal, ``state.jsonl``) left it.
Each is a plan of two in-place waves (``a``, then ``b`` after it), run with the command
runner and killed by SIGKILL before the second wave's advance, so wave 1 is merged and
wave 2 is reviewed but not yet on ``main``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from seawall.adapters.runners.callable import CallableRunner
from seawall.report.progress import Progress
from seawall.runner import AgentRequest, EmitFn
from seawall.session.engine import Session
from seawall.state.ledger import SCHEMA_VERSION, SessionPhase, WavePhase
from seawall.state.store import load_state
from tests.integration.sessionkit import ROOT, git, seawall

DATA = Path(__file__).parent / "data"


def _unpack(tmp_path: Path, schema: int) -> Path:
    with tarfile.open(DATA / f"session-schema{schema}.tar.gz") as archive:
        archive.extractall(tmp_path, filter="data")
    return tmp_path / "repo"


async def _agent(request: AgentRequest, emit: EmitFn) -> str:
    del emit
    path = Path(request.workspace) / "src" / f"{request.task_id}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"{request.task_id} = 1\n")
    return f"STATUS: done — {request.task_id}"


@pytest.mark.parametrize("schema", [1, 2])
def test_an_older_session_reads_with_every_command_and_resumes(tmp_path: Path, schema: int) -> None:
    repo = _unpack(tmp_path, schema)
    (state_file,) = (repo / ".seawall").glob(f"v{schema}-*/state.json")
    assert json.loads(state_file.read_text())["schema"] == schema
    old = load_state(state_file)
    assert [(w.number, w.phase) for w in old.waves] == [
        (1, WavePhase.DONE),
        (2, WavePhase.REVIEWED),
    ]
    shown = seawall("status", "--json", "--repo", str(repo), cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["session"] == old.session
    assert git(repo, "show", "main:src/a.py") == "a = 1"
    unmerged = subprocess.run(
        ["git", "-C", str(repo), "show", "main:src/b.py"], capture_output=True
    )
    assert unmerged.returncode != 0  # reviewed, not merged

    with Path(os.devnull).open("w") as quiet:
        session = Session.open(
            repo, runner=CallableRunner(_agent), progress=Progress(quiet, live=False)
        )
        result = anyio.run(session.resume)

    assert result.phase is SessionPhase.DONE
    assert git(repo, "show", "main:src/b.py") == "b = 1"
    saved = json.loads(state_file.read_text())
    assert saved["schema"] == SCHEMA_VERSION and saved["phase"] == "done"
    assert [w["phase"] for w in saved["waves"]] == ["done", "done"]
    assert load_state(state_file).tasks["b"].status == "done"
    report = seawall("report", "--json", "--repo", str(repo), cwd=repo)
    assert report.returncode == 0, report.stderr


_SAVER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from seawall.state.ledger import AgentRecord, SessionState, WaveRecord
    from seawall.state.store import StateStore

    store = StateStore(Path(sys.argv[1]), "s1")
    state = SessionState(session="s1", name="n", repo=sys.argv[1], target_branch="main",
                         start_commit="0" * 40, plan_text="x" * 4000)
    if store.exists():
        state = store.load()
    count = int(state.cost_usd)
    while True:
        count += 1
        if count % 5 == 1:
            state.waves.append(WaveRecord(number=len(state.waves) + 1, tasks=[],
                                          isolation="none", enforcement="strict", max_turns=3))
        wave = state.waves[-1]
        wave.agents.append(AgentRecord(task=f"t{count}", summary="s" * (count * 37 % 3000)))
        state.task(f"t{count}").attempts = count
        state.cost_usd = float(count)
        store.save(state)
        print(count, flush=True)
    """
)


def _check(state_cost: float, state_tasks: dict[str, int], agents: list[str]) -> None:
    count = int(state_cost)
    assert sorted(state_tasks, key=lambda t: int(t[1:])) == [f"t{i}" for i in range(1, count + 1)]
    assert all(state_tasks[f"t{i}"] == i for i in range(1, count + 1))
    assert agents == [f"t{i}" for i in range(1, count + 1)]


@pytest.mark.slow
def test_sigkill_at_random_moments_of_saves_leaves_a_loadable_ledger(tmp_path: Path) -> None:
    rng = random.Random(1402)
    script = tmp_path / "saver.py"
    script.write_text(_SAVER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    last = 0
    for _ in range(12):
        process = subprocess.Popen(
            [sys.executable, str(script), str(tmp_path)],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert process.stdout is not None
        first = int(process.stdout.readline())  # it has started saving
        time.sleep(rng.uniform(0.0, 0.3))
        process.send_signal(signal.SIGKILL)
        printed = process.communicate(timeout=30)[0].split()
        assert process.returncode == -signal.SIGKILL
        state = load_state(tmp_path / ".seawall" / "s1" / "state.json")
        count = int(state.cost_usd)
        # every save that returned is there; the one the kill interrupted may or may not be
        done = int(printed[-1]) if printed else first
        assert count in (done, done + 1), (count, done)
        tasks = {task: record.attempts for task, record in state.tasks.items()}
        _check(state.cost_usd, tasks, [a.task for w in state.waves for a in w.agents])
        last = count
    assert last > 12  # the saver made progress across the kills
