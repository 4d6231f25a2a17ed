"""docs/extending.md's sample runner, taken from the page as written, is a whole runner.

The block marked ``<!-- docs: sample-runner -->`` is written to a module of its own, as an
author would copy it. The runner kit's process contract then runs on it in a real
``pytest`` subprocess (as a third party's suite would), against ``tests/fakes/bin/acme``,
a fake of the page's made-up CLI; and a session runs it to a merged change.
"""

from __future__ import annotations

import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import anyio
import pytest

from seawall import Session
from seawall.model import Plan, SessionConfig, Task
from seawall.report.progress import Progress
from seawall.runner import AgentRequest, AgentResult, AgentRunner, EmitFn, undeclared_processes
from tests.integration.sessionkit import git, make_repo, show

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "extending.md"
FAKE_BIN = ROOT / "tests" / "fakes" / "bin"

pytestmark = pytest.mark.slow

_KIT = """
import os
from pathlib import Path

import pytest

from acme_runner import AcmeRunner
from seawall.runner import AgentRunner
from seawall.testing.runner_processes import ProcessRunnerContract


class TestAcmeRunner(ProcessRunnerContract):
    @pytest.fixture
    def runner(self) -> AgentRunner:
        return AcmeRunner(kill_grace=0.5)
"""


def sample() -> str:
    """The sample runner's code, exactly as the page shows it."""
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(r"<!-- docs: sample-runner -->\n```python\n(.*?)^```", text, re.S | re.M)
    assert found, f"{PAGE} has no block marked <!-- docs: sample-runner -->"
    return found.group(1)


def written(folder: Path) -> Path:
    path = folder / "acme_runner.py"
    path.write_text(sample(), encoding="utf-8")
    return path


def imported(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("acme_runner", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_process_kit_passes_on_the_sample_runner_as_written(tmp_path: Path) -> None:
    written(tmp_path)
    (tmp_path / "test_acme_kit.py").write_text(_KIT, encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_acme_kit.py"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert "failed" not in summary and "skipped" not in summary, done.stdout[-4000:]
    assert re.search(r"\b(1[5-9]|[2-9]\d) passed\b", summary), summary


def test_a_session_runs_the_sample_runner_to_a_merged_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    runner_cls = imported(written(tmp_path)).AcmeRunner
    runner: AgentRunner = runner_cls(kill_grace=0.5)
    assert undeclared_processes(runner_cls) is None, "built on StreamingCliRunner: declared"
    repo = make_repo(tmp_path / "repo")
    plan = Plan(
        session=SessionConfig(name="acme", accept_hooks_only=True),
        tasks=(Task(id="finish", prompt="write done.txt", scope=("done.txt",)),),
    )
    result = anyio.run(Session(plan, repo=repo, runner=runner).run)
    assert list(result.done) == ["finish"], result
    assert show(repo, "HEAD", "done.txt") == "done\n"
    assert "finish" in git(repo, "log", "--format=%s", "-3")


class Undeclared(AgentRunner):
    """A plain runner that says nothing of its agents being processes."""

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        raise NotImplementedError("never run: only its class is judged")


def test_a_plain_runner_that_does_not_say_whether_it_starts_processes_is_warned_about() -> None:
    warning = undeclared_processes(Undeclared)
    assert warning is not None
    assert "does not declare starts_processes" in warning
    assert "without the OS sandbox" in warning

    class Declared(Undeclared):
        starts_processes = False

    assert undeclared_processes(Declared) is None


class UndeclaredWriter(AgentRunner):
    """A plain runner, working, that does not say whether its agents are processes."""

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        (request.workspace / "notes.txt").write_text("noted\n")
        return AgentResult(task_id=request.task_id, final_text="STATUS: done")


def test_the_console_warns_once_about_a_runner_that_does_not_declare_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = Plan(
        session=SessionConfig(name="plain", accept_hooks_only=True),
        tasks=(
            Task(id="one", prompt="note", scope=("notes.txt",)),
            Task(id="two", prompt="note", scope=("notes.txt",), depends_on=("one",)),
        ),
    )
    out = io.StringIO()
    progress = Progress(out, live=False)
    result = anyio.run(Session(plan, repo=repo, runner=UndeclaredWriter(), progress=progress).run)
    assert list(result.done) == ["one", "two"], result
    warnings = [line for line in out.getvalue().splitlines() if "starts_processes" in line]
    assert len(warnings) == 1, out.getvalue()
    assert "UndeclaredWriter does not declare starts_processes" in warnings[0]
