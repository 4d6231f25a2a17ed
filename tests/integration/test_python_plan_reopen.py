"""A session started from a Plan built in Python records the plan's rendering, so it can
be reopened and resumed after the coordinator is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import anyio
import pytest

from seawall.model import Plan, RunnerSpec, SessionConfig, Task
from seawall.plan import parse_plan
from seawall.runtime.processes import process_alive
from seawall.session.engine import Session
from seawall.state.ledger import SessionPhase
from tests.integration.sessionkit import make_repo, show
from tests.reliability.kit import FAULT_AGENT, ledger
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


def _plan(spec_dir: Path) -> Plan:
    runner = RunnerSpec(name="faulty", kind="command", argv=(sys.executable, str(FAULT_AGENT)))
    return Plan(
        session=SessionConfig(
            name="python-built",
            agent="faulty",
            accept_hooks_only=True,
            sandbox_writable=(str(spec_dir),),
        ),
        tasks=(
            Task(id="first", prompt='Write "first".\nThen stop.', scope=("src/first.py",)),
            Task(
                id="second",
                prompt="Write second \\ after first.",
                scope=("src/second.py",),
                depends_on=("first",),
            ),
        ),
        runners=MappingProxyType({"faulty": runner}),
    )


_DRIVER = """
import sys
import anyio
from seawall.session.engine import Session
from tests.integration.test_python_plan_reopen import _plan
from pathlib import Path

session = Session(_plan(Path(sys.argv[2])), repo=sys.argv[1])
anyio.run(session.run)
"""


def test_a_python_built_plan_killed_after_wave_one_is_reopened_and_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    pidfile = spec_dir / "second.pid"
    spec = {
        "first": [{"writes": {"src/first.py": "first = 1\n"}, "final": "STATUS: done — first"}],
        "second": [
            {"mode": "hang", "pidfile": str(pidfile)},
            {"writes": {"src/second.py": "second = 1\n"}, "final": "STATUS: done — second"},
        ],
    }
    (spec_dir / "faults.json").write_text(json.dumps(spec))
    monkeypatch.setenv("FAULT_SPEC", str(spec_dir / "faults.json"))
    driver = textwrap.dedent(_DRIVER)
    with subprocess.Popen(
        [sys.executable, "-c", driver, str(repo), str(spec_dir)],
        cwd=Path(__file__).parents[2],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    ) as process:
        try:
            written = wait_until(
                lambda: pidfile.read_text().strip() if pidfile.exists() else "",
                timeout=90,
                interval=0.1,
                what="the second wave's agent to write its pid",
                process=process,
            )
            agent = int(written)
        finally:
            process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
    os.kill(agent, signal.SIGKILL)  # the orphaned agent of the killed coordinator
    wait_until(lambda: not process_alive(agent), timeout=10, what="the orphaned agent to end")
    assert show(repo, "main", "src/first.py") == "first = 1\n"  # wave 1 merged
    recorded = ledger(repo)
    assert recorded.plan_text
    assert parse_plan(recorded.plan_text) == replace(_plan(spec_dir), path="<plan>")

    reopened = Session.open(repo)
    assert replace(reopened.plan, path=None) == _plan(spec_dir)
    result = anyio.run(reopened.resume)

    assert result.phase is SessionPhase.DONE
    assert set(result.done) == {"first", "second"}
    assert show(repo, "main", "src/second.py") == "second = 1\n"
