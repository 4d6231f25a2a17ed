"""The preflight runs an agent CLI's version check once per program, not per runner."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from seawall.errors import RunnerError
from seawall.runner import AgentRequest, AgentResult, AgentRunner, RunnerProbe
from seawall.session.preflight import preflight_runners


class ProbedRunner(AgentRunner):
    """A runner that is only ever probed here."""

    def __init__(self, executable: Path, env: dict[str, str] | None = None) -> None:
        self.executable = executable
        self.env = env or {}

    def probe(self) -> RunnerProbe:
        return RunnerProbe(
            executable=str(self.executable), version_args=("--version",), env=self.env
        )

    async def run(self, request: AgentRequest, emit: object) -> AgentResult:
        raise NotImplementedError


def counting_cli(tmp_path: Path, code: int = 0) -> tuple[Path, Path]:
    calls = tmp_path / "calls"
    script = tmp_path / "cli"
    script.write_text(f'#!/bin/sh\necho "$@" >> {calls}\necho 1.0\nexit {code}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, calls


def test_two_runners_of_one_program_are_probed_once(tmp_path: Path) -> None:
    cli, calls = counting_cli(tmp_path)
    runners = [("claude", ProbedRunner(cli)), ("claude-bare", ProbedRunner(cli))]
    preflight_runners(runners, cwd=tmp_path)
    assert calls.read_text().splitlines() == ["--version"]


def test_a_runner_with_another_environment_is_probed_again(tmp_path: Path) -> None:
    cli, calls = counting_cli(tmp_path)
    runners = [("a", ProbedRunner(cli)), ("b", ProbedRunner(cli, {"HOME": str(tmp_path)}))]
    preflight_runners(runners, cwd=tmp_path)
    assert calls.read_text().splitlines() == ["--version", "--version"]


def test_a_program_that_fails_its_probe_still_names_the_first_runner(tmp_path: Path) -> None:
    cli, _ = counting_cli(tmp_path, code=3)
    with pytest.raises(RunnerError, match=r"runner 'first' cannot start: .* exited 3"):
        preflight_runners(
            [("first", ProbedRunner(cli)), ("second", ProbedRunner(cli))], cwd=tmp_path
        )
