"""Runner settings: defaults, a ``[runner]`` TOML table, then ``SEAWALL_RUNNER_*``.

Nothing is read at import. ``load_settings`` reads the file and the environment only
when called; a bad value is a ``ConfigurationError`` naming the key or the variable.
"""

from __future__ import annotations

import difflib
import os
import shlex
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from coordinator.errors import ConfigurationError

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

    breaker_limit: int = 3  # consecutive failed attempts that open the breaker; 0 disables
    attempt_window_sec: float = 7 * _DAY  # the trailing window the breaker reads
    breaker_cooldown_sec: float = 1800.0  # open -> half-open (one probe) after this
    rate_limit_backoff_sec: float = 300.0  # first wait after a rate limit; doubles
    rate_limit_backoff_max_sec: float = 6 * 3600.0  # the doubling stops here
    session_timeout_sec: float = 4 * 3600.0  # wall clock of one session
    max_attempts: int = 3  # failed runs of one item before it is given up; 0: no limit
    log_max_bytes: int = 5 * _MB  # runner.log is truncated past this
    ticks_max_bytes: int = 2 * _MB  # ticks.jsonl is trimmed past this ...
    ticks_keep: int = 5000  # ... to its newest lines
    attempted_max_bytes: int = 4 * _MB  # attempted.jsonl is compacted past this
    repo: Path | None = None  # the repository sessions run in; None: the current directory
    # argv before ``PLAN --repo REPO``; empty: ``<this python> -m coordinator run``
    session_command: tuple[str, ...] = ()
    intake_label: str | None = None  # queue open tracker issues with this label
    intake_tracker: str = "local"  # the tracker intake lists (a seawall.trackers name)
    intake_repository: str | None = None  # "owner/name" on GitHub, "group/project" on GitLab
    intake_agent: str | None = None  # the runner the generated plans name in [session]


_INT_MINIMUM: Mapping[str, int] = {
    "breaker_limit": 0,
    "max_attempts": 0,
    "log_max_bytes": 1,
    "ticks_max_bytes": 1,
    "ticks_keep": 1,
    "attempted_max_bytes": 1,
}
_POSITIVE_FLOATS = frozenset(
    {
        "attempt_window_sec",
        "rate_limit_backoff_sec",
        "rate_limit_backoff_max_sec",
        "session_timeout_sec",
    }
)
_NON_NEGATIVE_FLOATS = frozenset({"breaker_cooldown_sec"})
_STRINGS = frozenset({"intake_label", "intake_tracker", "intake_repository", "intake_agent"})
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
        settings = _apply(settings, _read_table(path), where=lambda k: f"{path}: [runner] {k}")
        if settings.repo is not None and not settings.repo.is_absolute():
            settings = replace(settings, repo=path.parent / settings.repo)  # relative to file
    env = os.environ if environ is None else environ
    settings = _apply(settings, _env_values(env), where=lambda k: ENV_PREFIX + k.upper())
    if settings.rate_limit_backoff_max_sec < settings.rate_limit_backoff_sec:
        raise ConfigurationError(
            "rate_limit_backoff_max_sec must not be smaller than rate_limit_backoff_sec "
            f"({settings.rate_limit_backoff_max_sec} < {settings.rate_limit_backoff_sec})"
        )
    return settings


def _read_table(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigurationError(f"{path}: the runner config file does not exist") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path}: not valid TOML: {exc}") from exc
    unknown_tables = sorted(set(data) - {"runner"})
    if unknown_tables:
        raise ConfigurationError(
            f"{path}: unknown table(s) {unknown_tables}; runner settings go in [runner]"
        )
    table = data.get("runner", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"{path}: [runner] must be a table")
    for key in table:
        if key not in _KEYS:
            raise ConfigurationError(f"{path}: [runner] {key}: unknown key{_suggest(key)}")
    return dict(table)


def _env_values(env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, value in env.items():
        if not name.startswith(ENV_PREFIX) or name == DIR_ENV:
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key not in _KEYS:
            raise ConfigurationError(f"{name}: unknown runner setting{_suggest(key, env=True)}")
        values[key] = value
    return values


def _suggest(key: str, *, env: bool = False) -> str:
    close = difflib.get_close_matches(key, _KEYS, n=1)
    if not close:
        return ""
    name = ENV_PREFIX + close[0].upper() if env else close[0]
    return f" (did you mean {name}?)"


def _apply(
    settings: RunnerSettings, values: Mapping[str, Any], *, where: Callable[[str], str]
) -> RunnerSettings:
    changes = {key: _coerce(key, value, where(key)) for key, value in values.items()}
    return replace(settings, **changes)


def _coerce(key: str, value: Any, where: str) -> Any:
    if key in _STRINGS:
        if not isinstance(value, str) or not value.strip():
            raise ConfigurationError(f"{where}: must be a non-empty string")
        return value.strip()
    if key == "session_command":
        return _command(value, where)
    if key == "repo":
        if not isinstance(value, str) or not value.strip():
            raise ConfigurationError(f"{where}: must be a non-empty path")
        return Path(value)
    if key in _INT_MINIMUM:
        number = _number(value, where, integer=True)
        minimum = _INT_MINIMUM[key]
        if number < minimum:
            raise ConfigurationError(f"{where}: must be at least {minimum}, got {value!r}")
        return int(number)
    number = _number(value, where, integer=False)
    if key in _POSITIVE_FLOATS and number <= 0:
        raise ConfigurationError(f"{where}: must be greater than 0, got {value!r}")
    if key in _NON_NEGATIVE_FLOATS and number < 0:
        raise ConfigurationError(f"{where}: must not be negative, got {value!r}")
    return float(number)


def _command(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            parts = shlex.split(value)
        except ValueError as exc:
            raise ConfigurationError(f"{where}: not a valid command line: {exc}") from exc
    elif isinstance(value, list) and all(isinstance(part, str) for part in value):
        parts = list(value)
    else:
        raise ConfigurationError(f"{where}: must be a command line or a list of strings")
    if not parts:
        raise ConfigurationError(f"{where}: must not be empty")
    return tuple(parts)


def _number(value: Any, where: str, *, integer: bool) -> float:
    kind = "a whole number" if integer else "a number"
    if isinstance(value, bool):
        raise ConfigurationError(f"{where}: must be {kind}, got {value!r}")
    if isinstance(value, int) or (isinstance(value, float) and not integer):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(int(value.strip())) if integer else float(value.strip())
        except ValueError as exc:
            raise ConfigurationError(f"{where}: must be {kind}, got {value!r}") from exc
    else:
        raise ConfigurationError(f"{where}: must be {kind}, got {value!r}")
    if number != number or number in (float("inf"), float("-inf")):
        raise ConfigurationError(f"{where}: must be a finite number, got {value!r}")
    return number
