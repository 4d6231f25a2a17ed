"""One exception root, split by who must act.

Outcomes of agents (failed, partial, spiral, blocked) are data, never exceptions.
These exceptions mean the library itself cannot go on:

- ``ConfigurationError``: the caller must fix an input (plan file, argument, setting).
- ``GitError``: the repository is in a state seawall refuses to touch, or git failed.
- ``StateError``: the session's state files are unreadable, or locked by another coordinator.
- ``TrackerError``: an issue tracker could not be reached or refused an operation
  (raised by adapters; ``file_carryover`` turns it into a result, never raises it).
- ``RunnerError``: an agent runner could not be started at all.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "DirtyWorkingTreeError",
    "GitError",
    "MissingExtraError",
    "PlanError",
    "RunnerError",
    "SeawallError",
    "SessionLockedError",
    "StateError",
    "TrackerError",
    "error_code",
    "extra_requirements",
    "install_hint",
]


class SeawallError(Exception):
    """Root of every exception seawall raises on purpose. ``hint``, when set, says what
    to do about it (the JSON error document carries it on its own)."""

    hint: str | None = None

    @property
    def code(self) -> str:
        """The error's kind, stable for scripts: its class name in kebab case without
        ``Error`` (``PlanError`` is ``plan``, ``MissingExtraError`` ``missing-extra``)."""
        return error_code(type(self).__name__)


def error_code(name: str) -> str:
    """``PlanError`` -> ``plan``; ``SessionLockedError`` -> ``session-locked``."""
    stem = name.removesuffix("Error") or name
    return "".join(f"-{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(stem))


class ConfigurationError(SeawallError, ValueError):
    """A caller mistake: a bad argument, setting or plan. The message says what to change."""


class PlanError(ConfigurationError):
    """A plan file is invalid. Names the file, and the line (and column), task and field
    when known; ``hint`` says what to do, when there is more to say than the message."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        task: str | None = None,
        field: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = path
        self.task = task
        self.field = field
        self.line = line
        self.column = column
        self.hint = hint
        where = []
        if path:
            where.append(_location(path, line, column))
        if task:
            where.append(f"task {task!r}")
        if field:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        text = f"{prefix}: {message}" if prefix else message
        if hint and hint not in message:
            text = f"{text} ({hint})"
        super().__init__(text)
        self.detail = message


def _location(path: str, line: int | None, column: int | None) -> str:
    if not line:
        return path
    return f"{path}:{line}:{column}" if column else f"{path}:{line}"


class MissingExtraError(ConfigurationError):
    """An optional dependency is not installed; the message carries the install command."""

    def __init__(self, *, package: str, extra: str, purpose: str) -> None:
        self.package = package
        self.extra = extra
        self.hint = install_hint(extra, package)
        super().__init__(
            f"{purpose} needs the {package!r} package, which is not installed. {self.hint}"
        )


def extra_requirements(extra: str) -> tuple[str, ...]:
    """The requirements seawall's ``extra`` adds (``mcp>=2.3,<3``), as the installed
    distribution declares them; empty when seawall is not installed as a distribution."""
    from importlib import metadata

    try:
        requires = metadata.requires("seawall") or []
    except metadata.PackageNotFoundError:
        return ()
    marker = f'extra == "{extra}"'
    return tuple(r.split(";")[0].strip() for r in requires if marker in r.replace("'", '"'))


def install_hint(extra: str, package: str) -> str:
    """An install line that works as written: seawall is not on the package index, so
    its extra is installed as the packages it names, or from a seawall checkout."""
    wanted = " ".join(f"'{r}'" for r in extra_requirements(extra)) or f"'{package}'"
    return (
        f"Install it with: pip install {wanted} "
        f"(or, from a seawall checkout: pip install '.[{extra}]')"
    )


class GitError(SeawallError):
    """git failed, or the repository is in a state seawall refuses to change."""


class DirtyWorkingTreeError(GitError):
    """The user's working tree has uncommitted changes that an operation would touch."""

    def __init__(self, message: str, *, paths: tuple[str, ...] = ()) -> None:
        self.paths = paths
        super().__init__(message)


class UserFilesInScopeError(DirtyWorkingTreeError):
    """Untracked files of the user's lie inside an in-place task's scope: an agent would
    overwrite them. ``tasks`` maps each path to the task whose scope covers it."""

    def __init__(self, message: str, *, tasks: dict[str, str]) -> None:
        self.tasks = tasks
        super().__init__(message, paths=tuple(sorted(tasks)))


class StateError(SeawallError):
    """The session's state files are missing, corrupt or of an unknown schema version."""


class SessionLockedError(StateError):
    """Another coordinator holds the session's lock."""


class TrackerError(SeawallError):
    """An issue tracker operation failed. Never carries a token in its message."""

    def __init__(self, message: str, *, tracker: str, operation: str, status: int | None = None):
        self.tracker = tracker
        self.operation = operation
        self.status = status
        super().__init__(f"{tracker}: {operation} failed: {message}")


class RunnerError(SeawallError):
    """An agent runner could not be started (missing executable, bad options)."""
