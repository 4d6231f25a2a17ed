"""Runner settings: defaults, a ``[runner]`` TOML table, then ``SEAWALL_RUNNER_*``.

Nothing is read at import. ``load_settings`` reads the file and the environment only
when called; a bad value is a ``ConfigurationError`` naming the key or the variable.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

from seawall.codec import JsonObject
from seawall.config import FieldError, check_keys, field_line, field_values, ruled
from seawall.config.toml_text import toml_problem
from seawall.errors import ConfigurationError

__all__ = [
    "CONFIG_FILE_NAME",
    "DIR_ENV",
    "ENV_PREFIX",
    "RunnerSettings",
    "default_runner_dir",
    "load_settings",
    "resolve_runner_dir",
]

ENV_PREFIX = "SEAWALL_RUNNER_"
DIR_ENV = "SEAWALL_RUNNER_DIR"
CONFIG_FILE_NAME = "runner.toml"
_DAY = 86_400
_MB = 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class RunnerSettings:
    """Every setting of the unattended runner, with its default.

    Each field is the ``[runner]`` key of the same name and the environment variable
    ``SEAWALL_RUNNER_<NAME IN CAPITALS>``.
    """

    # consecutive failed attempts that open the breaker; 0 disables
    breaker_limit: int = ruled(3, minimum=0)
    attempt_window_sec: float = ruled(7.0 * _DAY, above=0)  # the trailing window the breaker reads
    breaker_cooldown_sec: float = 1800.0  # open -> half-open (one probe) after this
    rate_limit_backoff_sec: float = ruled(300.0, above=0)  # first wait after a rate limit; doubles
    rate_limit_backoff_max_sec: float = ruled(6 * 3600.0, above=0)  # the doubling stops here
    session_timeout_sec: float = ruled(4 * 3600.0, above=0)  # wall clock of one session
    # failed runs of one item before it is given up; 0: no limit
    max_attempts: int = ruled(3, minimum=0)
    log_max_bytes: int = ruled(5 * _MB, minimum=1)  # runner.log is truncated past this
    ticks_max_bytes: int = ruled(2 * _MB, minimum=1)  # ticks.jsonl is trimmed past this ...
    ticks_keep: int = ruled(5000, minimum=1)  # ... to its newest lines
    attempted_max_bytes: int = ruled(4 * _MB, minimum=1)  # attempted.jsonl is compacted past this
    repo: Path | None = None  # the repository sessions run in; None: the current directory
    # argv before ``PLAN --repo REPO``; empty: ``<this python> -m coordinator run``
    session_command: tuple[str, ...] = ruled((), nonempty=True, words=True)
    # queue open tracker issues with this label
    intake_label: str | None = ruled(None, nonempty=True)
    # the tracker intake lists (a seawall.trackers name)
    intake_tracker: str = ruled("local", nonempty=True)
    # "owner/name" on GitHub, "group/project" on GitLab
    intake_repository: str | None = ruled(None, nonempty=True)
    # the runner the generated plans name in [session]
    intake_agent: str | None = ruled(None, nonempty=True)


_KEYS = tuple(f.name for f in fields(RunnerSettings))


def default_runner_dir(cwd: Path | None = None) -> Path:
    """``<cwd>/.seawall/runner``: where the runner keeps its state by default."""
    return (cwd or Path.cwd()) / ".seawall" / "runner"


def resolve_runner_dir(
    option: str | os.PathLike[str] | None, *, environ: Mapping[str, str] | None = None
) -> Path:
    """The runner directory: the option, else ``SEAWALL_RUNNER_DIR``, else the default."""
    if option is not None:
        return Path(option)
    env = os.environ if environ is None else environ
    value = env.get(DIR_ENV)
    if value is not None:
        if not value.strip():
            raise ConfigurationError(f"{DIR_ENV} is set but empty; unset it or give a path")
        return Path(value)
    return default_runner_dir()


def load_settings(
    runner_dir: Path,
    *,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> RunnerSettings:
    """Read the ``[runner]`` table, then apply ``SEAWALL_RUNNER_*`` variables over it.

    ``config_file`` defaults to ``<runner_dir>/runner.toml``; a missing default file is
    fine, a missing explicit one is an error. Unknown keys and variables are errors.
    """
    settings = RunnerSettings()
    path = config_file or runner_dir / CONFIG_FILE_NAME
    if config_file is not None or path.exists():
        settings = replace(settings, **_file_values(path))
        if settings.repo is not None and not settings.repo.is_absolute():
            settings = replace(settings, repo=path.parent / settings.repo)  # relative to file
    env = os.environ if environ is None else environ
    settings = replace(settings, **_env_values(env))
    if settings.rate_limit_backoff_max_sec < settings.rate_limit_backoff_sec:
        raise ConfigurationError(
            "rate_limit_backoff_max_sec must not be smaller than rate_limit_backoff_sec "
            f"({settings.rate_limit_backoff_max_sec} < {settings.rate_limit_backoff_sec})"
        )
    return settings


def _file_values(path: Path) -> JsonObject:  # from the user's file, checked
    """The settings the ``[runner]`` table of ``path`` sets, converted and checked."""
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except FileNotFoundError as exc:
        raise ConfigurationError(f"{path}: the runner config file does not exist") from exc
    except tomllib.TOMLDecodeError as exc:
        problem = toml_problem(exc, text)
        where = f"{path}:{problem.line or 0}:{problem.column or 0}"
        hint = f" ({problem.hint})" if problem.hint else ""
        raise ConfigurationError(f"{where}: not valid TOML: {problem.message}{hint}") from exc
    try:
        check_keys(data, ("runner",), what="table")
    except FieldError as exc:
        where = _at(path, text, exc.field)
        raise ConfigurationError(f"{where}: [{exc.field}] {exc.message}") from None
    table = data.get("runner", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"{_at(path, text, 'runner')}: [runner] must be a table")
    try:
        return field_values(RunnerSettings, table, text=True)  # "3" is read as 3, as in a variable
    except FieldError as exc:
        where = _at(path, text, f"runner.{exc.field}")
        raise ConfigurationError(f"{where}: [runner] {exc.field}: {exc.message}") from None


def _at(path: Path, text: str, field: str) -> str:
    """``path:line`` of ``field`` in the file, or the path when its line is not known."""
    line = field_line(text, field)
    return f"{path}:{line}" if line else str(path)


def _env_values(env: Mapping[str, str]) -> JsonObject:  # the user's variables, checked
    """The settings the ``SEAWALL_RUNNER_*`` variables set, converted and checked."""
    values = {
        name[len(ENV_PREFIX) :].lower(): value
        for name, value in env.items()
        if name.startswith(ENV_PREFIX) and name != DIR_ENV
    }
    try:
        check_keys(values, _KEYS, what="runner setting", spell=_variable)
        return field_values(RunnerSettings, values, text=True)
    except FieldError as exc:
        raise ConfigurationError(f"{_variable(exc.field)}: {exc.message}") from None


def _variable(key: str) -> str:
    return ENV_PREFIX + key.upper()
