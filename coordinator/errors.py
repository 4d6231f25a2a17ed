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
    "extra_requirement",
]


class SeawallError(Exception):
    """Root of every exception seawall raises on purpose."""


class ConfigurationError(SeawallError, ValueError):
    """A caller mistake: a bad argument, setting or plan. The message says what to change."""


class PlanError(ConfigurationError):
    """A plan file is invalid. Names the file, and the line, task and field when known."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        task: str | None = None,
        field: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.path = path
        self.task = task
        self.field = field
        self.line = line
        self.column = column
        where = []
        if path:
            spot = f":{line}:{column}" if line and column else f":{line}" if line else ""
            where.append(f"{path}{spot}")
        if task:
            where.append(f"task {task!r}")
        if field:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.detail = message


class MissingExtraError(ConfigurationError):
    """An optional dependency is not installed; the message carries the install command."""

    def __init__(self, *, package: str, extra: str, purpose: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{purpose} needs the {package!r} package, which is not installed. "
            f"Install it with: pip install '{extra_requirement(extra, package)}' "
            f"(seawall's {extra!r} extra; from a seawall checkout: pip install '.[{extra}]')"
        )


class GitError(SeawallError):
    """git failed, or the repository is in a state seawall refuses to change."""


class DirtyWorkingTreeError(GitError):
    """The user's working tree has uncommitted changes that an operation would touch."""

    def __init__(self, message: str, *, paths: tuple[str, ...] = ()) -> None:
        self.paths = paths
        super().__init__(message)


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


def extra_requirement(extra: str, package: str) -> str:
    """The requirement seawall's ``extra`` names (``PyGithub>=2.3``), read from the
    installed distribution's metadata; ``package`` when it cannot be read."""
    from importlib import metadata

    try:
        requires = metadata.requires("seawall") or []
    except metadata.PackageNotFoundError:
        return package
    for line in requires:
        spec, _, marker = line.partition(";")
        if f'extra == "{extra}"' in marker.replace("'", '"'):
            return spec.strip()
    return package
