"""Runner settings: defaults, the [runner] table, SEAWALL_RUNNER_* and their errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from seawall.errors import ConfigurationError
from seawall.unattended.config import (
    RunnerSettings,
    default_runner_dir,
    load_settings,
    resolve_runner_dir,
)


def test_defaults_are_those_of_the_spec(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={})
    assert settings == RunnerSettings()
    assert settings.breaker_limit == 3
    assert settings.attempt_window_sec == 7 * 86_400
    assert settings.breaker_cooldown_sec == 1800
    assert settings.log_max_bytes == 5 * 1024 * 1024
    assert settings.ticks_max_bytes == 2 * 1024 * 1024
    assert settings.ticks_keep == 5000
    assert settings.attempted_max_bytes == 4 * 1024 * 1024


def test_the_table_then_the_environment(tmp_path: Path) -> None:
    (tmp_path / "runner.toml").write_text(
        '[runner]\nbreaker_limit = 5\nbreaker_cooldown_sec = 60\nrepo = "../repo"\n'
        'session_command = ["python3", "-m", "mine"]\n'
    )
    settings = load_settings(
        tmp_path,
        environ={
            "SEAWALL_RUNNER_BREAKER_LIMIT": "0",
            "SEAWALL_RUNNER_TICKS_KEEP": "10",
            "SEAWALL_RUNNER_DIR": "/elsewhere",  # read by resolve_runner_dir, not here
            "SEAWALL_OTHER": "ignored",
        },
    )
    assert settings.breaker_limit == 0
    assert settings.breaker_cooldown_sec == 60.0
    assert settings.ticks_keep == 10
    assert settings.repo == tmp_path / "../repo"  # relative to the file
    assert settings.session_command == ("python3", "-m", "mine")


def test_an_explicit_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_settings(tmp_path, config_file=tmp_path / "nope.toml", environ={})


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SEAWALL_RUNNER_BREAKER_LIMIT", "three", "SEAWALL_RUNNER_BREAKER_LIMIT: must be a whole"),
        ("SEAWALL_RUNNER_BREAKER_LIMIT", "-1", "SEAWALL_RUNNER_BREAKER_LIMIT: must be at least 0"),
        ("SEAWALL_RUNNER_BREAKER_LIMIT", "2.5", "SEAWALL_RUNNER_BREAKER_LIMIT: must be a whole"),
        ("SEAWALL_RUNNER_ATTEMPT_WINDOW_SEC", "0", "SEAWALL_RUNNER_ATTEMPT_WINDOW_SEC: must be gr"),
        ("SEAWALL_RUNNER_ATTEMPT_WINDOW_SEC", "nan", "must be a finite number"),
        (
            "SEAWALL_RUNNER_BREAKER_COOLDOWN_SEC",
            "-5",
            "_COOLDOWN_SEC: must not be neg",
        ),
        ("SEAWALL_RUNNER_LOG_MAX_BYTES", "0", "SEAWALL_RUNNER_LOG_MAX_BYTES: must be at least 1"),
        ("SEAWALL_RUNNER_TICKS_MAX_BYTES", "", "SEAWALL_RUNNER_TICKS_MAX_BYTES: must be a whole"),
        ("SEAWALL_RUNNER_TICKS_KEEP", "x", "SEAWALL_RUNNER_TICKS_KEEP"),
        ("SEAWALL_RUNNER_ATTEMPTED_MAX_BYTES", "4MB", "SEAWALL_RUNNER_ATTEMPTED_MAX_BYTES"),
        ("SEAWALL_RUNNER_SESSION_COMMAND", "'unclosed", "SEAWALL_RUNNER_SESSION_COMMAND: not a"),
        ("SEAWALL_RUNNER_BREAKER_LIMT", "3", "did you mean 'SEAWALL_RUNNER_BREAKER_LIMIT'"),
    ],
)
def test_bad_environment_values_name_the_variable(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        load_settings(Path("/nonexistent-runner-dir"), environ={name: value})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[runner]\nbreaker_limt = 3\n", r"\[runner\] breaker_limt: unknown key; did you mean "),
        ("[runner]\nbreaker_limit = true\n", r"\[runner\] breaker_limit: must be a whole"),
        ("[runner]\nbreaker_limit = 1.5\n", r"\[runner\] breaker_limit: must be a whole"),
        ("[runner]\nrepo = 3\n", r"\[runner\] repo: must be a non-empty path"),
        ("[runner]\nsession_command = []\n", r"session_command: must not be empty"),
        ("[runnr]\n", "unknown table"),
        ("runner = 3\n", r"\[runner\] must be a table"),
        ("[runner\n", "not valid TOML"),
        (
            "[runner]\nrate_limit_backoff_sec = 100\nrate_limit_backoff_max_sec = 10\n",
            "must not be smaller",
        ),
    ],
)
def test_bad_table_values_name_the_file_and_key(tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / "runner.toml").write_text(body)
    with pytest.raises(ConfigurationError, match=message) as info:
        load_settings(tmp_path, environ={})
    if "backoff" not in body:
        assert str(tmp_path / "runner.toml") in str(info.value)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (
            "# settings\n[runner]\nticks_keep = 10\nbreaker_limit = -1\n",
            ":4: [runner] breaker_limit:",
        ),
        ("[runner]\nrepo = 3\n", ":2: [runner] repo:"),
        ("\n[runnr]\nx = 1\n", ":2: [runnr] unknown table; did you mean 'runner'?"),
        ('[runner]\nticks_keep = "12"\nlog_max_bytes = "lots"\n', ":3: [runner] log_max_bytes:"),
    ],
)
def test_table_errors_name_the_line(tmp_path: Path, body: str, named: str) -> None:
    (tmp_path / "runner.toml").write_text(body)
    with pytest.raises(ConfigurationError) as info:
        load_settings(tmp_path, environ={})
    assert str(info.value).startswith(str(tmp_path / "runner.toml") + named)


def test_numbers_written_as_strings_in_the_table_are_read(tmp_path: Path) -> None:
    (tmp_path / "runner.toml").write_text('[runner]\nticks_keep = "12"\nsession_command = "a b"\n')
    settings = load_settings(tmp_path, environ={})
    assert (settings.ticks_keep, settings.session_command) == (12, ("a", "b"))


def test_the_runner_dir_option_then_the_variable_then_the_default(tmp_path: Path) -> None:
    assert resolve_runner_dir(tmp_path, environ={"SEAWALL_RUNNER_DIR": "/x"}) == tmp_path
    assert resolve_runner_dir(None, environ={"SEAWALL_RUNNER_DIR": "/x"}) == Path("/x")
    assert resolve_runner_dir(None, environ={}) == Path.cwd() / ".seawall" / "runner"
    assert default_runner_dir(tmp_path) == tmp_path / ".seawall" / "runner"
    with pytest.raises(ConfigurationError, match="SEAWALL_RUNNER_DIR"):
        resolve_runner_dir(None, environ={"SEAWALL_RUNNER_DIR": " "})


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        RunnerSettings().breaker_limit = 4  # type: ignore[misc]


def test_intake_settings(tmp_path: Path) -> None:
    settings = load_settings(
        tmp_path,
        environ={
            "SEAWALL_RUNNER_INTAKE_LABEL": " queue ",
            "SEAWALL_RUNNER_INTAKE_TRACKER": "github",
            "SEAWALL_RUNNER_INTAKE_REPOSITORY": "me/repo",
        },
    )
    assert (settings.intake_label, settings.intake_tracker, settings.intake_repository) == (
        "queue",
        "github",
        "me/repo",
    )
    with pytest.raises(ConfigurationError, match="SEAWALL_RUNNER_INTAKE_LABEL: must be a non-e"):
        load_settings(tmp_path, environ={"SEAWALL_RUNNER_INTAKE_LABEL": " "})
