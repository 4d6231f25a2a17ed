"""The per-wave scope manifest: ``<repo>/.seawall/<session>/wave-<n>/scope.json``.

It binds a wave's scopes to one session: the session id, the wave number, the resolved
enforcement and isolation, each agent's allowed paths and workspace, and the command
policy. A manifest only ever applies to its own session: ``load_manifest`` refuses one
whose recorded session differs from the session asked for, or from the directory it
lives in (a manifest copied from another session).

Every write of a manifest also writes its SHA-256 digest beside it
(``scope.json.sha256``); seawall's runners pass the path and the digest to each agent
(``SEAWALL_MANIFEST``, ``SEAWALL_MANIFEST_SHA256``), and the hook checks the digest on
every call, so a manifest changed after it was written is refused.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from seawall.codec import JsonObject, from_data, to_data
from seawall.errors import ConfigurationError, StateError
from seawall.model import BreakerLimits, CommandPolicyConfig, Enforcement, Isolation, Wave
from seawall.runtime.files import atomic_write_text

__all__ = [
    "SCHEMA_VERSION",
    "AgentScope",
    "ManifestError",
    "ScopeManifest",
    "build_manifest",
    "close_manifest",
    "digest_path",
    "find_manifests",
    "load_manifest",
    "manifest_digest",
    "manifest_path",
    "validate_session_id",
    "write_manifest",
]

SCHEMA_VERSION = 2  # 1: agents as an object keyed by task id (still read)
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class ManifestError(StateError):
    """A scope manifest is missing, corrupt, of an unknown schema, or of another session."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentScope:
    """One agent's grants and the workspace they are relative to."""

    task_id: str
    paths: tuple[str, ...]
    workspace: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeManifest:
    """The scopes of one wave of one session."""

    session: str
    wave: int
    enforcement: Enforcement
    isolation: Isolation
    repo: str
    agents: tuple[AgentScope, ...]
    commands: CommandPolicyConfig = field(default_factory=CommandPolicyConfig)
    base: str | None = None  # the commit the wave started from (for checkpoints)
    limits: BreakerLimits = field(default_factory=BreakerLimits)  # the plan's, for hooks
    created: float = 0.0
    closed: float | None = None

    def agent(self, task_id: str) -> AgentScope | None:
        """The scope of ``task_id``, or None when the wave has no such agent."""
        return next((a for a in self.agents if a.task_id == task_id), None)

    def union_paths(self) -> tuple[str, ...]:
        """Every grant of the wave (used when the calling agent cannot be told apart)."""
        seen: dict[str, None] = {}
        for agent in self.agents:
            seen.update(dict.fromkeys(agent.paths))
        return tuple(seen)


def validate_session_id(session: str) -> str:
    """Return ``session`` when it is a safe single path segment; raise otherwise."""
    if not _SESSION_ID.fullmatch(session) or ".." in session:
        raise ConfigurationError(
            f"invalid session id {session!r}: use letters, digits, '.', '_' and '-'"
        )
    return session


def manifest_path(repo: Path, session: str, wave: int) -> Path:
    """Where the manifest of ``wave`` of ``session`` lives."""
    return Path(repo) / ".seawall" / validate_session_id(session) / f"wave-{wave}" / "scope.json"


def build_manifest(
    *,
    session: str,
    wave: Wave,
    repo: Path,
    workspaces: Mapping[str, Path] | None = None,
    commands: CommandPolicyConfig | None = None,
    base: str | None = None,
    limits: BreakerLimits | None = None,
) -> ScopeManifest:
    """The manifest for ``wave``: each task's scope, relative to its workspace.

    ``workspaces`` maps task ids to their worktrees; a task without one works in ``repo``.
    """
    workspaces = workspaces or {}
    agents = tuple(
        AgentScope(
            task_id=task.id,
            paths=task.scope,
            workspace=str(Path(workspaces.get(task.id, repo)).resolve()),
        )
        for task in wave.tasks
    )
    return ScopeManifest(
        session=validate_session_id(session),
        wave=wave.number,
        enforcement=wave.enforcement,
        isolation=wave.isolation,
        repo=str(Path(repo).resolve()),
        agents=agents,
        commands=commands or CommandPolicyConfig(),
        base=base,
        limits=limits or BreakerLimits(),
        created=round(time.time(), 3),
    )


def write_manifest(manifest: ScopeManifest) -> Path:
    """Write ``manifest`` and its digest atomically to their place; return the path."""
    path = manifest_path(Path(manifest.repo), manifest.session, manifest.wave)
    _write(path, manifest)
    return path


def close_manifest(path: Path) -> ScopeManifest:
    """Mark a wave's manifest finished, so hooks stop guessing it is the live one."""
    manifest = load_manifest(path)
    closed = replace(manifest, closed=round(time.time(), 3))
    _write(path, closed)
    return closed


def _write(path: Path, manifest: ScopeManifest) -> None:
    document = {"schema": SCHEMA_VERSION, **to_data(manifest)}
    data = (json.dumps(document, indent=2, sort_keys=True) + "\n").encode("utf-8")
    atomic_write_text(digest_path(path), hashlib.sha256(data).hexdigest() + "\n")
    atomic_write_text(path, data.decode("utf-8"))


def digest_path(path: Path) -> Path:
    """Where the digest of the manifest at ``path`` is kept."""
    return path.with_name(path.name + ".sha256")


def manifest_digest(path: Path) -> str:
    """The SHA-256 of the manifest file's bytes; raise ``ManifestError`` when unreadable."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise ManifestError(f"scope manifest {path} is unreadable: {exc}") from exc


def load_manifest(
    path: Path, *, session: str | None = None, digest: str | None = None
) -> ScopeManifest:
    """Read and validate a manifest; raise ``ManifestError`` when it cannot be trusted.

    With ``session`` given, a manifest of any other session is refused. With ``digest``
    given, a manifest whose bytes do not have that SHA-256 is refused; ``digest=""``
    checks the digest kept beside the manifest instead (refused when it is missing).
    """
    try:
        raw = Path(path).read_bytes()
        if digest is not None:
            _check_digest(path, raw, digest)
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError as exc:
        raise ManifestError(f"no scope manifest at {path}") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(f"scope manifest {path} is unreadable: {exc}") from exc
    manifest = _parse(data, path)
    if manifest.session != path.parent.parent.name:
        raise ManifestError(
            f"scope manifest {path} names session {manifest.session!r} but lives in "
            f"{path.parent.parent.name!r}"
        )
    if session is not None and manifest.session != session:
        raise ManifestError(f"scope manifest {path} belongs to session {manifest.session!r}")
    return manifest


def _check_digest(path: Path, raw: bytes, digest: str) -> None:
    expected = digest.strip().lower()
    if not expected:
        try:
            expected = digest_path(path).read_text(encoding="utf-8").strip().lower()
        except OSError as exc:
            raise ManifestError(f"scope manifest {path} has no digest beside it: {exc}") from exc
    if hashlib.sha256(raw).hexdigest() != expected:
        raise ManifestError(f"scope manifest {path} changed after seawall wrote it")


def find_manifests(repo: Path, session: str | None = None) -> list[Path]:
    """Manifest files under ``repo`` (of ``session`` only, when given), newest wave first."""
    root = Path(repo) / ".seawall"
    pattern = (
        f"{validate_session_id(session)}/wave-*/scope.json" if session else "*/wave-*/scope.json"
    )
    found: list[tuple[float, int, Path]] = []
    for path in root.glob(pattern):
        try:
            number = int(path.parent.name.removeprefix("wave-"))
            found.append((path.stat().st_mtime, number, path))
        except (ValueError, OSError):
            continue
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [path for _, _, path in found]


def _parse(data: object, path: Path) -> ScopeManifest:
    if not isinstance(data, dict):
        raise ManifestError(f"scope manifest {path} is not a JSON object")
    schema = data.pop("schema", None)
    if schema == 1:
        data = _from_schema_1(data, path)
    elif schema != SCHEMA_VERSION:
        raise ManifestError(
            f"scope manifest {path} has unknown schema {schema!r} "
            f"(this seawall reads 1 and {SCHEMA_VERSION})"
        )
    try:
        manifest = from_data(data, ScopeManifest)
        validate_session_id(manifest.session)
    except (TypeError, ValueError, ConfigurationError) as exc:
        # msgspec's ValidationError is a ValueError and names the field (``$.agents[0]``)
        raise ManifestError(f"scope manifest {path} is invalid: {exc}") from exc
    return manifest


def _from_schema_1(data: JsonObject, path: Path) -> JsonObject:
    """A schema-1 manifest (agents as an object keyed by task id) in today's shape."""
    agents = data.get("agents")
    if not isinstance(agents, dict):
        raise ManifestError(f"scope manifest {path} is invalid: `agents` is not an object")
    listed = [
        {**entry, "task_id": task_id} if isinstance(entry, dict) else entry
        for task_id, entry in agents.items()
    ]
    return {**data, "agents": listed}
