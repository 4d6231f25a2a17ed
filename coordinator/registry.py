"""A lazy name registry for adapters, open to third parties through entry points.

Pass adapter instances to the library directly; names are a convenience for the CLI
and plan files. Built-in names resolve without installed metadata (a source checkout);
third-party packages add theirs under the entry-point groups ``seawall.trackers`` and
``seawall.runners``.

Every way a name can fail to resolve is an ``AdapterError`` that names the entry point
(``seawall.trackers:forgejo = forgejo_tracker:ForgejoTracker``), the distribution that
declares it and the cause: an unknown name (with "did you mean"), a module that does not
import, a missing attribute, an object that is not an adapter class, an abstract method
left unimplemented, or a third-party name that collides with a built-in one.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any

from seawall.config.fields import suggest
from seawall.errors import ConfigurationError, MissingExtraError, SeawallError

__all__ = [
    "RUNNER_GROUP",
    "TRACKER_GROUP",
    "AdapterEntry",
    "AdapterError",
    "available",
    "build",
    "entries",
    "entry",
    "load",
    "resolve",
]

TRACKER_GROUP = "seawall.trackers"
RUNNER_GROUP = "seawall.runners"
_OWN_DISTRIBUTION = "seawall"
_BASES = MappingProxyType(
    {
        TRACKER_GROUP: "seawall.tracker:IssueTracker",
        RUNNER_GROUP: "seawall.runner:AgentRunner",
    }
)

_BUILTIN = MappingProxyType(
    {
        TRACKER_GROUP: MappingProxyType(
            {
                "local": "seawall.adapters.trackers.local:LocalTracker",
                "memory": "seawall.adapters.trackers.memory:MemoryTracker",
                "github": "seawall.adapters.trackers.github:GitHubTracker",
                "gitlab": "seawall.adapters.trackers.gitlab:GitLabTracker",
            }
        ),
        RUNNER_GROUP: MappingProxyType(
            {
                "callable": "seawall.adapters.runners.callable:CallableRunner",
                "scripted": "seawall.adapters.runners.scripted:ScriptedRunner",
                "command": "seawall.adapters.runners.command:CommandRunner",
                "claude-code": "seawall.adapters.runners.claude_code:ClaudeCodeRunner",
                "codex": "seawall.adapters.runners.codex:CodexRunner",
                "opencode": "seawall.adapters.runners.opencode:OpenCodeRunner",
                "gemini": "seawall.adapters.runners.gemini:GeminiRunner",
                "ray": "seawall.adapters.runners.ray:RayRunner",
            }
        ),
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterEntry:
    """One name of a group: where it points and which distribution declares it.

    ``collides_with`` is set on a third-party entry whose name is already a built-in
    one; such an entry never resolves.
    """

    group: str
    name: str
    target: str
    package: str
    version: str
    builtin: bool
    collides_with: str | None = None

    @property
    def kind(self) -> str:
        """``tracker`` or ``runner``."""
        return _kind(self.group)

    @property
    def where(self) -> str:
        """The entry point and its package, as errors name them."""
        return f"entry point {self.group}:{self.name} = {self.target} (package {self.source})"

    @property
    def source(self) -> str:
        return f"{self.package} {self.version}"


class AdapterError(ConfigurationError):
    """An adapter name does not resolve to a usable adapter class.

    ``entry`` is the entry point that failed (None for an unknown name); ``cause`` says
    what went wrong in one line.
    """

    def __init__(self, message: str, *, entry: AdapterEntry | None, cause: str) -> None:
        self.entry = entry
        self.cause = cause
        super().__init__(message)


def _kind(group: str) -> str:
    return group.rsplit(".", 1)[-1].removesuffix("s")


def _own_version() -> str:
    from seawall.version import __version__

    return __version__


def entries(group: str) -> list[AdapterEntry]:
    """Every entry of ``group``: the built-ins, then third-party entries by name.

    A third-party entry named like a built-in is listed with ``collides_with`` set.
    """
    own = _own_version()
    builtin: Mapping[str, str] = _BUILTIN.get(group, {})
    found = [
        AdapterEntry(
            group=group, name=name, target=target, package="seawall", version=own, builtin=True
        )
        for name, target in builtin.items()
    ]
    seen: set[tuple[str, str]] = set()
    for point in sorted(entry_points(group=group), key=lambda p: p.name):
        dist = getattr(point, "dist", None)
        package = str(dist.name) if dist is not None else "unknown"
        if package.lower().replace("_", "-") == _OWN_DISTRIBUTION:
            continue  # seawall's own declaration of its built-ins
        if (point.name, point.value) in seen:
            continue  # the same distribution seen twice on sys.path
        seen.add((point.name, point.value))
        found.append(
            AdapterEntry(
                group=group,
                name=point.name,
                target=point.value,
                package=package,
                version=str(dist.version) if dist is not None else "unknown",
                builtin=False,
                collides_with=point.name if point.name in builtin else None,
            )
        )
    return found


def available(group: str) -> tuple[str, ...]:
    """The names that resolve in ``group`` (colliding third-party names excluded), sorted."""
    return tuple(sorted({e.name for e in entries(group) if e.collides_with is None}))


def resolve(group: str, name: str) -> object:
    """Import and return the adapter class registered as ``name`` in ``group``.

    The class is checked against the group's port (``IssueTracker`` or ``AgentRunner``):
    it must subclass it and implement every abstract method. Raises ``AdapterError``
    naming the entry point, its package and the cause; an adapter whose optional SDK
    is missing raises its own ``MissingExtraError`` (with the install command).
    """
    return load(entry(group, name))


def entry(group: str, name: str, known: list[AdapterEntry] | None = None) -> AdapterEntry:
    """The entry ``name`` of ``group``; an ``AdapterError`` for an unknown or colliding name."""
    known = entries(group) if known is None else known
    colliding = [e for e in known if e.name == name and e.collides_with]
    if colliding:
        found = colliding[0]
        raise AdapterError(
            f"{found.where} uses the name of the built-in {found.kind} {name!r}; a third-party "
            f"adapter needs a name of its own (rename the entry point in {found.package})",
            entry=found,
            cause="name collides with a built-in",
        )
    matches = [e for e in known if e.name == name]
    if not matches:
        names = sorted({e.name for e in known if e.collides_with is None})
        hint = suggest(name, names)
        kind = _kind(group)
        raise AdapterError(
            f"unknown {kind} {name!r}{hint} (known: {', '.join(names) or 'none'}; third-party "
            f"{kind}s register under the entry-point group {group!r})",
            entry=None,
            cause="unknown name",
        )
    return matches[0]


def build(group: str, name: str, construct: Callable[[Any], object]) -> object:
    """Resolve ``name`` and construct the adapter with ``construct(cls)``.

    Any failure of the constructor is an ``AdapterError`` naming the entry point and its
    package; a missing optional SDK stays a ``MissingExtraError``.
    """
    found = entry(group, name)
    cls = load(found)
    assert isinstance(cls, type)  # load checked it
    try:
        return construct(cls)
    except (MissingExtraError, AdapterError):
        raise
    except SeawallError as exc:
        raise AdapterError(
            f"{found.kind} {name!r}: {exc} ({found.where})", entry=found, cause=str(exc)
        ) from exc
    except Exception as exc:  # a third party's constructor may raise anything
        cause = f"{cls.__name__} could not be constructed: {type(exc).__name__}: {exc}"
        raise _error(found, cause) from exc


def load(item: AdapterEntry) -> object:
    """Import ``item``'s target and check it is a concrete adapter class of its group."""
    module_name, _, attribute = item.target.partition(":")
    try:
        module = importlib.import_module(module_name.strip())
    except MissingExtraError:
        raise
    except ModuleNotFoundError as exc:
        missing = exc.name or module_name
        cause = (
            f"module {module_name!r} is not installed"
            if missing == module_name.strip()
            else f"importing {module_name!r} failed: no module named {missing!r}"
        )
        raise _error(item, cause) from exc
    except Exception as exc:  # any failure inside a third party's module
        raise _error(item, f"importing {module_name!r} raised {type(exc).__name__}: {exc}") from exc
    target: object = module
    for part in filter(None, attribute.strip().split(".")):
        try:
            target = getattr(target, part)
        except AttributeError as exc:
            raise _error(item, f"module {module_name!r} has no attribute {part!r}") from exc
    _check_class(item, target)
    return target


def _check_class(item: AdapterEntry, target: object) -> None:
    base_module, _, base_name = _BASES.get(item.group, "").partition(":")
    if not base_module:
        return
    base = getattr(importlib.import_module(base_module), base_name)
    if not (isinstance(target, type) and issubclass(target, base)):
        raise _error(item, f"{target!r} is not a subclass of {base.__module__}.{base_name}")
    if inspect.isabstract(target):
        missing = ", ".join(sorted(getattr(target, "__abstractmethods__", ())))
        raise _error(item, f"{target.__name__} does not implement the abstract method(s) {missing}")


def _error(item: AdapterEntry, cause: str) -> AdapterError:
    return AdapterError(
        f"{item.kind} {item.name!r} cannot be loaded: {cause} ({item.where})",
        entry=item,
        cause=cause,
    )
