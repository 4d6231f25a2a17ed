"""The kits catch the dangerous bugs, with messages that name them.

Each deliberately buggy GitHub tracker below runs the kit in a real ``pytest``
subprocess, as a third party's suite would, with the kit loaded through seawall's
``pytest11`` plugin: the run must fail, in the named kit test, with a message naming
the bug and pytest's rewritten comparison next to it (``assert 2 == 1``, which only
assertion rewriting prints).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from seawall.adapters.runners.opencode import OpenCodeRunner
from seawall.events import Event
from seawall.runner import AgentRequest, AgentResult, AgentRunner, EmitFn
from seawall.testing.runner_processes import ProcessRunnerContract

ROOT = Path(__file__).resolve().parents[2]
KIT_AGENT = ROOT / "tests" / "fakes" / "bin" / "kit_agent.py"

_PRELUDE = """
from collections.abc import Iterator, Sequence

import pytest

from seawall.adapters.trackers.github import GitHubTracker
from seawall.errors import TrackerError
from seawall.testing.http import FakeServer
from seawall.testing.trackers import TrackerConformance
from seawall.tracker import Issue, IssueTracker, TrackerUnavailableError
from tests.fakes.github_server import GitHubService

TOKEN = "kit-token"

{bug}


class TestBuggy(TrackerConformance):
    secret = TOKEN

    @pytest.fixture
    def server(self) -> Iterator[FakeServer]:
        with FakeServer(GitHubService(token=TOKEN)) as running:
            yield running

    @pytest.fixture
    def fault_hook(self, server: FakeServer) -> GitHubService:
        assert isinstance(server.service, GitHubService)
        return server.service

    @pytest.fixture
    def tracker(self, server: FakeServer) -> Iterator[IssueTracker]:
        with Buggy(
            "octo/demo",
            token=TOKEN,
            base_url=server.origin + "/api/v3",
            request_interval=0,
            write_interval=0,
            timeout=1,
            per_page=3,
        ) as tracker:
            yield tracker
"""

BUGS = {
    "create-retries-on-5xx": (
        """
        class Buggy(GitHubTracker):
            def create_issue(self, *, title: str, body: str, labels: Sequence[str]) -> Issue:
                try:
                    return super().create_issue(title=title, body=body, labels=labels)
                except TrackerUnavailableError:
                    return super().create_issue(title=title, body=body, labels=labels)
        """,
        "test_a_create_that_meets_a_5xx_sends_exactly_one_request",
        ["the adapter (or its SDK) retries the create", "assert 2 == 1"],
    ),
    "lists-closed-issues": (
        """
        class Buggy(GitHubTracker):
            def list_issues(self, label: str) -> list[Issue]:
                from seawall.adapters.trackers.github import _issue

                found = self._repo.get_issues(state="all", labels=[label])
                return [_issue(item) for item in found]
        """,
        "test_closed_issues_are_not_listed",
        ["list_issues returned closed issue", "matches a closed issue forever", "assert 2 not in"],
    ),
    "5xx-as-permanent": (
        """
        class Buggy(GitHubTracker):
            def _call(self, operation, action):
                try:
                    return super()._call(operation, action)
                except TrackerUnavailableError as exc:
                    raise TrackerError(str(exc), tracker=self.name, operation=operation) from None
        """,
        "test_a_5xx_is_raised_as_transient",
        [
            "was raised as TrackerError: a 5xx must be TrackerUnavailableError",
            "where False = isinstance(",
        ],
    ),
    "labels-created-every-time": (
        """
        class Buggy(GitHubTracker):
            def ensure_labels(self, labels: Sequence[str]) -> None:
                for label in labels:
                    try:
                        self._call("create label", lambda: self._repo.create_label(label, "ededed"))
                    except TrackerError:
                        pass
        """,
        "test_labels_are_created_once",
        ["it creates labels that exist", "assert 7 <= 3"],
    ),
}


def _class_name(bug: str) -> str:
    return "Test" + "".join(part.capitalize() for part in bug.replace("5xx", "Fivexx").split("-"))


def _module() -> str:
    """One test module: a kit class per buggy tracker, and one for the correct tracker."""
    parts = [_PRELUDE.split("{bug}")[0]]
    body = _PRELUDE.split("{bug}")[1]
    bugs = {
        **{name: code for name, (code, _, _) in BUGS.items()},
        "correct": "class Buggy(GitHubTracker):\n    pass\n",
    }
    for name, code in bugs.items():
        adapter = f"Buggy{_class_name(name)}"
        parts.append(textwrap.dedent(code).replace("class Buggy(", f"class {adapter}("))
        parts.append(
            body.replace("class TestBuggy(", f"class {_class_name(name)}(").replace(
                "with Buggy(", f"with {adapter}("
            )
        )
    return "\n".join(parts)


@pytest.fixture(scope="module")
def kit_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """The kit run once over every buggy tracker, as a third party's suite runs it."""
    folder = tmp_path_factory.mktemp("kit")
    module = folder / "test_buggy_tracker.py"
    module.write_text(_module())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(module), "-q", "-p", "no:cacheprovider", "-rf"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=folder,
        env=env,
    )


def _section(output: str, cls: str, test: str) -> str:
    """The failure report of ``cls.test`` in pytest's output."""
    header = f" {cls}.{test}"
    start = output.find(header)
    assert start >= 0, f"{cls}.{test} did not fail:\n{output[-3000:]}"
    end = output.find("\n____", start + len(header) + 10)
    return output[start : end if end > 0 else len(output)]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_kit_fails_a_buggy_tracker_naming_the_bug(
    kit_run: subprocess.CompletedProcess[str], name: str
) -> None:
    _, failing_test, messages = BUGS[name]
    assert kit_run.returncode == 1, kit_run.stdout[-3000:]
    cls = _class_name(name)
    assert f"FAILED test_buggy_tracker.py::{cls}::{failing_test}" in kit_run.stdout
    report = _section(kit_run.stdout, cls, failing_test)
    for message in messages:
        assert message in report, f"{message!r} missing:\n{report[-4000:]}"


@pytest.mark.slow
def test_the_correct_tracker_passes_the_same_kit(
    kit_run: subprocess.CompletedProcess[str],
) -> None:
    assert "::TestCorrect::" not in kit_run.stdout, kit_run.stdout[-3000:]
    assert " passed" in kit_run.stdout


class DirectChildOnly(AgentRunner):
    """A buggy runner: no process group of its own for the agent, and a stop kills only
    the direct child."""

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        env = {**os.environ, "SEAWALL_TASK_ID": request.task_id}
        process = await anyio.open_process(
            [sys.executable, str(KIT_AGENT)], cwd=request.workspace, env=env
        )
        assert process.stdin is not None
        await process.stdin.aclose()
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                await request.stop.wait()
                group.cancel_scope.cancel()

            group.start_soon(watch)
            await process.wait()
            group.cancel_scope.cancel()
        if process.returncode is None:
            process.kill()  # the bug: the direct child only
            await process.wait()
        await process.aclose()
        return AgentResult(
            task_id=request.task_id,
            exit_code=process.returncode,
            cancelled=request.stop.is_set,
            stop_reason=request.stop.reason or "",
            is_error=True,
        )


@pytest.mark.slow
def test_the_runner_kit_fails_a_runner_that_kills_only_its_direct_child(tmp_path: Path) -> None:
    """The kit's check, run on the buggy runner here, fails naming the bug; the kit module
    is rewritten by seawall's pytest plugin, so the failure shows the comparison too."""
    kit = ProcessRunnerContract()
    kit.stop_bound = 2.0  # the grandchild is given 2 s to go; it never goes
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with pytest.raises(AssertionError) as failure:
        anyio.run(kit.test_a_stop_ends_the_agents_grandchildren_too, DirectChildOnly(), workspace)
    message = str(failure.value)
    assert "the runner killed only its direct child" in message
    assert "assert not True" in message, "the kit module's assertion was rewritten"


class IgnoresUnknownTools(OpenCodeRunner):
    """A buggy runner on the public base: it never stops an agent at an unknown tool."""

    @property
    def refuses_unknown_tools(self) -> bool:
        return False


@pytest.mark.slow
def test_the_runner_kit_fails_a_runner_that_ignores_an_unmapped_write_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{KIT_AGENT.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    kit = ProcessRunnerContract()
    kit.stop_bound = 2.0
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    buggy = IgnoresUnknownTools(kill_grace=0.2)
    with pytest.raises(AssertionError) as failure:
        anyio.run(kit.test_an_unmapped_write_tool_is_refused_in_strict, buggy, workspace)
    message = str(failure.value)
    assert "'frobnicate_file' call, a tool seawall has no name for, was let through" in message
    assert "timed_out=True" in message
    correct = tmp_path / "correct"
    correct.mkdir()
    anyio.run(
        kit.test_an_unmapped_write_tool_is_refused_in_strict,
        OpenCodeRunner(kill_grace=0.2),
        correct,
    )


class BlanksFinalOnError(OpenCodeRunner):
    """A planted bug: the final text is dropped when the agent exits non-zero."""

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        result = await super().run(request, emit)
        return result if result.exit_code in (0, None) else replace(result, final_text="")


class BuffersEvents(OpenCodeRunner):
    """A planted bug: events are held back and handed over once the agent has exited."""

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        held: list[Event] = []
        result = await super().run(request, held.append)
        for event in held:
            emitted = emit(event)
            if emitted is not None:
                await emitted
        return result


class LeavesChildren(AgentRunner):
    """A planted bug: the agent's process is waited for, its group never ended."""

    async def run(self, request: AgentRequest, emit: EmitFn) -> AgentResult:
        env = {**os.environ, "SEAWALL_TASK_ID": request.task_id}
        process = await anyio.run_process(
            [sys.executable, str(KIT_AGENT)], cwd=request.workspace, env=env, check=False
        )
        lines = process.stdout.decode().splitlines()
        final = next((line for line in reversed(lines) if '"result"' in line), "")
        return AgentResult(
            task_id=request.task_id,
            exit_code=process.returncode,
            final_text=final,
            is_error=process.returncode != 0,
        )


def _kit_failure(test: str, runner: AgentRunner, workspace: Path) -> str:
    kit = ProcessRunnerContract()
    kit.stop_bound = 2.0
    workspace.mkdir()
    with pytest.raises(AssertionError) as failure:
        anyio.run(getattr(kit, test), runner, workspace)
    return str(failure.value)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("test", "buggy", "named"),
    [
        (
            "test_a_failed_agent_keeps_its_final_text",
            BlanksFinalOnError(kill_grace=0.2),
            "keep the final text of a failed run",
        ),
        (
            "test_stop_from_the_event_callback_is_honoured",
            BuffersEvents(kill_grace=0.2),
            "it buffers the agent's events until the agent exits",
        ),
        (
            "test_a_finished_agent_leaves_no_process_behind",
            LeavesChildren(),
            "end what is left of its process group",
        ),
    ],
    ids=["blanks-final-on-error", "buffers-events", "leaves-children"],
)
def test_the_runner_kit_names_each_planted_bug(
    test: str, buggy: AgentRunner, named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each buggy runner fails the kit's check for it with a message naming the bug (a
    failure, never a skip), and the correct runner on the same base passes that check."""
    monkeypatch.setenv("PATH", f"{KIT_AGENT.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert named in _kit_failure(test, buggy, tmp_path / "buggy")
    kit = ProcessRunnerContract()
    kit.stop_bound = 2.0
    correct = tmp_path / "correct"
    correct.mkdir()
    anyio.run(getattr(kit, test), OpenCodeRunner(kill_grace=0.2), correct)
